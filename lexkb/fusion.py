"""Ranking score arrays: the best rows of one ranking, and the fusion of keyword and dense ones.

A search scores every chunk row (zero where a row is filtered out or matches nothing), so these
are plain functions over numpy arrays, shared by every mode: keyword and vector searches rank
one array, hybrid ones fuse two first. Ties always break by row, so equal scores come back in
document order and a ranking is the same on every run.
"""

from __future__ import annotations

import math

import numpy as np

# Hybrid = weighted z-score fusion over the union of each ranking's best FUSION_DEPTH rows: each
# side's scores are standardised over those candidates, the dense side weighted DENSE_WEIGHT. On
# ObliQA it beats reciprocal rank fusion (k=60) on Recall@10 and MAP@10; the weight was chosen on
# half the dev questions and checked on the other half (BENCHMARKS.md).
FUSION_DEPTH = 200
DENSE_WEIGHT = 1.0


def candidates(
    keyword_best: np.ndarray | None, dense_rows: np.ndarray, dense: np.ndarray
) -> np.ndarray:
    """The rows a hybrid search fuses (sorted): the keyword side's best FUSION_DEPTH
    (`keyword_best`) and the dense side's, from the rows it scored (`dense_rows`, sorted, with
    their `dense` scores)."""
    dense_best = dense_rows[best(dense, FUSION_DEPTH)]
    return dense_best if keyword_best is None else union(keyword_best, dense_best)


def union(*rows: np.ndarray) -> np.ndarray:
    """The distinct rows of several arrays, sorted: np.union1d's answer, a quarter of its cost
    on a search's few hundred rows (it hashes them first)."""
    joined = np.sort(np.concatenate(rows))
    if joined.size < 2:
        return joined
    distinct: np.ndarray = joined[np.concatenate([[True], joined[1:] != joined[:-1]])]
    return distinct


def fuse(keyword: np.ndarray, dense: np.ndarray) -> np.ndarray:
    """Weighted z-score fusion of the keyword and dense scores of the candidates (the rows either
    ranking puts in its best FUSION_DEPTH), shifted to stay positive as `top` expects; every
    other row scores 0."""
    if not keyword.size:
        return np.zeros(0, dtype=np.float64)
    combined = _standardise(keyword) + DENSE_WEIGHT * _standardise(dense)
    shifted: np.ndarray = combined - combined.min() + 1.0
    return shifted


def _standardise(values: np.ndarray) -> np.ndarray:
    values = values.astype(np.float64)
    standard: np.ndarray = (values - values.mean()) / (values.std() + 1e-9)
    return standard


def best(scores: np.ndarray, k: int) -> np.ndarray:
    """Rows of the k highest positive scores, in row order; of rows tied at the k-th score,
    the first. Over many scores (a keyword ranking's, one per chunk row) a strided sample's
    k-th best is a score at least k rows reach, so only the rows at or above it are selected
    among: a fifth of the cost of selecting among every positive score on ObliQA's (0.02
    against 0.1 ms), the same rows."""
    if scores.size <= k:  # a ranking's own best (`top` over candidates): every positive one
        return np.flatnonzero(scores > 0)
    step = math.isqrt(scores.size // k)
    if step > 1:
        sample = scores[::step]
        low = np.partition(sample, sample.size - k)[sample.size - k]
        if low > 0:
            near = np.flatnonzero(scores >= low)
            picked: np.ndarray = near[_selected(scores[near], k)]
            return picked
    return _selected(scores, k)


def _selected(scores: np.ndarray, k: int) -> np.ndarray:
    """`best`, by partitioning the positive values alone: faster than partitioning rows, and
    than partitioning every value, since numpy's selection slows on the zeros of the rows a
    search did not touch (1.8 against 0.5 ms on ObliQA's keyword scores, a third of them
    positive)."""
    positive = np.compress(scores > 0, scores)
    if positive.size <= k:
        return np.flatnonzero(scores > 0)
    kth = np.partition(positive, positive.size - k)[positive.size - k]
    rows = np.flatnonzero(scores >= kth)
    if rows.size > k:
        above = scores[rows] > kth
        tied = np.flatnonzero(~above)[: k - np.count_nonzero(above)]
        rows = np.sort(np.concatenate([rows[above], rows[tied]]))
    return rows


# Up to this many candidates, `top` sorts them in Python.
_SORTED_IN_PYTHON = 64


def top(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k highest positive scores, best first; ties break by position, so
    over rows in order equal scores come back in document order."""
    candidates = best(scores, k)
    if candidates.size <= _SORTED_IN_PYTHON:
        # A few candidates (a keyword ranking's own best): a stable sort of Python floats costs
        # less than numpy's calls on ten values.
        values = scores[candidates].tolist()
        order = sorted(range(candidates.size), key=lambda n: -values[n])
        return candidates[order]
    return candidates[np.lexsort((candidates, -scores[candidates]))]


def held(rows: np.ndarray, values: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The values of `wanted` rows among `rows` (sorted, one value each): where each is held,
    and its value there (0 where it is not)."""
    found = np.zeros(wanted.size, dtype=values.dtype)
    if not rows.size or not wanted.size:
        return np.zeros(wanted.size, dtype=bool), found
    at = np.minimum(np.searchsorted(rows, wanted), rows.size - 1)
    mask = rows[at] == wanted
    found[mask] = values[at[mask]]
    return mask, found
