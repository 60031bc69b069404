"""The citation graph of a snapshot, in memory: who cites whom, walked in both directions.

A paragraph's meaning often lives in the paragraphs it cites (a definition, the rule an exemption
refers to) and in those that cite it (the guidance on a rule). Edges are stored once; both
directions are CSR arrays over chunk rows, so the neighbours of a row are two slices.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

CITES = "cites"
CITED_BY = "cited-by"


@dataclass(frozen=True)
class Step:
    """One edge of a path: the chunk reached, and how (`cites`: the previous chunk cites it;
    `cited-by`: it cites the previous chunk), with the words of the citation."""

    chunk_id: str
    ref: str | None
    direction: str
    relation: str
    reference_text: str
    weight: float


class CitationGraph:
    def __init__(self, edges: pl.DataFrame, row_of: dict[str, int], n_rows: int) -> None:
        resolved = edges.filter(
            pl.col("target_chunk_id").is_not_null()
            & (pl.col("source_chunk_id") != pl.col("target_chunk_id"))
        )
        self._sources = np.array([row_of[c] for c in resolved["source_chunk_id"]], dtype=np.int64)
        self._targets = np.array([row_of[c] for c in resolved["target_chunk_id"]], dtype=np.int64)
        self._weights = resolved["weight"].to_numpy().astype(np.float32)
        self._relations: list[str] = resolved["relation"].to_list()
        self._texts = resolved["reference_text"].to_list()
        self._out = _csr(self._sources, n_rows)
        self._in = _csr(self._targets, n_rows)
        self.edge_count = resolved.height

    def neighbours(self, row: int) -> list[tuple[int, str, int]]:
        """(neighbour row, direction, edge index) for every edge touching `row`."""
        found = []
        order, indptr = self._out
        for edge in order[indptr[row] : indptr[row + 1]]:
            found.append((int(self._targets[edge]), CITES, int(edge)))
        order, indptr = self._in
        for edge in order[indptr[row] : indptr[row + 1]]:
            found.append((int(self._sources[edge]), CITED_BY, int(edge)))
        return found

    def step(self, direction: str, edge: int, chunk_id: str, ref: str | None) -> Step:
        return Step(
            chunk_id,
            ref,
            direction,
            self._relations[edge],
            self._texts[edge],
            float(self._weights[edge]),
        )

    def most_cited(self, n: int) -> list[int]:
        """The `n` rows cited most often, most first (ties by row)."""
        counts = np.bincount(self._targets, minlength=self._in[1].size - 1)
        order = np.lexsort((np.arange(counts.size), -counts))
        return [int(r) for r in order[:n] if counts[r] > 0]

    def relation(self, edge: int) -> str:
        return self._relations[edge]

    def weight(self, edge: int) -> float:
        return float(self._weights[edge])

    def walk(
        self, starts: Sequence[int], max_hops: int, decay: float, min_score: float
    ) -> dict[int, tuple[float, int, list[tuple[int, str, int]]]]:
        """Best score of every row reachable in at most `max_hops` edges: a path scores the
        product of decay x edge weight over its edges, and paths below `min_score` stop.
        `starts` are the chunks of one unit (a section and its one paragraph), all at hop 0.
        Returns row -> (score, hops, path as (row, direction, edge) from the start)."""
        best: dict[int, tuple[float, int, list[tuple[int, str, int]]]] = {
            start: (1.0, 0, []) for start in starts
        }
        frontier = set(starts)
        for hop in range(1, max_hops + 1):
            reached: set[int] = set()
            for row in sorted(frontier):
                score, _, path = best[row]
                for other, direction, edge in self.neighbours(row):
                    value = score * decay * self.weight(edge)
                    if value < min_score or value <= best.get(other, (0.0,))[0]:
                        continue
                    best[other] = (value, hop, [*path, (other, direction, edge)])
                    reached.add(other)
            frontier = reached
            if not frontier:
                break
        for start in starts:
            best.pop(start)
        return best


def _csr(keys: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(keys, kind="stable")
    counts = np.bincount(keys, minlength=n_rows)
    return order, np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
