"""The law a contract chooses: its governing-law clause, and the place it names.

One reading for the build, which records the place in a contract's `governing_law`
(transforms.structure.document), and for `extract`, which cuts that place from the clause that
chooses it (lexkb.answers.extract): both take the same sentence as the clause.
"""

from __future__ import annotations

import re

# The clause that chooses the law: "governed by and construed in accordance with the laws of the
# State of New York", "the laws of England and Wales shall govern", "subject to the law of
# Ontario". The jurisdiction runs to the first word that is not part of a place's name.
CHOOSES_LAW = re.compile(
    r"\b(?:govern(?:ed|s|ing)?|constru(?:ed|e)|interpret(?:ed)?|enforced|subject\s+to)\b[^.;]{0,120}?"
    r"\blaws?\s+(?:in\s+force\s+in\s+|of\s+|applicable\s+in\s+)",
    re.IGNORECASE,
)
# A place's name as the clause writes it, after the laws "of": "the State of New York", "the
# Commonwealth of Massachusetts", "England and Wales", "the People's Republic of China", "Hong
# Kong SAR". Lower-case words other than these joiners end it.
_PLACE = re.compile(
    r"(?i:the\s+)?(?i:(?:State|Commonwealth|Province|Republic|Kingdom|Canton|Emirate|Territory)"
    r"\s+of\s+(?:the\s+)?)?"
    r"((?:[A-Z][\w'’.-]*)(?:\s+(?:and|of|the|de|du|del|da)?\s*[A-Z][\w'’.-]*){0,5})"
)
# Words that are no place however they are set: the clause's own nouns in capitals.
_NOT_PLACES = {"The", "This", "Agreement", "Company", "Party", "Parties", "Laws", "Law"}


def governing_law(texts: list[str]) -> str | None:
    """The jurisdiction whose law the contract chooses ("New York", "England and Wales"), from
    the first clause that says its law governs; None where no clause does. A "State of" or
    "Commonwealth of" before the name is no part of it: people name the law by the place."""
    # A plain-text contract's lines are elements of their own: the clause runs over several.
    text = " ".join(texts)
    for cue in CHOOSES_LAW.finditer(text):
        place = _PLACE.match(text, cue.end())
        if place is None:
            continue
        name = re.sub(r"\s+(?:and|of|the)$", "", place.group(1).rstrip(".,;: ")).strip()
        if name and name.split()[0] not in _NOT_PLACES:
            return name
    return None
