"""Exact dense search against approximate indexes (usearch, hnswlib), as the corpus grows.

Where does exact search stop being good enough? This takes a snapshot's real vectors (chunks and
lines, 1x) and grows them with synthetic near-copies (each a real vector plus Gaussian noise,
cosine about 0.9 to its source, as a paragraph repeated with small changes in another document
would be), then for each size measures, on the same held-out ObliQA questions:
  exact: numpy product with every vector (as lexkb.Index does), top 10;
  usearch HNSW (f32 and i8 storage) and, when installed (`pip install hnswlib==0.8.0`, built
  from source: not in the lock), hnswlib HNSW: build time, size, recall@10 of the exact top 10,
  p50/p95 latency of one query.

    .venv/bin/python -m benchmarks.ann --index benchmarks/out/obliqa/index --sizes 1,4,10
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import time
from pathlib import Path

import numpy as np

from evaluation_data.obliqa import held_out, load_questions
from lexkb.index import Index

REPO = Path(__file__).resolve().parent.parent


K = 10
NOISE = 0.0247  # per dimension: cosine about 0.9 between a near-copy and its source


def grown(base: np.ndarray, factor: int, seed: int = 7) -> np.ndarray:
    """`base` and factor - 1 noisy copies of it, unit length, float32."""
    rng = np.random.default_rng(seed)
    parts = [base]
    for _ in range(factor - 1):
        copy = base + rng.normal(0.0, NOISE, base.shape).astype(np.float32)
        parts.append(copy / np.linalg.norm(copy, axis=1, keepdims=True))
    return np.ascontiguousarray(np.vstack(parts), dtype=np.float32)


def percentiles(seconds: list[float]) -> dict[str, float]:
    ms = np.asarray(seconds) * 1000
    return {"p50_ms": float(np.percentile(ms, 50)), "p95_ms": float(np.percentile(ms, 95))}


def exact(vectors: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, dict]:
    matrix = np.asfortranarray(vectors)
    found, times = [], []
    for query in queries:
        started = time.perf_counter()
        scores = matrix @ query
        top = np.argpartition(-scores, K)[:K]
        times.append(time.perf_counter() - started)
        found.append(top)
    return np.array(found), {**percentiles(times), "bytes": int(vectors.nbytes)}


def recall(found: list[np.ndarray], truth: np.ndarray) -> float:
    return float(np.mean([len(set(f) & set(t)) / K for f, t in zip(found, truth, strict=True)]))


def run_usearch(vectors: np.ndarray, queries: np.ndarray, truth: np.ndarray, dtype: str) -> dict:
    from usearch.index import Index as UIndex

    index = UIndex(
        ndim=vectors.shape[1],
        metric="cos",
        dtype=dtype,
        connectivity=16,
        expansion_add=128,
        expansion_search=64,
    )
    started = time.perf_counter()
    index.add(np.arange(len(vectors)), vectors, threads=2)
    build = time.perf_counter() - started
    found, times = [], []
    for query in queries:
        started = time.perf_counter()
        matches = index.search(query, K, threads=1)
        times.append(time.perf_counter() - started)
        found.append(np.asarray(matches.keys))
    return {
        "build_s": build,
        "bytes": int(index.memory_usage),
        "recall@10": recall(found, truth),
        **percentiles(times),
    }


def run_hnswlib(vectors: np.ndarray, queries: np.ndarray, truth: np.ndarray) -> dict:
    import hnswlib

    index = hnswlib.Index(space="ip", dim=vectors.shape[1])
    index.init_index(max_elements=len(vectors), ef_construction=128, M=16)
    index.set_num_threads(2)
    started = time.perf_counter()
    index.add_items(vectors, np.arange(len(vectors)))
    build = time.perf_counter() - started
    index.set_ef(64)
    index.set_num_threads(1)
    found, times = [], []
    for query in queries:
        started = time.perf_counter()
        labels, _ = index.knn_query(query, k=K)
        times.append(time.perf_counter() - started)
        found.append(labels[0])
    size = len(vectors) * (vectors.shape[1] * 4 + 16 * 2 * 4 + 16)  # data + level-0 links
    return {
        "build_s": build,
        "bytes_estimate": size,
        "recall@10": recall(found, truth),
        **percentiles(times),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, default=REPO / "benchmarks/out/obliqa/index")
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared/data/obliqa")
    parser.add_argument("--sizes", default="1,4,10", help="growth factors over the snapshot")
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    index = Index.open(args.index)
    base = np.vstack([np.asarray(index.dense.vectors), np.asarray(index.dense.line_vectors)])
    base = np.ascontiguousarray(base, dtype=np.float32)
    asked = [q for q in load_questions(args.data) if held_out(q)][: args.queries]
    queries = np.vstack([index.query_embedder.embed_query(q["Question"]) for q in asked])
    report = []
    for factor in (int(f) for f in args.sizes.split(",")):
        vectors = grown(base, factor)
        truth, plain = exact(vectors, queries)
        row = {"factor": factor, "vectors": len(vectors), "exact": plain}
        print(json.dumps(row), flush=True)
        for dtype in ("f32", "i8"):
            row[f"usearch_{dtype}"] = run_usearch(vectors, queries, truth, dtype)
            print(dtype, json.dumps(row[f"usearch_{dtype}"]), flush=True)
        if importlib.util.find_spec("hnswlib"):
            row["hnswlib"] = run_hnswlib(vectors, queries, truth)
            print("hnswlib", json.dumps(row["hnswlib"]), flush=True)
        report.append(row)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
