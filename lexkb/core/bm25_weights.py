"""The BM25 weight of a posting: one formula for the build and for the query side.

A classic snapshot stores each (term, chunk) posting already weighted (transforms.indexing.bm25); a
sharded one stores term frequencies only and `Index.open` weights them (lexkb.keyword), because
weights depend on corpus-wide statistics that change whenever any part changes. Both call these
functions, in this order of float64 operations, so the two layouts give the same float32
weights bit for bit and can never drift apart.

Each group of rows (a chunk level) is scored as its own corpus: `rows` and `df` are the group's.
"""

from __future__ import annotations

import numpy as np


def idf(rows: int, df: np.ndarray) -> np.ndarray:
    """Lucene's IDF of terms held by `df` of a group's `rows` rows (float64)."""
    return np.log(1.0 + (rows - df + 0.5) / (df + 0.5))


def average_length(rows: int, length_sum: int) -> float:
    """A group's average row length (in terms), as numpy's mean of its int64 lengths computes
    it; 1.0 for a group without rows or terms, whose postings (none) it never divides."""
    return length_sum / rows if rows and length_sum else 1.0


def weights(
    term_idf: np.ndarray,
    tf: np.ndarray,
    lengths: np.ndarray,
    average: float,
    k1: float,
    b: float,
) -> np.ndarray:
    """float32 weights of postings of one group: each posting's term IDF, term frequency and
    its row's length (int64). Lucene 8+ dropped BM25's constant (k1 + 1) numerator factor; so
    do we (and bm25s), which keeps scores comparable with those systems without changing any
    ranking."""
    norm = k1 * (1.0 - b + b * lengths / average)
    weights: np.ndarray = (term_idf * tf / (tf + norm)).astype(np.float32)
    return weights
