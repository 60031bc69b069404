"""Calibrated relevance: a 0-1 value per hit that reads as the chance the hit answers the query.

A ranking score orders the hits of one search and means nothing outside it: a BM25 score of 14
is strong for a two-word query and weak for a twenty-word one, and a fused z-score is relative to
its candidates. Relevance is a logistic model over features that do mean the same in every
search:

- `cosine`: the query's similarity to the chunk (best of its text and lines, as dense search);
- `bm25_fraction`: the chunk's BM25 score over the most the query's terms could score
  (the sum of its terms' IDFs), so query length cancels out;
- `coverage`: the IDF-weighted share of the query's terms found in the chunk, counting words
  the index has never seen, so a query about something the index does not hold scores low;
- `log_rank`: the log of the hit's rank in its search, since the first hit of a search is the
  likeliest answer whatever its absolute scores.

Keyword searches use the lexical model (no query embedding on that path); hybrid and vector use
the dense model fitted for the snapshot's embedder, or the lexical one when none was fitted for
it (an embedder's cosine scale is its own). Coefficients were fitted on the ObliQA dev questions
whose sha256(QuestionID) is even and are checked on the other half (benchmarks/relevance.py,
reliability table in BENCHMARKS.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

FEATURES = ("cosine", "bm25_fraction", "coverage", "log_rank")


@dataclass(frozen=True)
class Calibration:
    """A logistic model over `features` (names from FEATURES)."""

    features: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float

    def apply(self, matrix: np.ndarray, names: tuple[str, ...] = FEATURES) -> np.ndarray:
        """The model's probability for each row of `matrix`, whose columns are `names`."""
        logits = matrix[:, _columns(self.features, names)].astype(np.float64, copy=False)
        logits = logits @ self._weights + self.bias
        chances: np.ndarray = 1.0 / (1.0 + np.exp(-logits))
        return chances

    @cached_property
    def _weights(self) -> np.ndarray:
        return np.asarray(self.weights)


@lru_cache(maxsize=32)
def _columns(features: tuple[str, ...], names: tuple[str, ...]) -> slice | list[int]:
    """Where `features` are among `names`: a slice when they are consecutive (a view, not a
    copy: a search applies a model to ten hits, where each copy is a share of the cost)."""
    columns = [names.index(name) for name in features]
    if columns == list(range(columns[0], columns[0] + len(columns))):
        return slice(columns[0], columns[0] + len(columns))
    return columns


# Fitted by `benchmarks/relevance.py --fit` on the tune half of ObliQA dev (top-10 hits of each
# question; keyword hits for LEXICAL, hybrid and vector hits for the dense model).
LEXICAL = Calibration(("bm25_fraction", "coverage", "log_rank"), (0.2275, 4.2638, -2.2257), -2.2089)
DENSE: dict[str, Calibration] = {
    "local:all-MiniLM-L6-v2-int8": Calibration(FEATURES, (0.2018, 4.8604, 3.1052, -1.9954), -3.1294)
}
# Below this, a hybrid or vector hit is dropped: a dense ranking orders every paragraph, so
# without a floor a question the index cannot answer still gets ten "hits". 0.15 until issue
# 46: people's questions share few words with the paragraph that answers them, and at 0.15 a
# search returned nothing for 21% of the answerable ones written here (benchmarks/realqa.py
# --questions) and 14% of realqa's; at 0.1, 4% of either, while made-up words still score
# under it (tests/query/test_relevance.py).
RELEVANCE_FLOOR = 0.1


def calibration_for(embedder: str | None, dense: bool) -> Calibration:
    if dense and embedder in DENSE:
        return DENSE[embedder]
    return LEXICAL


def unseen_idf(paragraphs: int) -> float:
    """The IDF of a word no paragraph holds (Lucene's formula at df 0): the rarest there is."""
    return math.log1p((paragraphs + 0.5) / 0.5)
