"""extract: the sentence that answers a question, with where it stands, not a whole paragraph.

Candidates are the sentences of the paragraphs a search returns (the whole index, one
document, or hits the caller passes). Each sentence scores by its local-model cosine with the
question plus the IDF-weighted share of the question's terms it holds; a paragraph's best
sentence is its answer. Headings and fragments are not candidates, and a lead-in ending with ":"
comes with its list (lexkb.answers.passages.whole), since "... apply in the following cases:" answers
nothing alone. `confidence` is the paragraph's calibrated relevance (lexkb.relevance)
times the sentence's share of the best sentence score in that search; it is not itself
calibrated, and answers come in the order of their sentence scores.

No answer is returned when the best paragraph's relevance is under `min_relevance`: a document
that does not address the question still has a "most similar" sentence.

A question that asks for a document's title, its parties or its own date is answered first
with that value as the document's head writes it (`kind` "title", "party", "date";
lexkb.answers.passages.typed; needs `document`), then with sentences; one asking which law
governs a contract, with the sentence of its governing-law clause that names the place, then
the place cut from it (`kind` "law"). A question asking for another date
gets the best sentence, then the date that sentence writes.

With `rerank` (the default), the relevance model (lexkb.core.judge.shipped.answers) reads the
question with each answer's paragraph, and the answers are ordered by its chance blended with
their order here (lexkb.rerank.blend); each carries its paragraph's chance as `answers`
(BENCHMARKS.md, "Extraction on CUAD"); `rerank=False` keeps the sentence order alone. The model
then also reads the question with each candidate sentence of the first `k` paragraphs, and each
answer is the sentence whose score plus that chance is best (chosen_sentences): the words that
match the question best are not always the sentence that says what it asks.

A reviewer who knows which clause answers ("the cap on liability: how much?") names its type
(`clause_type`, as `classify` and the search filter name them): the paragraphs the build labelled
with it are searched too and come first, in the order above, and the others follow. On 60 of
CUAD's contracts, labelled by clause heads fitted on the other half, found@1 0.625 -> 0.673
(BENCHMARKS.md, "Extraction on CUAD"); where no paragraph carries the label, a warning says so
and the answers are the whole search's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from lexkb import defaults
from lexkb import limits as check
from lexkb.answers.index_view import IndexView
from lexkb.answers.passages import typed
from lexkb.answers.passages.source_hits import as_hits
from lexkb.answers.passages.statements import split_sentences
from lexkb.answers.passages.whole import is_lead_in
from lexkb.core.embed.sentence_vectors import sentence_vectors
from lexkb.core.judge.shipped import answers as answer_chances
from lexkb.core.text.governing_law import CHOOSES_LAW
from lexkb.core.text.tokenize import tokenize
from lexkb.core.vocabulary import ChunkLevel
from lexkb.rerank import blend
from lexkb.results import Hit

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
# What a document's head says of itself ranks above any sentence.
HEAD_CONFIDENCE = 1.0


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
    kind: str = "sentence"  # or "date", "title", "party", "law": a value cut from the text (typed)
    answers: float | None = None  # the relevance model's chance, when extract reranks


@dataclass(frozen=True)
class Extraction:
    question: str
    answers: list[Span]
    no_answer: bool
    reason: str
    warnings: list[str] = field(default_factory=list)
    snapshot_version: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "answers": [asdict(a) for a in self.answers]}


def is_fragment(text: str) -> bool:
    """A heading ("Exceptions to holding Client Money in Client Accounts") or a bare list item
    ("(b) Professional Client."): under MIN_WORDS words, or a short line without closing
    punctuation."""
    words = len(text.split())
    return words < MIN_WORDS or (words <= HEADING_WORDS and not text.rstrip().endswith(_CLOSING))


def _sentences(text: str) -> list[tuple[int, int]]:
    """Candidate answers: sentences of at least MIN_WORDS words (a heading or a bare list
    marker answers nothing), each lead-in (ending with ":" or a dash) taken with the list after it, up
    to LEAD_IN_CHARS. A paragraph with no such sentence is one candidate as a whole."""
    spans = split_sentences(text)
    found = []
    for at, (a, b) in enumerate(spans):
        if is_fragment(text[a:b]):
            continue
        if is_lead_in(text[a:b]):
            for _, end in spans[at + 1 :]:
                if end - a > LEAD_IN_CHARS:
                    break
                b = end
        found.append((a, b))
    return found or [(0, len(text))]


# The weight of the relevance model's chance for a sentence, added to its score, when extract
# picks a paragraph's sentence after reranking (CUAD tune half, 60 contracts: found@1 0.613 ->
# 0.636, Recall@3 0.740 -> 0.771; 0.5 and 3 do a little worse).
SENTENCE_CHANCE_WEIGHT = 1.0


class BestSentence(NamedTuple):
    """A candidate sentence of a paragraph for a question (its best, from best_sentences):
    `hit.text[start:end]`, and its score."""

    hit: Hit
    start: int
    end: int
    score: float


def best_sentences(index: IndexView, question: str, hits: list[Hit]) -> list[BestSentence]:
    """Each hit's best sentence, best first."""
    return _best_of(scored_sentences(index, question, hits))


def _best_of(candidates: list[BestSentence]) -> list[BestSentence]:
    best: dict[str, BestSentence] = {}
    for scored in candidates:
        if scored.hit.chunk_id not in best or scored.score > best[scored.hit.chunk_id].score:
            best[scored.hit.chunk_id] = scored
    return sorted(best.values(), key=lambda item: -item.score)


def scored_sentences(index: IndexView, question: str, hits: list[Hit]) -> list[BestSentence]:
    """Every candidate sentence of each hit (_sentences) with its score: its local-model cosine
    with the question plus COVERAGE_WEIGHT times the IDF-weighted share of the question's terms
    it holds; in the hits' order, then the text's."""
    if not hits:
        return []
    terms = list(dict.fromkeys(tokenize(question)))
    idf = index.term_idf(terms) if terms else np.zeros(0)
    total = float(idf.sum()) or 1.0
    spans = [(hit, a, b) for hit in hits for a, b in _sentences(hit.text)]
    vectors = sentence_vectors([hit.text[a:b] for hit, a, b in spans])
    cosine = vectors @ sentence_vectors([question])[0]
    scored = []
    for (hit, a, b), similarity in zip(spans, cosine.tolist(), strict=True):
        words = set(tokenize(hit.text[a:b]))
        coverage = float(sum(v for t, v in zip(terms, idf, strict=True) if t in words)) / total
        scored.append(BestSentence(hit, a, b, similarity + COVERAGE_WEIGHT * coverage))
    return scored


def extract(
    index: IndexView,
    question: str,
    document: str | None = None,
    hits: Sequence[object] | None = None,
    k: int = defaults.EXTRACT_LIMIT,
    min_relevance: float = MIN_RELEVANCE,
    rerank: bool = True,
    clause_type: str | None = None,
) -> Extraction:
    """The `k` best answer spans to `question`: from `hits` when given, else from a search of
    `document` (name, key or code) or of the whole index; with `rerank` (the default), the
    answers reordered by the relevance model's reading of their paragraphs (reranked);
    with `clause_type`, the paragraphs labelled with it first (labelled_first)."""
    limits = index.limits
    question = check.text(question, "question", limits.max_query_chars)
    k = check.count(k, "k", 1, limits.max_k)
    warnings: list[str] = []
    labelled: set[str] = set()
    if hits is None:
        filters = {"document": document} if document else {}
        results = index.search(
            question, k=defaults.SEARCH_LIMIT, filters=filters or None, min_relevance=0.0
        )
        warnings = list(results.warnings)
        hits = results.hits
        if clause_type is not None:
            hits, labelled, note = labelled_first(index, question, filters, clause_type, hits)
            warnings += note
    elif clause_type is not None:
        raise check.QueryError(
            "clause_type chooses what extract searches: with hits, pass those of a search "
            "filtered by clause_type instead"
        )
    found = as_hits(hits)
    top = max((h.relevance or 0.0 for h in found), default=0.0)
    kind = typed.kind_asked(question)
    head = head_values(index, kind, document)
    if top < min_relevance:
        # What a document's head says (its title, parties, date) answers whatever the search
        # found; anything else needs a paragraph that addresses the question.
        if head:
            return Extraction(question, head[:k], False, _said(head), warnings, index.version)
        reason = (
            "no paragraph matches"
            if not found
            else f"best paragraph relevance {top:.2f} < {min_relevance}: no paragraph addresses it"
        )
        return Extraction(question, [], True, reason, warnings, index.version)
    candidates = scored_sentences(index, question, found)
    ranked = _best_of(candidates)
    lead = ranked[0].score if ranked and ranked[0].score > 0 else 1.0
    answers = [
        _span(hit, a, b, score, (hit.relevance or 0.0) * max(score, 0.0) / lead, "sentence")
        for hit, a, b, score in ranked
    ]
    # In the order of the sentence scores, not of confidence: a sentence that says what is asked
    # outranks one in a paragraph the search put higher (CUAD tune half, 30 contracts: found@1
    # 0.476 -> 0.517, Recall@3 0.604 -> 0.635).
    reason = "best sentences of the best paragraphs"
    if rerank:
        answers = reranked(question, answers, {hit.chunk_id: hit.text for hit in found})
        reason = f"{reason}, reordered by the relevance model"
    if labelled:
        answers = [
            *(a for a in answers if a.chunk_id in labelled),
            *(a for a in answers if a.chunk_id not in labelled),
        ]
        reason = f"{reason}, those the build labelled {clause_type!r} first"
    if rerank:
        answers = [*chosen_sentences(question, answers[:k], candidates), *answers[k:]]
    if head:
        reason = f"{_said(head)}, then {reason}"
        given = {(h.chunk_id, h.start, h.end) for h in head}
        answers = [*head, *(a for a in answers if (a.chunk_id, a.start, a.end) not in given)]
    elif dated := sentence_date(kind, ranked, answers):
        # After the sentence it is cut from: "until five years after the Effective Date"
        # answers "when does the term expire?" better than a date in it would (CUAD tune half:
        # found@1 0.40 with the sentence first, 0.28 with the date).
        reason = f"{reason}, and the date the best of them writes"
        answers = [*answers[:1], dated, *answers[1:]]
    return Extraction(question, answers[:k], False, reason, warnings, index.version)


def labelled_first(
    index: IndexView,
    question: str,
    filters: dict[str, Any],
    clause_type: str,
    hits: Sequence[object],
) -> tuple[list[object], set[str], list[str]]:
    """The paragraphs labelled `clause_type` that a search of `filters` finds for `question`,
    then the other `hits`; the labelled ones' chunk ids; and a warning where none is labelled
    (the answers are then the whole search's, and say so)."""
    typed = index.search(
        question,
        k=defaults.SEARCH_LIMIT,
        filters={**filters, "clause_type": clause_type},
        min_relevance=0.0,
    )
    labelled = {hit.chunk_id for hit in typed.hits}
    if not labelled:
        where = f"document {filters['document']!r}" if "document" in filters else "the index"
        note = f"no paragraph of {where} is labelled {clause_type!r}: answers from its search"
        return list(hits), labelled, [note]
    rest = [hit for hit in as_hits(hits) if hit.chunk_id not in labelled]
    return [*typed.hits, *rest], labelled, []


def reranked(question: str, spans: list[Span], paragraphs: dict[str, str]) -> list[Span]:
    """`spans` (one per paragraph) ordered by the relevance model's chance that each one's
    paragraph (`paragraphs`, by chunk id) answers `question`, blended with their order as given
    (lexkb.rerank.blend): the model learnt to read a question with a paragraph, CUAD's clause
    descriptions among its questions; the order knows which sentence shares the question's
    words and sense. Each span carries its paragraph's chance as `answers`; its confidence is
    unchanged."""
    if not spans:
        return spans
    chances = answer_chances(question, [paragraphs[s.chunk_id] for s in spans])
    order = blend(chances)
    return [replace(spans[i], answers=round(float(chances[i]), 4)) for i in order]


def chosen_sentences(
    question: str, spans: list[Span], candidates: list[BestSentence]
) -> list[Span]:
    """Each span moved to the sentence of its paragraph whose score plus
    SENTENCE_CHANCE_WEIGHT times the relevance model's chance that it answers `question` is
    best (`candidates`: scored_sentences of the paragraphs): among sentences that share the
    question's words, the one that says what it asks. A paragraph of one candidate keeps it."""
    by_chunk: dict[str, list[BestSentence]] = {}
    for candidate in candidates:
        by_chunk.setdefault(candidate.hit.chunk_id, []).append(candidate)
    several = [s for s in spans if len(by_chunk.get(s.chunk_id, ())) > 1]
    if not several:
        return spans
    texts = [c.hit.text[c.start : c.end] for s in several for c in by_chunk[s.chunk_id]]
    chances = iter(answer_chances(question, texts).tolist())
    moved: dict[str, BestSentence] = {}
    for span in several:
        options = by_chunk[span.chunk_id]
        scores = [c.score + SENTENCE_CHANCE_WEIGHT * next(chances) for c in options]
        moved[span.chunk_id] = options[int(np.argmax(scores))]
    return [
        replace(
            s, start=c.start, end=c.end, text=c.hit.text[c.start : c.end], score=round(c.score, 4)
        )
        if (c := moved.get(s.chunk_id))
        else s
        for s in spans
    ]


def head_values(index: IndexView, kind: str | None, document: str | None) -> list[Span]:
    """The title, parties or own date a question asks for (`kind`,
    lexkb.answers.passages.typed), where the document's head (its first OPENING_CHUNKS chunks)
    writes them, or the governing law where its clause names it; none when it asks for none,
    no document is named, or the text does not say it."""
    if document is None or kind not in ("title", "parties", "own date", "governing law"):
        return []
    info, frame = index.document_paragraphs(document, levels=("section", "paragraph"))
    if kind == "governing law":
        return _law_said(index, info, frame)
    opening = [index.hit(c) for c in frame["chunk_id"].head(OPENING_CHUNKS).to_list()]
    if kind == "own date":
        found = next(
            ((hit, *at) for hit in opening if (at := typed.date_in(hit.text, 0, len(hit.text)))),
            None,
        )
        return [_span(*found, 1.0, HEAD_CONFIDENCE, "date")] if found else []
    if kind == "title":
        # The catalog's title where the head writes it; else (it may be the file's name) the
        # first contract name the head writes.
        found = typed.said_in(opening, info.get("title") or "") or typed.title_in(opening)
        return [_span(*found, 1.0, HEAD_CONFIDENCE, "title")] if found else []
    said = [typed.said_in(opening, name) for name in info.get("parties") or []]
    return [_span(*found, 1.0, HEAD_CONFIDENCE, "party") for found in said if found]


def _said(head: list[Span]) -> str:
    """How `head_values` answered, for the extraction's reason."""
    if head[-1].kind == "law":
        return "the sentence of the clause choosing the governing law, then the place it names"
    return f"the {head[0].kind} asked for, as written at the document's head"


def _law_said(index: IndexView, info: dict[str, Any], frame: pl.DataFrame) -> list[Span]:
    """The sentence of a contract's governing-law clause that names the place (its
    `governing_law`, read at build time), then the place cut from it: from the first paragraph
    that both chooses a law and names it; none where the contract names no law. The clause's
    own words come first, as a date follows the sentence it is cut from (sentence_date): the
    place alone leaves out what the clause says of it ("without regard to its conflict of laws
    rules"), and on CUAD's held-out contracts the place first was found in the clause lawyers
    marked 0.12 of the time (BENCHMARKS.md, "Extraction on CUAD")."""
    place = info.get("governing_law")
    if not place:
        return []
    # Paragraphs, not the sections holding them: the citation is the clause's own.
    paragraphs = frame.filter(pl.col("chunk_level") == ChunkLevel.PARAGRAPH)
    for chunk_id, text in paragraphs.select("chunk_id", "content").iter_rows():
        hit = index.hit(chunk_id)
        if CHOOSES_LAW.search(text) and (found := typed.said_in([hit], place)):
            law = _span(*found, 1.0, HEAD_CONFIDENCE, "law")
            sentence = next(
                ((a, b) for a, b in _sentences(hit.text) if a <= law.start and law.end <= b),
                (0, len(hit.text)),
            )
            return [_span(hit, *sentence, 1.0, HEAD_CONFIDENCE, "sentence"), law]
    return []


def sentence_date(kind: str | None, ranked: list[BestSentence], answers: list[Span]) -> Span | None:
    """For a question asking for a date (`kind`; "on what date will the term expire?"), the
    first date written in the best sentences, at the best answer's confidence."""
    if kind not in ("date", "own date") or not answers:
        return None
    for hit, a, b, score in ranked[:DATE_SENTENCES]:
        if found := typed.date_in(hit.text, a, b):
            return _span(hit, *found, score, answers[0].confidence, "date")
    return None


def _span(hit: Hit, a: int, b: int, score: float, confidence: float, kind: str) -> Span:
    return Span(
        chunk_id=hit.chunk_id,
        document=hit.document_title or hit.document_key,
        ref=hit.ref,
        page=hit.page,
        citation=hit.citation,
        start=a,
        end=b,
        text=hit.text[a:b],
        score=round(score, 4),
        confidence=round(confidence, 4),
        source_url=hit.source_url,
        kind=kind,
    )
