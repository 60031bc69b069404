"""check_contradictions: statements that conflict on the same subject.

Two statements conflict when their topics overlap (lexkb.answers.passages.statements.overlap at least
TOPIC_OVERLAP) and either their modalities are opposed on the same action (an obligation against
a prohibition or an exemption, a permission against a prohibition: "must keep" against "need not
keep"; "shall not disclose" against "shall be identified" is no conflict), or they state the
same kind of quantity in the same unit with different values ("within 72 hours" against
"within 48 hours", "USD 5,000" against "USD 10,000"). Each conflict names the words in conflict.

These rules read wording, not meaning: two paragraphs where one is the exception to the other
("must ... unless", "need not ... where") are reported too, for a person or a model to judge.

A claim checked against paragraphs is also read by the support model trained here
(lexkb.answers.passages.model_reading) where no rule fires: a sentence it reads as contradicting the
claim (CONTRADICT_AT, while no sentence of the paragraph states it) is a conflict of kind
`meaning`, with the model's probability as `confidence`. Two paragraphs are compared by the rules
alone: the model was trained to read a claim against a contract's spans, not one rule against
another.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Any

from lexkb import limits as check
from lexkb.answers.index_view import IndexView
from lexkb.answers.passages.injection import trusted_text
from lexkb.answers.passages.model_reading import CONTRADICT_AT, ENTAIL_AT, Reading, read_claim
from lexkb.answers.passages.quantities import Quantity
from lexkb.answers.passages.source_hits import source_hits
from lexkb.answers.passages.statements import OPPOSED, Statement, overlap, statements, topic_terms
from lexkb.core.text.tokenize import tokenize
from lexkb.core.vocabulary import Decider
from lexkb.results import Hit

# Chosen so that sentences about the same duty meet and sentences that merely share a word or
# two ("the Authority", "a firm") do not.
TOPIC_OVERLAP = 0.5
_MIN_TOPIC_TERMS = 2


@dataclass(frozen=True)
class Conflict:
    kind: str  # modality, a quantity's kind (period, amount, percent, date, number) or meaning
    first: str  # chunk id, or "claim N"
    second: str
    first_sentence: str
    second_sentence: str
    words: list[str]  # the words in conflict, first's then second's (none for `meaning`)
    shared_topic: list[str]
    decided_by: Decider = Decider.RULE
    confidence: float | None = None  # the support model's probability, for `meaning`


@dataclass(frozen=True)
class ContradictionCheck:
    count: int
    passed: bool
    conflicts: list[Conflict]
    unknown_sources: list[str] = field(default_factory=list)
    snapshot_version: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _unit(key: str) -> str:
    """The quantity's kind and unit without its value ("period:day", "amount:USD")."""
    kind, _, value = key.partition(":")
    parts = value.split(" ")
    if kind == "amount":
        return f"{kind}:{parts[0]}"
    return f"{kind}:{' '.join(parts[1:])}"


def statement_conflicts(a: Statement, b: Statement) -> list[tuple[str, list[str]]]:
    """How statements `a` and `b` conflict: (kind, [a's words, b's words]) for each way."""
    if min(len(a.topic), len(b.topic)) < _MIN_TOPIC_TERMS:
        return []
    if overlap(a.topic, b.topic) < TOPIC_OVERLAP:
        return []
    found = []
    opposed = next(
        (
            (x, y)
            for x in a.modals
            for y in b.modals
            if x.action is not None
            and x.action == y.action
            and frozenset({x.kind, y.kind}) in OPPOSED
        ),
        None,
    )
    if opposed:
        found.append(("modality", [opposed[0].words, opposed[1].words]))
    by_unit: dict[str, list[Quantity]] = {}
    for q in b.quantities:
        if q.kind != "number":
            by_unit.setdefault(_unit(q.key), []).append(q)
    for q in a.quantities:
        if q.kind == "number":
            continue
        others = by_unit.get(_unit(q.key), [])
        if others and all(o.key != q.key for o in others):
            found.append((q.kind, [q.text, others[0].text]))
            break
    return found


_NEGATION = re.compile(r"\b(?:no|not|never|cannot|nor|neither)\b|n['’]t\b", re.I)
# "not less than seven years", "no later than", "not exceeding": a bound on a quantity, which
# the quantity rules compare; no denial.
_BOUND = re.compile(
    r"\s*(?:less|more|fewer|later|earlier|sooner|longer|shorter|greater|exceeding|over|under|"
    r"above|below)\b",
    re.I,
)
# Any denial at all, the negative quantifiers with it ("nothing ... shall be construed as
# granting"): a sentence without one affirms.
_DENIAL = re.compile(
    r"\b(?:no|not|never|cannot|nor|neither|nothing|none|nobody|without)\b|n['’]t\b", re.I
)
_WORD = re.compile(r"[A-Za-z]+")
_LEADING = frozenset(("a", "an", "the", "be", "been", "being", "to", "any", "have", "has", "so"))


def _negated(text: str) -> tuple[set[str], set[str]]:
    """(terms a negation governs, all terms) of `text`, as tokenize stems them: the first word
    of substance after each negation ("it is no defence" negates "defenc", "shall not be
    kept" "kept"), bounds on quantities aside."""
    negated: set[str] = set()
    for found in _NEGATION.finditer(text):
        if _BOUND.match(text, found.end()):
            continue
        for word in _WORD.findall(text[found.end() : found.end() + 60]):
            if word.casefold() not in _LEADING:
                negated.update(tokenize(word))
                break
    return negated, set(tokenize(text))


def polarity_conflict(claim: Statement, sentence: Statement) -> list[str] | None:
    """A claim that denies what a sentence on the same subject affirms, or affirms what it
    denies: "It is no defence for C that it had adequate procedures" against "it is a defence
    for C to prove that C had in place adequate procedures". The words in conflict (the claim's
    and the sentence's), or None. Read for a claim against its source only: between two
    paragraphs an exception reads the same way, and is no contradiction. One side must deny
    nothing at all: where both hold a denial, which words each governs is beyond a rule
    ("shall not copy, disclose or (b) use"; "Neither Party shall ..."), and on ContractNLI's
    pairs such readings were wrong more often than right (issue 57)."""
    if overlap(claim.topic, sentence.topic) < TOPIC_OVERLAP:
        return None
    if bool(_DENIAL.search(claim.text)) == bool(_DENIAL.search(sentence.text)):
        return None
    claim_negated, claim_terms = _negated(claim.text)
    text_negated, text_terms = _negated(sentence.text)
    flipped = (claim_negated - text_negated) & text_terms & claim.topic
    flipped |= (text_negated - claim_negated) & claim_terms & sentence.topic
    if not flipped:
        return None
    term = sorted(flipped)[0]
    return [_phrase(claim.text, term), _phrase(sentence.text, term)]


def _phrase(text: str, term: str) -> str:
    """The words of `text` around the first word that stems to `term`."""
    words = text.split()
    for at, word in enumerate(words):
        if term in tokenize(word):
            return " ".join(words[max(0, at - 2) : at + 1])
    return term


def _pair_conflicts(first: str, first_text: str, second: str, second_text: str) -> list[Conflict]:
    found = []
    for a in statements(first_text):
        for b in statements(second_text):
            for kind, words in statement_conflicts(a, b):
                found.append(
                    Conflict(kind, first, second, a.text, b.text, words, sorted(a.topic & b.topic))
                )
    return found


def _meaning_conflicts(first: str, claim: str, hit: Hit) -> list[Conflict]:
    """The support model's reading of `claim` against the paragraph, as a conflict where it
    reads a sentence contradicting the claim."""
    text = trusted_text(hit.text)
    sentences = statements(text)
    reading = read_claim(claim, text, sentences) if sentences else None
    if not isinstance(reading, Reading) or reading.contradicting is None:
        return []
    if reading.contradiction < CONTRADICT_AT or reading.entailment >= ENTAIL_AT:
        return []
    shared = sorted(topic_terms(claim) & reading.contradicting.topic)
    return [
        Conflict(
            kind="meaning",
            first=first,
            second=hit.chunk_id,
            first_sentence=claim,
            second_sentence=reading.contradicting.text,
            words=[],
            shared_topic=shared,
            decided_by=Decider.MODEL,
            confidence=reading.contradiction,
        )
    ]


def check_contradictions(
    index: IndexView, paragraph_ids: Sequence[object], claims: Sequence[str] | None = None
) -> ContradictionCheck:
    """Conflicts between every pair of the paragraphs (chunk ids, references or hits), or, when
    `claims` are given, between each claim and each paragraph. Passes when there are none."""
    limits = index.limits
    hits, unknown = source_hits(index, paragraph_ids)
    if not hits:
        raise check.QueryError(
            f"none of the paragraphs is in snapshot {index.version}: {', '.join(unknown)}"
        )
    conflicts: list[Conflict] = []
    if claims is not None:
        claims = check.items(claims, "claims", limits.max_list_items)
        for number, claim in enumerate(claims):
            claim = check.text(claim, "claim", limits.max_query_chars)
            for hit in hits:
                found = _pair_conflicts(f"claim {number}", claim, hit.chunk_id, hit.text)
                conflicts += found or _meaning_conflicts(f"claim {number}", claim, hit)
    else:
        for a, b in combinations(hits, 2):
            conflicts += _pair_conflicts(a.chunk_id, a.text, b.chunk_id, b.text)
    return ContradictionCheck(len(conflicts), not conflicts, conflicts, unknown, index.version)
