"""Which documents a question names: "Under DORA, ...", "in the consulting agreement", "IFRS 16".

People ask about a document by any of its names (lexkb.tables.document_aliases: its title, short
name, popular name, code, key). A question that names one wants that document's answer first,
whatever another document says in closer words, so search ranks the named documents' hits
ahead of the rest (lexkb.search).

A name is found as a run of the question's words whose alias key (case, spaces, dots and dashes
aside) is a document's alias. A one-word name counts only where the question writes it as an
acronym or a code ("DORA", "NDA", "usc17"): a one-word alias that is an ordinary word ("Leases",
"Agreement", "Title", "17") names a document no more than the word does in running text.
"""

from __future__ import annotations

import re

from lexkb.tables import alias_key

MAX_NAME_WORDS = 8
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9()./'’§-]*")


def _acronym_or_code(word: str) -> bool:
    letters = [c for c in word if c.isalpha()]
    has_digit = any(c.isdigit() for c in word)
    return bool(letters) and (
        (len(letters) >= 2 and all(c.isupper() for c in letters)) or has_digit
    )


def named_documents(query: str, aliases: dict[str, str]) -> list[str]:
    """The ids of the documents `query` names, in the order it names them."""
    words = [re.sub(r"['’]s$", "", w).strip(".,;:()") for w in _WORD.findall(query)]
    found: list[str] = []
    for start in range(len(words)):
        for end in range(min(len(words), start + MAX_NAME_WORDS), start, -1):
            run = words[start:end]
            if len(run) == 1 and not _acronym_or_code(run[0]):
                continue
            doc_id = aliases.get(alias_key(" ".join(run)))
            if doc_id is not None:
                if doc_id not in found:
                    found.append(doc_id)
                break
    return found
