"""extract: the sentence that answers a question, with where it stands, not a whole paragraph.

Candidates are the sentences of the paragraphs a search returns (the whole index, one
document, or hits the caller passes). Each sentence scores by its local-model cosine with the
question plus the IDF-weighted share of the question's terms it holds; a paragraph's best
sentence is its answer. Headings and fragments are not candidates, and a lead-in ending with ":"
comes with its list, since "... apply in the following cases:" answers nothing alone. `confidence` is the paragraph's calibrated relevance (lexkb.relevance)
times the sentence's share of the best sentence score in that search: it ranks answers and is
not itself calibrated.

No answer is returned when the best paragraph's relevance is under `min_relevance`: a document
that does not address the question still has a "most similar" sentence.

A question that asks for a date, a document's title or its parties is answered first with that
value as the text writes it (`kind` "date", "title", "party"; lexkb.answers.typed), then with
sentences. Title, parties and the document's own date need `document` and are read at its head.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from lexkb import limits as check
from lexkb.answers import typed
from lexkb.answers.claims import sentence_vectors
from lexkb.answers.sources import as_hits
from lexkb.answers.statements import split_sentences
from lexkb.results import Hit
from lexkb.tokenize import tokenize

COVERAGE_WEIGHT = 0.5
MIN_RELEVANCE = 0.3
MIN_WORDS = 5
HEADING_WORDS = 12
_CLOSING = (".", ";", ":", "?", "!", ")", '"', "”")
LEAD_IN_CHARS = 800
# A date is looked for in the best sentences of this many paragraphs.
DATE_SENTENCES = 3
# A document's title and parties are looked for in its first chunks (title, preamble).
OPENING_CHUNKS = 12


@dataclass(frozen=True)
class Span:
    """An answer: `text` is `hit.text[start:end]`."""

    chunk_id: str
    document: str
    ref: str | None
    page: int | None
    citation: str
    start: int
    end: int
    text: str
    score: float
    confidence: float
    source_url: str | None = None
    kind: str = "sentence"  # or "date", "title", "party": a value cut from the text (typed)


@dataclass(frozen=True)
class Extraction:
    question: str
    answers: list[Span]
    no_answer: bool
    reason: str
    warnings: list[str] = field(default_factory=list)
    snapshot_version: str | None = None

    def to_dict(self) -> dict:
        return {**asdict(self), "answers": [asdict(a) for a in self.answers]}


def is_fragment(text: str) -> bool:
    """A heading ("Exceptions to holding Client Money in Client Accounts") or a bare list item
    ("(b) Professional Client."): under MIN_WORDS words, or a short line without closing
    punctuation."""
    words = len(text.split())
    return words < MIN_WORDS or (words <= HEADING_WORDS and not text.rstrip().endswith(_CLOSING))


def _sentences(text: str) -> list[tuple[int, int]]:
    """Candidate answers: sentences of at least MIN_WORDS words (a heading or a bare list
    marker answers nothing), each lead-in that ends with ":" taken with the list after it, up
    to LEAD_IN_CHARS. A paragraph with no such sentence is one candidate as a whole."""
    spans = split_sentences(text)
    found = []
    for at, (a, b) in enumerate(spans):
        if is_fragment(text[a:b]):
            continue
        if text[a:b].endswith(":"):
            for _, end in spans[at + 1 :]:
                if end - a > LEAD_IN_CHARS:
                    break
                b = end
        found.append((a, b))
    return found or [(0, len(text))]


def best_sentences(index, question: str, hits: list[Hit]) -> list[tuple[Hit, int, int, float]]:
    """Each hit's best sentence: (hit, start, end, score), best first."""
    if not hits:
        return []
    terms = list(dict.fromkeys(tokenize(question)))
    idf = index.term_idf(terms) if terms else np.zeros(0)
    total = float(idf.sum()) or 1.0
    spans = [(hit, a, b) for hit in hits for a, b in _sentences(hit.text)]
    vectors = sentence_vectors([hit.text[a:b] for hit, a, b in spans])
    cosine = vectors @ sentence_vectors([question])[0]
    best: dict[str, tuple[Hit, int, int, float]] = {}
    for (hit, a, b), similarity in zip(spans, cosine.tolist(), strict=True):
        words = set(tokenize(hit.text[a:b]))
        coverage = float(sum(v for t, v in zip(terms, idf, strict=True) if t in words)) / total
        score = similarity + COVERAGE_WEIGHT * coverage
        if hit.chunk_id not in best or score > best[hit.chunk_id][3]:
            best[hit.chunk_id] = (hit, a, b, score)
    return sorted(best.values(), key=lambda item: -item[3])


def extract(
    index,
    question: str,
    document: str | None = None,
    hits: Sequence[object] | None = None,
    k: int = 3,
    min_relevance: float = MIN_RELEVANCE,
) -> Extraction:
    """The `k` best answer spans to `question`: from `hits` when given, else from a search of
    `document` (name, key or code) or of the whole index."""
    limits = index.limits
    question = check.text(question, "question", limits.max_query_chars)
    k = check.count(k, "k", 1, limits.max_k)
    warnings: list[str] = []
    if hits is None:
        filters = {"document": document} if document else None
        results = index.search(question, k=10, filters=filters, min_relevance=0.0)
        warnings = list(results.warnings)
        hits = results.hits
    found = as_hits(hits)
    top = max((h.relevance or 0.0 for h in found), default=0.0)
    if top < min_relevance:
        # What a document's head says (its title, parties, date) answers whatever the search
        # found; anything else needs a paragraph that addresses the question.
        if values := typed_answers(index, question, document, [], []):
            reason = f"the {values[0].kind} asked for, as written at the document's head"
            return Extraction(question, values[:k], False, reason, warnings, index.version)
        reason = (
            "no paragraph matches"
            if not found
            else f"best paragraph relevance {top:.2f} < {min_relevance}: no paragraph addresses it"
        )
        return Extraction(question, [], True, reason, warnings, index.version)
    ranked = best_sentences(index, question, found)
    lead = ranked[0][3] if ranked and ranked[0][3] > 0 else 1.0
    answers = [
        _span(hit, a, b, score, (hit.relevance or 0.0) * max(score, 0.0) / lead, "sentence")
        for hit, a, b, score in ranked
    ]
    answers.sort(key=lambda s: -s.confidence)
    values = typed_answers(index, question, document, ranked, answers)
    reason = "best sentences of the best paragraphs"
    if values:
        reason = f"the {values[0].kind} asked for, as written, then {reason}"
    return Extraction(question, [*values, *answers][:k], False, reason, warnings, index.version)


def typed_answers(
    index, question: str, document: str | None, ranked: list, sentences: list[Span]
) -> list[Span]:
    """The date, title or parties the question asks for, where the text writes them
    (lexkb.answers.typed); none when it asks for none or the text does not say it. They rank
    first: what the document's head says at confidence 1, a date cut from a sentence at that
    sentence's confidence."""
    kind = typed.kind_asked(question)
    confidence = sentences[0].confidence if sentences else 0.0
    if kind is None or (document is None and kind != "date"):
        return []
    opening: list[Hit] = []
    info: dict = {}
    if document is not None:
        info, frame = index.document_paragraphs(document, levels=("section", "paragraph"))
        opening = [index.hit(c) for c in frame["chunk_id"].head(OPENING_CHUNKS).to_list()]
    if kind in ("date", "own date"):
        # The document's own date is the first written at its head; another date, the first
        # in the best sentences.
        places = [(hit, 0, len(hit.text), 1.0) for hit in opening] if kind == "own date" else []
        for at, (hit, a, b, score) in enumerate([*places, *ranked[:DATE_SENTENCES]]):
            if found := typed.date_in(hit.text, a, b):
                return [_span(hit, *found, score, 1.0 if at < len(places) else confidence, "date")]
        return []
    names = [info.get("title") or ""] if kind == "title" else list(info.get("parties") or [])
    spans = []
    if kind == "title" and not typed.said_in(opening, names[0]):
        # The catalog's title is not written at the head (or is only the file's name): the
        # first contract name that is.
        found = typed.title_in(opening)
        return [_span(*found, 1.0, 1.0, "title")] if found else []
    for name in names:
        if found := typed.said_in(opening, name):
            hit, a, b = found
            spans.append(_span(hit, a, b, 1.0, 1.0, "party" if kind == "parties" else kind))
    return spans


def _span(hit: Hit, a: int, b: int, score: float, confidence: float, kind: str) -> Span:
    return Span(
        hit.chunk_id,
        hit.document_title or hit.document_key,
        hit.ref,
        hit.page,
        hit.citation,
        a,
        b,
        hit.text[a:b],
        round(score, 4),
        round(confidence, 4),
        hit.source_url,
        kind,
    )  # fmt: skip
