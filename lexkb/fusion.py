"""Ranking score arrays: the best rows of one ranking, and the fusion of keyword and dense ones.

A search scores every chunk row (zero where a row is filtered out or matches nothing), so these
are plain functions over numpy arrays, shared by every mode: keyword and vector searches rank
one array, hybrid ones fuse two first. Ties always break by row, so equal scores come back in
document order and a ranking is the same on every run.
"""

from __future__ import annotations

import numpy as np

# Hybrid = weighted z-score fusion over the union of each ranking's best FUSION_DEPTH rows: each
# side's scores are standardised over those candidates, the dense side weighted DENSE_WEIGHT. On
# ObliQA it beats reciprocal rank fusion (k=60) on Recall@10 and MAP@10; the weight was chosen on
# half the dev questions and checked on the other half (BENCHMARKS.md).
FUSION_DEPTH = 200
DENSE_WEIGHT = 1.0


def fuse(
    keyword: np.ndarray,
    dense: np.ndarray,
    keyword_best: np.ndarray | None = None,
    dense_rows: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Weighted z-score fusion over the rows either ranking puts in its best FUSION_DEPTH; every
    other row scores 0. Scores are shifted to stay positive, as `top` expects. Returns the
    fused scores and the rows that can be positive. `keyword_best`: the keyword side's best,
    when known; `dense_rows`: the only rows (sorted) the dense side scored, when not all."""
    fused = np.zeros(keyword.shape[0], dtype=np.float64)
    if keyword_best is None:
        keyword_best = best(keyword, FUSION_DEPTH)
    if dense_rows is None:
        dense_best = best(dense, FUSION_DEPTH)
    else:
        dense_best = dense_rows[best(dense[dense_rows], FUSION_DEPTH)]
    candidates = np.union1d(keyword_best, dense_best)
    if candidates.size:
        combined = _standardise(keyword[candidates]) + DENSE_WEIGHT * _standardise(
            dense[candidates]
        )
        fused[candidates] = combined - combined.min() + 1.0
    return fused, candidates


def _standardise(values: np.ndarray) -> np.ndarray:
    values = values.astype(np.float64)
    return (values - values.mean()) / (values.std() + 1e-9)


def best(scores: np.ndarray, k: int) -> np.ndarray:
    """Rows of the k highest positive scores, in row order; of rows tied at the k-th score,
    the first. The k-th score is found by partitioning the positive values alone: faster than
    partitioning rows, and than partitioning every value, since numpy's selection slows on the
    zeros of the rows a search did not touch (1.8 against 0.5 ms on ObliQA's keyword scores, a
    third of them positive)."""
    positive = scores[scores > 0]
    if positive.size <= k:
        return np.flatnonzero(scores > 0)
    kth = np.partition(positive, positive.size - k)[positive.size - k]
    rows = np.flatnonzero(scores >= kth)
    if rows.size > k:
        above = scores[rows] > kth
        tied = np.flatnonzero(~above)[: k - np.count_nonzero(above)]
        rows = np.sort(np.concatenate([rows[above], rows[tied]]))
    return rows


def top(scores: np.ndarray, k: int, rows: np.ndarray | None = None) -> np.ndarray:
    """Rows of the k highest positive scores; ties break by row, so equal scores come back in
    document order. `rows` (sorted): the only rows that can score above 0, when known."""
    if rows is not None:
        return rows[top(scores[rows], k)]
    candidates = best(scores, k)
    return candidates[np.lexsort((candidates, -scores[candidates]))]
