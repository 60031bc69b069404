"""Answers that are a date, a name, the parties or the governing law, not a sentence.

"What is the effective date?" is answered by "May 8, 2014", and "Who are the parties?" by the
parties' names: a sentence that holds them makes the reader find the answer again. extract asks
this module first. A date is cut from the best sentences that hold one; a document's title and
parties come from its catalog entry (the parties as its preamble names them, transforms.structure.contracts)
and are returned only where its text says them, at that place. Anything not found in the text is
not returned.
"""

from __future__ import annotations

import re

from lexkb.results import Hit

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
DATE = re.compile(
    rf"(?i)\b(?:{_DAY}\s+day\s+of\s+{_MONTH},?\s+\d{{4}}"
    rf"|{_MONTH}\s+{_DAY},?\s+\d{{4}}"
    rf"|{_DAY}\s+{_MONTH},?\s+\d{{4}}"
    r"|\d{1,2}/\d{1,2}/\d{2,4}"
    r"|\d{4}-\d{2}-\d{2}"
    rf"|{_MONTH},?\s+\d{{4}})\b"
)
_ASKS_DATE = re.compile(r"(?i)\b(?:date|when)\b")
# The document's own date (its date, when it takes effect): written at its head, in the preamble.
_ASKS_OWN_DATE = re.compile(
    r"(?i)\bdate\s+of\s+(?:the|this)\s+(?:contract|agreement|document)\b"
    r"|\beffective\s+date\b|\b(?:contract|agreement)\s+(?:is|becomes)\s+effective\b"
)
# Who the parties are, not a question that mentions parties ("exclusivity with the other party").
_ASKS_PARTIES = re.compile(
    r"(?i)\bwho\s+(?:are|is|were)\s+the\s+part(?:y|ies)\b"
    r"|\bparties\s+(?:who|that)\s+(?:signed|entered|executed)\b"
    r"|\bnames?\s+of\s+the\s+parties\b"
)
# Which law governs, not a question that mentions law ("comply with applicable law").
_ASKS_LAW = re.compile(
    r"(?i)\bgoverning\s+law\b|\blaws?\s+(?:that\s+|which\s+)?governs?\b"
    r"|\bgoverned\s+by\s+(?:the\s+laws?\s+of\s+)?(?:which|what)\b"
    r"|\b(?:which|what)\s+(?:state|country|jurisdiction)(?:'s)?\s+laws?\b|\bchoice\s+of\s+law\b"
)
_ASKS_TITLE = re.compile(
    r"(?i)\b(?:name|title)\s+of\s+(?:the|this)\s+(?:contract|agreement|document)\b"
)


def kind_asked(question: str) -> str | None:
    """What the question asks for: "title", "parties", "governing law", "own date" (the
    document's own date, written at its head) or "date"; None for anything else."""
    if _ASKS_TITLE.search(question):
        return "title"
    if _ASKS_LAW.search(question):
        return "governing law"
    if _ASKS_PARTIES.search(question):
        return "parties"
    if _ASKS_OWN_DATE.search(question):
        return "own date"
    if _ASKS_DATE.search(question):
        return "date"
    return None


# A contract's name as its head writes it: "DISTRIBUTOR AGREEMENT", "Master Services Agreement".
TITLE_PHRASE = re.compile(
    r"\b(?:[A-Z][A-Z0-9&\-]*\s+){0,6}(?:AGREEMENT|CONTRACT)\b"
    r"|\b(?:[A-Z][a-z0-9&\-]*\s+){1,6}(?:Agreement|Contract)\b"
)


def title_in(hits: list[Hit]) -> tuple[Hit, int, int] | None:
    """The first contract name written in the reading order of `hits`."""
    for hit in hits:
        match = TITLE_PHRASE.search(hit.text)
        if match:
            return hit, match.start(), match.end()
    return None


def date_in(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The first date written in text[start:end], as offsets in `text`."""
    match = DATE.search(text, start, end)
    return match.span() if match else None


def said_in(hits: list[Hit], phrase: str) -> tuple[Hit, int, int] | None:
    """Where the reading order of `hits` first says `phrase` (any case, any spacing)."""
    words = phrase.split()
    if not words:
        return None
    pattern = re.compile(r"(?i)(?<!\w)" + r"\s+".join(map(re.escape, words)) + r"(?!\w)")
    for hit in hits:
        match = pattern.search(hit.text)
        if match:
            return hit, match.start(), match.end()
    return None
