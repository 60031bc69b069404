"""classify: find clauses by type in a document, with labels the caller may define in one line.

Two kinds of label, and each result says which it came from (`method`):
- **fitted**: CUAD's 41 categories ("Cap On Liability", "Non-Compete", "Change Of Control",
  ...), each a logistic regression over the local model's paragraph vector, fitted on the
  paragraphs CUAD's lawyers marked (lexkb.core.clauses.heads). Asked for by name, or all at
  once with `clause_types="cuad"`. A default type named as a category (governing law) uses it.
- **zero-shot**: any other label, a name and a one-line description ("governing law": "which
  state's or country's law governs the contract"). A paragraph scores by the local model's
  cosine between the paragraph and the label's name and description, plus a bonus when the
  paragraph says the label's name itself (its terms, stemmed, as lexkb.core.text.tokenize reads them).
  Nothing is trained, so new labels work as they are written. A paragraph takes the label when
  its cosine reaches `min_score`, or when it says the name and its cosine reaches
  `min_score` - NAME_BONUS.

The default types are in lexkb.core.clauses.default_types. `min_score`, the bonus and the heads' thresholds
were chosen on CUAD's contracts, and benchmarks/classify.py reports them cross-validated by
contract.

A build labels every contract with the default types and the fitted categories, and its snapshot
records what decided them. Classifying a whole contract with labels the build decided the same
way reads them from the snapshot (a table read) rather than embedding every paragraph again
(seconds for a long contract); the labels are the same either way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from lexkb import limits as check
from lexkb.answers.index_view import IndexView
from lexkb.answers.passages.source_hits import source_hits
from lexkb.core.clauses.default_types import DEFAULT_TYPES
from lexkb.core.clauses.heads import clause_heads, name_key
from lexkb.core.clauses.labels import (
    LABELLED_TYPE,
    MIN_SCORE,
    ZERO_SHOT,
    build_types,
    decide,
    methods,
)
from lexkb.results import Hit

MAX_TYPES = 50
# clause_types="cuad": every fitted category.
FITTED_SET = "cuad"


@dataclass(frozen=True)
class ClauseMatch:
    clause_type: str
    chunk_id: str
    document: str
    ref: str | None
    page: int | None
    citation: str
    text: str
    score: float
    method: str


@dataclass(frozen=True)
class Classification:
    clause_types: dict[str, str]
    methods: dict[str, str]
    clauses: list[ClauseMatch]
    paragraphs: int
    warnings: list[str] = field(default_factory=list)
    snapshot_version: str | None = None
    fitted_on: str | None = None  # what the fitted labels learned from, when any is used

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "clauses": [asdict(c) for c in self.clauses]}


def label_set(clause_types: Mapping[str, str] | Sequence[str] | str | None) -> dict[str, str]:
    """Labels with descriptions: the defaults, every fitted category ("cuad"), a caller's
    mapping, or a caller's names (a known default name keeps its description; another name is
    its own description)."""
    if clause_types is None:
        return dict(DEFAULT_TYPES)
    if isinstance(clause_types, str):
        if clause_types.casefold() != FITTED_SET:
            raise check.QueryError(
                f"clause_types takes labels, or {FITTED_SET!r} for every fitted category"
            )
        return {name: name for name in clause_heads().names}
    if isinstance(clause_types, Mapping):
        chosen = {str(k): str(v or k) for k, v in clause_types.items()}
    else:
        chosen = {str(k): DEFAULT_TYPES.get(str(k).casefold(), str(k)) for k in clause_types}
    if not chosen or len(chosen) > MAX_TYPES:
        raise check.QueryError(f"clause_types takes 1 to {MAX_TYPES} labels")
    for name, description in chosen.items():
        check.text(name, "clause type", 200)
        check.text(description, "clause type description", 1000)
    return chosen


def classify(
    index: IndexView,
    document: str | None = None,
    chunks: Sequence[object] | None = None,
    clause_types: Mapping[str, str] | Sequence[str] | str | None = None,
    min_score: float = MIN_SCORE,
) -> Classification:
    """The clauses of `document` (or of `chunks`: ids, references or hits), by type in the
    order the types were given, best first within a type (a fitted head's probability and a
    zero-shot cosine are not on one scale)."""
    labels = label_set(clause_types)
    if (document is None) == (chunks is None):
        raise check.QueryError("give a document or chunks, not both")
    contract = False
    if document is not None:
        about, frame = index.document_paragraphs(document)
        hits = [index.hit(c) for c in frame["chunk_id"].to_list()]
        contract = str(about.get("document_type") or "").casefold() == LABELLED_TYPE
    else:
        assert chunks is not None  # one of the two, as checked above
        hits, _ = source_hits(index, chunks)
    hits = [h for h in hits if h.text.strip()]
    how = methods(labels)
    fitted_on = clause_heads().trained_on if set(how.values()) - {ZERO_SHOT} else None
    if not hits:
        return Classification(
            labels, how, [], 0, ["no paragraphs to classify"], index.version, fitted_on
        )
    built = _as_built(index, hits, labels, min_score) if contract else None
    if built is None:
        table, taken = decide([h.text for h in hits], labels, min_score=min_score)
        built = [
            (row, list(labels)[column], float(table[row, column]))
            for row, column in zip(*np.nonzero(taken), strict=True)
        ]
    found = []
    for row, name, score in built:
        hit = hits[row]
        found.append(
            ClauseMatch(
                clause_type=name,
                chunk_id=hit.chunk_id,
                document=hit.document_title or hit.document_key,
                ref=hit.ref,
                page=hit.page,
                citation=hit.citation,
                text=hit.text,
                score=round(score, 4),
                method=how[name],
            )
        )
    order = {name: i for i, name in enumerate(labels)}
    found.sort(key=lambda c: (order[c.clause_type], -c.score, c.chunk_id))
    return Classification(labels, how, found, len(hits), [], index.version, fitted_on)


def _as_built(
    index: IndexView, hits: list[Hit], labels: dict[str, str], min_score: float
) -> list[tuple[int, str, float]] | None:
    """(paragraph, label, score) of each label the build gave a contract's paragraphs, when
    every label asked for is one the build decided the same way (by name, in any case; its
    method, and a zero-shot label's description and `min_score`, unchanged) and the snapshot
    says the shipped model decided them (IndexView.clause_labels). Else None: `decide` reads the
    paragraphs again, embedding each (seconds for a long contract, where this is a table read)."""
    built = build_types()
    built_how, how = methods(built), methods(labels)
    by_key = {name_key(name): name for name in built}
    asked: dict[str, str] = {}
    for name, description in labels.items():
        same = by_key.get(name_key(name))
        if same is None or built_how[same] != how[name]:
            return None
        if how[name] == ZERO_SHOT and (description != built[same] or min_score != MIN_SCORE):
            return None
        asked[same] = name
    rows = index.clause_labels([h.chunk_id for h in hits])
    if rows is None:
        return None
    position = {h.chunk_id: i for i, h in enumerate(hits)}
    return [
        (position[chunk_id], asked[clause_type], score)
        for chunk_id, clause_type, score in rows.iter_rows()
        if clause_type in asked
    ]
