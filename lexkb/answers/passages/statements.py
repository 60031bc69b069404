"""Sentences of a paragraph, with what each obliges, forbids or allows, and what it is about.

The verifiers compare statements, not paragraphs: a paragraph that both requires a report and
forbids a disclosure holds no contradiction, but "must report within 72 hours" against "must
report within 48 hours" does. A `Statement` is one sentence (or one list item), its character
span in the paragraph, its modal clauses with the actions they govern, and its topic terms (stemmed content words, without modal
verbs and numbers, so "shall notify within 72 hours" and "need not notify" share a topic).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from lexkb.answers.passages.quantities import Quantity, find_quantities
from lexkb.core.text.tokenize import tokenize

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
# Words between a modal and its verb that are not the verb.
_NOT_ACTIONS = set(
    tokenize(
        "shall must may can cannot need also promptly immediately further hereby either fully "
        "therefore thereafter only reasonably still forthwith duly"
    )
)
# Pairs of modalities that cannot both hold of one action.
OPPOSED = {
    frozenset({"obligation", "prohibition"}),
    frozenset({"obligation", "exemption"}),
    frozenset({"permission", "prohibition"}),
}


@dataclass(frozen=True)
class Modal:
    """One modal clause: what it does (obligation, prohibition, exemption, permission), the
    words that say so ("shall not") and the stemmed verb they govern ("disclos")."""

    kind: str
    words: str
    action: str | None


@dataclass(frozen=True)
class Statement:
    start: int
    end: int
    text: str
    modals: tuple[Modal, ...]  # each modal clause, in reading order
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


def modals(sentence: str) -> tuple[Modal, ...]:
    """Every modal clause of the sentence. The most specific reading of a span wins ("shall
    not" is a prohibition, not also an obligation), and each clause's action is the first
    content word after its modal words, stemmed, past auxiliaries and adverbs ("shall not be
    promptly returned" -> "return")."""
    found: list[tuple[int, Modal]] = []
    taken: list[tuple[int, int]] = []
    for name, pattern in _MODALITY_RES:
        for match in pattern.finditer(sentence):
            start, end = match.span()
            if any(a < end and start < b for a, b in taken):
                continue
            taken.append((start, end))
            following = tokenize(sentence[end : end + 80])
            action = next((t for t in following if t not in _NOT_ACTIONS), None)
            found.append((start, Modal(name, match.group(0), action)))
    return tuple(modal for _, modal in sorted(found, key=lambda item: item[0]))


def topic_terms(text: str) -> frozenset[str]:
    return frozenset(
        t for t in tokenize(text) if t not in _MODAL_TERMS and not t[0].isdigit() and len(t) > 2
    )


@lru_cache(maxsize=4096)
def statements(text: str) -> tuple[Statement, ...]:
    found = []
    for start, end in split_sentences(text):
        sentence = text[start:end]

        quantities = tuple(
            Quantity(q.kind, q.key, q.start + start, q.end + start, q.text)
            for q in find_quantities(sentence)
        )
        found.append(
            Statement(start, end, sentence, modals(sentence), topic_terms(sentence), quantities)
        )
    return tuple(found)


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Shared topic terms over the smaller topic: 1.0 when one statement's topic is inside the
    other's."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))
