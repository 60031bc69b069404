"""Dense candidates from an int8 scan of every vector, for snapshots between a few thousand
vectors and the graph's crossover (lexkb.core.store.ann).

Exact search reads every float32 vector per query: 63 MB for ObliQA's 41,061 chunk and line
vectors, 2.1-3.2 ms on this machine, bound by memory, and done with OpenBLAS, whose threads
then spin and slow the next query's embedding (BENCHMARKS.md "Query latency"). A copy of the
vectors rounded to small integers (each vector with its own scale) is a quarter of the bytes,
and onnxruntime's integer product (MatMulInteger) reads it in 0.3-0.6 ms on threads that sleep
when done. Its scores are within 0.005 of the true cosines on ObliQA, so the best DEPTH rows by
it hold the true best paragraphs a hybrid search fuses (FUSION_DEPTH, 200), and those rows are
then scored exactly from the float32 vectors: ranking and calibrated relevance see true
cosines, only the candidate set is approximate (benchmarks/speed.py counts the searches whose
hits differ from exact search: none of 1,000 ObliQA questions). Filters apply before the
candidates are chosen, so a filter that keeps few rows loses nothing.

The int8 copy and the onnxruntime session are made on the first dense search (about 0.3 s for
ObliQA), not at open.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lexkb.stacked_rows import Vectors, blocks_of

# Vectors (chunks and lines) from which a search scans int8 rather than multiplying exactly.
MIN_VECTORS = 5_000
# Rows taken from the scan per search, for exact scores: fusion reads the best 200.
DEPTH = 400
# Lines read exactly: those whose integer score is within this of their row's best (the
# integer scores are within about 0.005 of the true cosines).
MARGIN = 0.02
_BLOCK = 8_192  # vectors rounded at a time, to bound the float copies made while rounding
_QUERY_ZERO = 128  # the query is rounded to uint8 around this zero point
# Vectors are rounded to 7 bits (-63..63), not 8: without VNNI, onnxruntime's uint8 x int8
# kernel adds pairs of products in 16 bits, which 255 x 127 x 2 overflows and 255 x 63 x 2
# does not (onnxruntime's quantization tools call this `reduce_range`).
_LEVELS = 63


def rounded(matrices: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Each vector of `matrices`, one after another, as 7-bit integers with its own scale:
    (int8 rows, float32 scales). Read a block at a time: no float copy of them all is made."""
    total = sum(len(matrix) for matrix in matrices)
    weights = np.zeros((total, matrices[0].shape[1]), dtype=np.int8)
    scales = np.ones(total, dtype=np.float32)
    at = 0
    for vectors in matrices:
        for start in range(0, len(vectors), _BLOCK):
            block = np.asarray(vectors[start : start + _BLOCK], dtype=np.float32)
            peak = np.abs(block).max(axis=1) / _LEVELS
            peak[peak == 0] = 1.0
            weights[at : at + len(block)] = np.rint(block / peak[:, None])
            scales[at : at + len(block)] = peak
            at += len(block)
    return weights, scales


def spans(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every position of the runs [start, start + length), run after run, and where each run
    begins among them: the line vectors of some rows, read in one gather."""
    offsets = np.cumsum(lengths) - lengths
    positions = np.arange(lengths.sum()) - np.repeat(offsets, lengths) + np.repeat(starts, lengths)
    return positions, offsets


def _session(weights: np.ndarray, scales: np.ndarray) -> Any:  # onnxruntime ships no types
    """An onnxruntime session computing int8 products with the (uint8) query, scaled back."""
    from onnx import TensorProto, helper, numpy_helper

    from lexkb.core import offline

    onnxruntime = offline.onnxruntime()

    dimension, keys = weights.shape[1], weights.shape[0]
    graph = helper.make_graph(
        [
            helper.make_node("MatMulInteger", ["query", "weights", "zero"], ["products"]),
            helper.make_node("Cast", ["products"], ["floats"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["floats", "scales"], ["scores"]),
        ],
        "int8_scan",
        [helper.make_tensor_value_info("query", TensorProto.UINT8, [1, dimension])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, keys])],
        [
            numpy_helper.from_array(np.ascontiguousarray(weights.T), "weights"),
            numpy_helper.from_array(np.array(_QUERY_ZERO, dtype=np.uint8), "zero"),
            numpy_helper.from_array(scales, "scales"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    # Sleep when done: the query's next embedding needs the cores (see the module docstring).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


class Int8Scan:
    """The int8 scan of one snapshot's vectors: chunk rows' own vectors, then line vectors
    stored by owner row (`line_owners`, each row's first line at `line_starts`, as
    lexkb.core.store.vector_files stores them), each one array or a sharded snapshot's stacked
    ones (lexkb.stacked_rows). Keeps references to the float32 vectors for exact scores."""

    def __init__(
        self,
        vectors: Vectors,
        line_vectors: Vectors,
        line_owners: np.ndarray,
        line_starts: np.ndarray,
    ) -> None:
        weights, scales = rounded([*blocks_of(vectors), *blocks_of(line_vectors)])
        self._session = _session(weights, scales)
        self._vectors, self._line_vectors = vectors, line_vectors
        self._line_owners, self._line_starts = line_owners, line_starts
        self._line_ends = np.append(line_starts[1:], len(line_vectors)).astype(np.int64)

    def scan(self, query: np.ndarray) -> Scanned:
        step = float(np.abs(query).max()) / 127.0 or 1.0
        rounded_query = (np.rint(query / step) + _QUERY_ZERO).astype(np.uint8)[None, :]
        keys = self._session.run(None, {"query": rounded_query})[0][0]
        keys *= step
        rows = len(self._vectors)
        best = keys[:rows].copy()
        if self._line_owners.size:
            lines = np.maximum.reduceat(keys[rows:], self._line_starts)
            best[self._line_owners] = np.maximum(best[self._line_owners], lines)
        return Scanned(self, query, keys, best)


@dataclass(frozen=True)
class Scanned:
    """One query's integer scores: `keys` per stored vector, `rows` per chunk row (the best of
    its own vector and its lines), both within about 0.005 of the true cosines."""

    scan: Int8Scan
    query: np.ndarray
    keys: np.ndarray
    rows: np.ndarray

    def best_rows(self, keep: np.ndarray, depth: int = DEPTH) -> np.ndarray:
        """The `depth` rows `keep` marks with the highest scores, sorted."""
        scores = np.where(keep, self.rows, -np.inf)
        if depth < scores.size:
            chosen = np.argpartition(-scores, depth)[:depth]
        else:
            chosen = np.arange(scores.size)
        return np.sort(chosen[np.isfinite(scores[chosen])])

    def exact(self, rows: np.ndarray) -> np.ndarray:
        """The true cosines of `rows` (sorted): a row's own vector or its best line. Only lines
        whose int8 score comes within MARGIN of the row's best are read, so a row with a long
        list costs a few products, not one per line."""
        scan = self.scan
        scores: np.ndarray = np.einsum("ij,j->i", scan._vectors[rows], self.query).astype(
            np.float32
        )
        owners = scan._line_owners
        if not owners.size or not rows.size:
            return scores
        at = np.minimum(np.searchsorted(owners, rows), owners.size - 1)
        has = np.flatnonzero(owners[at] == rows)
        if not has.size:
            return scores
        starts = scan._line_starts[at[has]]
        lengths = scan._line_ends[at[has]] - starts
        positions, _ = spans(starts, lengths)
        holder = np.repeat(has, lengths)
        near = self.keys[len(scan._vectors) + positions] >= self.rows[rows[holder]] - MARGIN
        positions, holder = positions[near], holder[near]
        exact = np.einsum("ij,j->i", scan._line_vectors[positions], self.query)
        np.maximum.at(scores, holder, exact.astype(np.float32))
        return scores
