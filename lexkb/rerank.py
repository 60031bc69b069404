"""Reranking a search's first hits with the relevance model trained here (lexkb.core.judge).

The model reads the query with each of the first RERANK_DEPTH paragraphs the search found and
gives the chance that the paragraph answers it. The paragraphs are then ordered by that chance
blended with the search's own order (reciprocal ranks, SEARCH_WEIGHT to the search): the model
knows what answers a question, the search what shares its words and sense, and each corrects the
other's errors (benchmarks/rerank.py chose the blend on ObliQA dev's tune half). The chance is
kept on each hit as `answers`, which `evidence` reads to abstain when no source answers.
"""

from __future__ import annotations

import numpy as np

from lexkb.core.judge.shipped import answers

RERANK_DEPTH = 30
SEARCH_WEIGHT = 0.4
_RANK_OFFSET = 10  # reciprocal rank fusion's k: how fast a lower rank loses weight


def blend(chances: np.ndarray, search_weight: float = SEARCH_WEIGHT) -> np.ndarray:
    """The order (indexes, best first) of rows ranked by the search, by their chances blended
    with that rank: reciprocal ranks, `search_weight` to the search."""
    model_rank = np.empty(len(chances), int)
    model_rank[np.argsort(-chances, kind="stable")] = np.arange(len(chances))
    search_rank = np.arange(len(chances))
    blended = (1.0 - search_weight) / (_RANK_OFFSET + model_rank) + search_weight / (
        _RANK_OFFSET + search_rank
    )
    return np.argsort(-blended, kind="stable")


def rerank(query: str, order: np.ndarray, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """`order` (rows, best first) reordered, and each row's chance of answering, in the new
    order."""
    chances = answers(query, texts)
    new = blend(chances)
    return order[new], chances[new]
