"""Sentences of a paragraph, with what each obliges, forbids or allows, and what it is about.

The verifiers compare statements, not paragraphs: a paragraph that both requires a report and
forbids a disclosure holds no contradiction, but "must report within 72 hours" against "must
report within 48 hours" does. A `Statement` is one sentence (or one list item), its character
span in the paragraph, its modality and its topic terms (stemmed content words, without modal
verbs and numbers, so "shall notify within 72 hours" and "need not notify" share a topic).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from lexkb.answers.quantities import Quantity, find_quantities
from lexkb.tokenize import tokenize

# Sentence ends: a full stop, semicolon or colon before a capital, bracket or list marker; or a
# line break. Abbreviations common in legal text ("Art.", "No.", "para.", "e.g.") do not end one.
_END = re.compile(r"(?<=[.;:!?])\s+(?=[(\[A-Z0-9\"“])|\n+")
_ABBREVIATION = re.compile(
    r"\b(?:art|arts|no|nos|para|paras|e\.g|i\.e|cf|sec|s|p|pp|vs|etc)\.$", re.I
)

# Modalities, most specific first: "shall not" must be read before "shall".
_MODALITIES = [
    ("exemption", r"\b(?:need not|does not need to|do not need to|is not required to|are not required to|shall not be required to|is not obliged to|are not obliged to|is exempt(?:ed)? from|are exempt(?:ed)? from|not obliged to)\b"),
    ("prohibition", r"\b(?:shall not|must not|may not|cannot|can ?not|is prohibited from|are prohibited from|is not permitted to|are not permitted to|is not allowed to|are not allowed to|prohibited|forbidden|no (?:person|firm|one) (?:shall|may))\b"),
    ("obligation", r"\b(?:shall|must|is required to|are required to|is obliged to|are obliged to|is obligated to|are obligated to|has to|have to|required|mandatory)\b"),
    ("permission", r"\b(?:may|is permitted to|are permitted to|is allowed to|are allowed to|is entitled to|are entitled to|can)\b"),
]  # fmt: skip
_MODALITY_RES = [(name, re.compile(pattern, re.I)) for name, pattern in _MODALITIES]
_MODAL_TERMS = {"shall", "must", "may", "need", "requir", "oblig", "prohibit", "permit", "allow",
                "entitl", "can", "cannot", "forbidden", "mandatori", "exempt"}  # fmt: skip
# Pairs of modalities that cannot both hold of one action.
OPPOSED = {
    frozenset({"obligation", "prohibition"}),
    frozenset({"obligation", "exemption"}),
    frozenset({"permission", "prohibition"}),
}


@dataclass(frozen=True)
class Statement:
    start: int
    end: int
    text: str
    modality: str | None  # obligation, prohibition, exemption, permission or None
    modal_words: str | None  # the words that state it ("shall not")
    topic: frozenset[str]
    quantities: tuple[Quantity, ...]


def split_sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence or line of `text`, stripped."""
    spans, start = [], 0
    for match in _END.finditer(text):
        if _ABBREVIATION.search(text[start : match.start()]):
            continue
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    out = []
    for a, b in spans:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            out.append((a, b))
    return out


def modality(sentence: str) -> tuple[str | None, str | None]:
    """What the sentence does to its subject's action, and the words that say so."""
    for name, pattern in _MODALITY_RES:
        if match := pattern.search(sentence):
            return name, match.group(0)
    return None, None


def topic_terms(text: str) -> frozenset[str]:
    return frozenset(
        t for t in tokenize(text) if t not in _MODAL_TERMS and not t[0].isdigit() and len(t) > 2
    )


@lru_cache(maxsize=4096)
def statements(text: str) -> tuple[Statement, ...]:
    found = []
    for start, end in split_sentences(text):
        sentence = text[start:end]
        kind, words = modality(sentence)
        quantities = tuple(
            Quantity(q.kind, q.key, q.start + start, q.end + start, q.text)
            for q in find_quantities(sentence)
        )
        found.append(
            Statement(start, end, sentence, kind, words, topic_terms(sentence), quantities)
        )
    return tuple(found)


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Shared topic terms over the smaller topic: 1.0 when one statement's topic is inside the
    other's."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))
