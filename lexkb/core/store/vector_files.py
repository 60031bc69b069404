"""A snapshot's vectors as raw arrays beside its Parquet tables, for `Index.open` to map.

Parquet keeps the vectors as the tables every tool reads; decoding them cost most of an open
(0.41 s of 0.54 s on ObliQA). The same vectors are also written as NumPy `.npy` files, float32,
row-major (a search scores its candidates' rows, lexkb.dense_scan), chunk vectors in chunk row
order and line vectors in the order of their owners' rows. `Index.open` maps them read-only:
nothing is decoded, pages are read as search touches them, and every process serving the same
snapshot shares them through the page cache. On POSIX a mapped file stays readable after a prune
removes it, so a long-lived reader is never cut off.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from lexkb.core.store import ann

CHUNK_VECTORS = "vectors.npy"
LINE_VECTORS = "line_vectors.npy"


def line_order(owners: np.ndarray) -> np.ndarray:
    """The order line vectors are stored in: by owner row, ties in table order."""
    return np.argsort(owners, kind="stable")


def write(
    directory: Path,
    chunks: pl.DataFrame,
    embeddings: pl.DataFrame,
    lines: pl.DataFrame,
    dimension: int,
    graph: bool = True,
) -> None:
    """Row-major, with a graph (lexkb.core.store.ann) when the snapshot is past its crossover
    and `graph` (a part of a sharded snapshot has none: lexkb.dense)."""
    row_of = {cid: row for row, cid in enumerate(chunks["chunk_id"])}
    vectors = np.zeros((chunks.height, dimension), dtype=np.float32)
    rows = np.array([row_of[c] for c in embeddings["chunk_id"]], dtype=np.int64)
    if rows.size:
        vectors[rows] = matrix(embeddings["vector"], dimension)
    owners = np.array([row_of[c] for c in lines["chunk_id"]], dtype=np.int64)
    ordered = matrix(lines["vector"], dimension)[line_order(owners)]
    if graph:
        ann.write(directory, vectors, ordered)
    np.save(directory / CHUNK_VECTORS, vectors)
    np.save(directory / LINE_VECTORS, np.ascontiguousarray(ordered))


def read(directory: Path) -> tuple[np.ndarray, np.ndarray]:
    """(chunk vectors, line vectors), memory-mapped read-only."""
    return (
        np.load(directory / CHUNK_VECTORS, mmap_mode="r"),
        np.load(directory / LINE_VECTORS, mmap_mode="r"),
    )


def matrix(column: pl.Series, dimension: int) -> np.ndarray:
    """A column of vectors (lists or arrays of `dimension` floats) as a float32 matrix."""
    if column.is_empty():
        return np.zeros((0, dimension), dtype=np.float32)
    return column.explode().to_numpy().astype(np.float32).reshape(column.len(), dimension)
