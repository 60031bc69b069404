"""The best rows of a ranking (lexkb.fusion.best): a strided sample's bound must select the rows
a full sort does, ties at the k-th score broken by row, zeros never selected."""

from __future__ import annotations

import numpy as np

from lexkb import fusion


def test_best_from_a_sample_is_best_of_a_full_sort() -> None:
    rng = np.random.default_rng(57)
    for size in (5, 200, 3_000, 40_000):
        for positive in (0.01, 0.3, 1.0):
            # Few distinct values, so ties at the k-th score are common.
            scores = rng.integers(1, 50, size).astype(np.float32)
            scores[rng.random(size) >= positive] = 0.0
            ranked = np.lexsort((np.arange(size), -scores))
            ranked = ranked[scores[ranked] > 0]
            for k in (1, 10, 200, 1_000):
                assert np.array_equal(fusion.best(scores, k), np.sort(ranked[:k]))
