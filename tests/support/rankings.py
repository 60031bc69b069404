"""Comparing a ranking made from candidates with one made by exact search."""

from __future__ import annotations

import pytest

from lexkb.results import Hit


def assert_same_ranking(found: list[Hit], truth: list[Hit], tie: float = 1e-5) -> None:
    """The same hits in the same order with the same scores and relevances, except that two
    hits whose scores tie within `tie` may come in either order: candidates are scored with
    another summation order than the product over every vector, which moves a cosine in its
    seventh digit, enough to swap exact ties and nothing else."""
    assert [h.score for h in found] == pytest.approx([h.score for h in truth], abs=tie)
    assert [h.relevance for h in found] == pytest.approx([h.relevance for h in truth], abs=1e-3)
    scores = {h.chunk_id: h.score for h in truth}
    for mine, theirs in zip(found, truth, strict=True):
        if mine.chunk_id != theirs.chunk_id:
            tied = mine.chunk_id in scores and abs(scores[mine.chunk_id] - theirs.score) <= tie
            at_the_end = abs(mine.score - truth[-1].score) <= tie
            assert tied or at_the_end, f"{mine.chunk_id} is not a tie of {theirs.chunk_id}"
