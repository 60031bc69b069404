"""classify: find clauses by type in a document, with labels the caller may define in one line.

Zero-shot: each label is a name and a one-line description ("governing law": "which state's or
country's law governs the contract"). A paragraph scores against a label by the local model's
cosine between the paragraph and the label's name and description, plus a bonus when the
paragraph says the label's name itself (its terms, stemmed, as lexkb.tokenize reads them).
Nothing is trained, so new labels work as they are written.

A paragraph takes a label when its cosine with the label reaches `min_score`, or when it says
the label's name and its cosine reaches `min_score` - NAME_BONUS. The default types are in
lexkb.clause_types. `min_score` and the bonus were chosen on one half of CUAD's contracts and are
reported on the other (benchmarks/classify.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from lexkb import limits as check
from lexkb.answers.claims import sentence_vectors
from lexkb.answers.sources import source_hits
from lexkb.clause_types import DEFAULT_TYPES
from lexkb.tokenize import tokenize

MIN_SCORE = 0.55
NAME_BONUS = 0.5
MAX_TYPES = 50
# "Non-solicitation", "anti-assignment": the clause says "shall not solicit", "may not assign",
# so a name's negating prefix is not a word to look for.
_NEGATING = frozenset({"non", "anti"})


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


@dataclass(frozen=True)
class Classification:
    clause_types: dict[str, str]
    clauses: list[ClauseMatch]
    paragraphs: int
    warnings: list[str] = field(default_factory=list)
    snapshot_version: str | None = None

    def to_dict(self) -> dict:
        return {**asdict(self), "clauses": [asdict(c) for c in self.clauses]}


def label_set(clause_types: Mapping[str, str] | Sequence[str] | None) -> dict[str, str]:
    """Labels with descriptions: the defaults, a caller's mapping, or a caller's names (a known
    default name keeps its description; another name is its own description)."""
    if clause_types is None:
        return dict(DEFAULT_TYPES)
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


def scores(
    texts: list[str],
    labels: dict[str, str],
    bonus: float = NAME_BONUS,
    vectors: np.ndarray | None = None,
) -> np.ndarray:
    """(paragraphs x labels) scores. `vectors`: the paragraphs' local-model vectors, when the
    caller keeps them (a build's cache), else they are computed here."""
    label_vectors = sentence_vectors([f"{name}: {text}" for name, text in labels.items()])
    paragraph_vectors = sentence_vectors(texts) if vectors is None else vectors
    similarity = paragraph_vectors @ label_vectors.T
    words = [set(tokenize(t)) for t in texts]
    for column, name in enumerate(labels):
        terms = set(tokenize(name)) - _NEGATING
        if terms:
            said = np.array([len(terms & w) / len(terms) for w in words])
            similarity[:, column] += bonus * (said == 1.0)
    return similarity


def classify(
    index,
    document: str | None = None,
    chunks: Sequence[object] | None = None,
    clause_types: Mapping[str, str] | Sequence[str] | None = None,
    min_score: float = MIN_SCORE,
) -> Classification:
    """The clauses of `document` (or of `chunks`: ids, references or hits) by type, best first."""
    labels = label_set(clause_types)
    if (document is None) == (chunks is None):
        raise check.QueryError("give a document or chunks, not both")
    if document is not None:
        _, frame = index.document_paragraphs(document)
        hits = [index.hit(c) for c in frame["chunk_id"].to_list()]
    else:
        hits, _ = source_hits(index, chunks)
    hits = [h for h in hits if h.text.strip()]
    if not hits:
        return Classification(labels, [], 0, ["no paragraphs to classify"], index.version)
    table = scores([h.text for h in hits], labels)
    found = []
    for row, column in zip(*np.nonzero(table >= min_score), strict=True):
        hit, name = hits[row], list(labels)[column]
        found.append(
            ClauseMatch(
                name,
                hit.chunk_id,
                hit.document_title or hit.document_key,
                hit.ref,
                hit.page,
                hit.citation,
                hit.text,
                round(float(table[row, column]), 4),
            )  # fmt: skip
        )
    found.sort(key=lambda c: (-c.score, c.chunk_id))
    return Classification(labels, found, len(hits), [], index.version)
