"""Several row-major matrices read as one, without copying them: a sharded snapshot's vectors,
each shard's `.npy` file memory-mapped (lexkb.core.store.vector_files), so opening it reads no
vector and every process serving it shares the pages.

Products are taken row by row with einsum (`products`), for one array as for stacked ones: its
float32 sum for a row is the same whichever rows are multiplied with it, so a full scan, a
candidate set (lexkb.dense.Dense.cosine_rows) and a sharded snapshot agree bit for bit. BLAS's
gemv does not: it splits rows among threads and sums their tails apart, and the same row scored
1e-8 differently by where a shard or a thread began (no faster on ObliQA: 0.8 vs 1.1 ms for
16,779 chunk vectors, 2.6 vs 2.5 ms for 36,149 line vectors).
"""

from __future__ import annotations

import numpy as np


class StackedRows:
    """The rows of `blocks` (2-D arrays of one width and dtype) one after another."""

    def __init__(self, blocks: list[np.ndarray]) -> None:
        if not blocks:
            raise ValueError("stacked rows need at least one block")
        self.blocks = blocks
        self.starts = np.cumsum([0, *(len(block) for block in blocks)]).astype(np.int64)
        self.shape = (int(self.starts[-1]), blocks[0].shape[1])
        self.dtype = blocks[0].dtype

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows: np.ndarray) -> np.ndarray:
        """Rows by number, in the order asked, as one new array: `stacked[rows]`."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.empty((rows.size, self.shape[1]), dtype=self.dtype)
        block_of = np.searchsorted(self.starts, rows, side="right") - 1
        for block in np.unique(block_of):
            mine = block_of == block
            out[mine] = self.blocks[block][rows[mine] - self.starts[block]]
        return out

    def __array__(self, dtype: np.dtype | None = None, copy: bool | None = None) -> np.ndarray:
        """Every row in one array: a copy, for tools that want one (benchmarks)."""
        whole = np.concatenate(self.blocks)
        return whole if dtype is None else whole.astype(dtype)


Vectors = np.ndarray | StackedRows


def blocks_of(vectors: Vectors) -> list[np.ndarray]:
    return vectors.blocks if isinstance(vectors, StackedRows) else [vectors]


def products(vectors: Vectors, query: np.ndarray) -> np.ndarray:
    """Each row's dot product with `query` (see the module docstring for why einsum)."""
    parts = [np.einsum("ij,j->i", block, query) for block in blocks_of(vectors)]
    return parts[0] if len(parts) == 1 else np.concatenate(parts)
