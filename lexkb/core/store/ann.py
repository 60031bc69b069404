"""Approximate dense candidates (usearch HNSW) for snapshots past the exact-search crossover.

Exact search multiplies the query with every vector: on this 2-core machine about 58 µs per
1,000 vectors (2.4 ms for ObliQA's 41,061, 24 ms for ten times as many), while the graph
answers in 0.3 ms at either size (benchmarks/ann.py, BENCHMARKS.md "Approximate vector
search"). From `MIN_VECTORS`, where the exact product passes 5 ms (half of a hybrid search's
10 ms, the query's own embedding taking the other half), publishing also writes
`vectors.usearch`, an HNSW graph over the chunk and line vectors, which `Index.open` maps
read-only, and the vectors are stored row by row (a candidate's row is then one read). A
search then asks the graph for its nearest DEPTH vectors, adds the keyword side's
own candidates, and scores exactly those rows (own vector and lines) with the stored vectors:
the ranking and the calibrated relevance see true cosines, only the candidate set is
approximate. A filter that keeps few rows, where the graph's neighbours would mostly be
filtered out, falls back to exact search.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from lexkb.core import environment

FILE = "vectors.usearch"
# Vectors (chunks and lines) from which a snapshot gets a graph; LEXKB_ANN_MIN_VECTORS sets it.
MIN_VECTORS = 100_000
# Neighbours asked of the graph per search: fusion reads each side's best 200 paragraphs, and
# some neighbours are lines of one paragraph or rows a filter drops.
DEPTH = 400
# A filter keeping less than this share of the rows searches exactly.
MIN_KEPT_SHARE = 0.25
CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = DEPTH
# Vectors inserted one at a time before the rest go in on every core: concurrent inserts into
# a near-empty graph can leave a vector no neighbour links to (on an 81-vector snapshot, one
# build in twenty lost a top-3 neighbour), and a graph this size builds in a second anyway.
SERIAL_FIRST = 10_000


def min_vectors() -> int:
    return environment.ann_min_vectors(MIN_VECTORS)


def write(directory: Path, vectors: np.ndarray, line_vectors: np.ndarray) -> bool:
    """Build and save the graph when the snapshot has enough vectors. Keys: a chunk's row for
    its own vector, the row count plus the line's position for a line vector."""
    total = len(vectors) + len(line_vectors)
    if total < max(1, min_vectors()):
        return False
    from usearch.index import Index as Graph

    graph = Graph(
        ndim=vectors.shape[1],
        metric="ip",
        dtype="f32",
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )
    both = np.ascontiguousarray(np.vstack([vectors, line_vectors]), dtype=np.float32)
    keys = np.arange(total, dtype=np.uint64)
    head = min(total, SERIAL_FIRST)
    graph.add(keys[:head], both[:head], threads=1)
    if head < total:
        graph.add(keys[head:], both[head:], threads=os.cpu_count() or 1)
    graph.save(str(directory / FILE))
    return True


class Candidates:
    """The mapped graph of one snapshot."""

    def __init__(self, path: Path, rows: int, line_owners: np.ndarray) -> None:
        from usearch.index import Index as Graph

        graph = Graph.restore(str(path), view=True)
        if graph is None:  # usearch reads no graph's metadata there
            raise ValueError(f"{path} holds no usearch graph")
        self._graph = graph
        self._rows = rows
        self._line_owners = line_owners  # owner row of each stored line vector, in stored order

    def rows(self, query: np.ndarray, depth: int = DEPTH) -> np.ndarray:
        """Chunk rows whose own vector or one of whose lines is among the nearest `depth`."""
        query = np.ascontiguousarray(query, dtype=np.float32)
        keys = np.asarray(self._graph.search(query, depth, threads=1).keys, dtype=np.int64)
        own = keys[keys < self._rows]
        lines = self._line_owners[keys[keys >= self._rows] - self._rows]
        rows = np.sort(np.concatenate([own, lines]))
        return rows[np.concatenate([[True], rows[1:] != rows[:-1]])] if rows.size else rows


def line_owner_per_vector(owners: np.ndarray, starts: np.ndarray, count: int) -> np.ndarray:
    """Expand (owner, first position) runs into the owner row of every stored line vector."""
    if not count:
        return np.zeros(0, dtype=np.int64)
    lengths = np.diff(np.append(starts, count))
    return np.repeat(owners, lengths)
