"""How a unit is cited, family by family: the document's short name, then the unit as its kind.

A unit's ref is stored as the document prints its label ("7(1)", "B34", "Section 4.2"): that is
what lookups compare. People cite it by the name the document goes by and the kind of unit it
is: "Bribery Act 2010, section 7(1)", "IFRS 16, paragraph B34", "17 U.S.C. § 107",
"Non-Disclosure Agreement, clause 4.2". The kind follows the document's type (inferred by the
build from how its family titles it, or set by the catalog); a ref that names its kind itself
("Article 6(1)", "§ 107", "Schedule 1, paragraph 13") is cited as it stands.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

# The word each document type's numbered units are cited by.
UNIT_WORDS = {
    "act": "section",
    "code": "section",
    "policy": "section",
    "standard": "paragraph",
    "contract": "clause",
    "rulebook": "rule",
}
# A unit placed only by its position ("p. 27 ¶ 9", "¶ 2"): no number of the document's own.
POSITIONAL = re.compile(r"^(?:p\.\s*\d+\s*)?¶\s*\d+$")
# A ref that is a bare label: "7(1)", "4.3.1", a margin number "B34", "C1A".
_BARE = re.compile(r"^[A-Z]{0,2}\d")
# How a contract refers to its own units in its text: "clause 2", "Section 12.1", "Article 5".
_OWN_UNIT = re.compile(r"\b(clause|section|article)s?\s+\d", re.IGNORECASE)
# The word the build gives a contract's numbered clauses (transforms.structure.contract_lines).
_CONTRACT_WORD = "Section "


def unit_word(document_type: str | None, texts: Iterable[str] = ()) -> str | None:
    """The word a document's numbered units are cited by. A contract's is the one its own text
    refers to its units by ("as provided in clause 2"; "Section 12.1" in another), clause
    where it never does."""
    kind = (document_type or "").casefold()
    if kind != "contract":
        return UNIT_WORDS.get(kind)
    said = Counter(m.group(1).casefold() for text in texts for m in _OWN_UNIT.finditer(text))
    return said.most_common(1)[0][0] if said else UNIT_WORDS["contract"]


def cited_ref(ref: str | None, word: str | None) -> str | None:
    """`ref` as people cite it given its document's unit word: "7(1)" -> "section 7(1)", "B34"
    -> "paragraph B34", a contract's "Section 4.2" -> "clause 4.2"; a ref naming its kind, or
    placed by position, as it stands."""
    if not ref or not word:
        return ref
    if ref.startswith(_CONTRACT_WORD) and word != "section":
        return f"{word} {ref[len(_CONTRACT_WORD) :]}"
    return f"{word} {ref}" if _BARE.match(ref) else ref


def citation(name: str, reference: str | None, page: int | None) -> str:
    """What a person writes in a footnote: the document's short name and the unit as cited
    ("DORA, Article 19(4)"; "17 U.S.C. § 107", as the Code is cited), the page only for a
    paragraph with no reference of its own."""
    if reference:
        return f"{name} {reference}" if name.endswith("U.S.C.") else f"{name}, {reference}"
    return f"{name}, p. {page}" if page is not None else name


# The kind a reference names its unit by, as it opens: "clause 4.2", "s. 7", "§ 107", "para 8".
_ASKED_KIND = re.compile(
    r"^\s*(?:(clauses?|cl\.?)|(sections?|secs?\.?|ss?\.|§+)|(paragraphs?|paras?\.?)|(rules?|r\.))"
    r"\s*(?=\d|[A-Z]{1,2}\d)",
    re.IGNORECASE,
)
_KINDS = ("clause", "section", "paragraph", "rule")


def asked_kind(reference: str) -> str | None:
    """The kind of unit a reference opens by naming ("clause 4.2" -> "clause"), or None."""
    found = _ASKED_KIND.match(reference)
    return (
        next((k for k, g in zip(_KINDS, found.groups(), strict=True) if g), None) if found else None
    )


def fits(word: str | None, kind: str | None) -> bool:
    """A document whose units are cited by `word` may hold a unit asked for as `kind`: "clause
    4.2" is no section of an Act. A contract's clauses are also called sections (the build
    stores them so), and a document of no known type may hold anything."""
    return word is None or kind is None or kind == word or (word, kind) == ("clause", "section")
