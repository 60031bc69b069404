"""Line vectors of list paragraphs: embedded alone, pooled from the paragraph's own pass, or none.

A list paragraph gets one vector per line so that a question about one item finds it
(transforms/indexing/chunk_embeddings.py). Embedding every line again costs model time; pooling the line's
token states from the paragraph's pass ("late chunking") costs none. This compares the three
on ObliQA dev (tune half and held-out half, hybrid and vector search) by swapping the line
vectors of one opened index, and times what each way of making them costs the model.

    .venv/bin/python -m benchmarks.line_vectors --index benchmarks/out/obliqa/index
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import polars as pl

from benchmarks import obliqa
from evaluation_data.obliqa import held_out, load_questions
from lexkb.core.embed.embedders import LocalEmbedder
from lexkb.core.store import vector_files
from lexkb.index import Index
from transforms.indexing.chunk_embeddings import line_spans

REPO = Path(__file__).resolve().parent.parent


def line_vectors(index: Index, embedder: LocalEmbedder) -> tuple[dict, dict]:
    """Both ways of making the index's line vectors, in its line table's order, with the
    seconds and texts each took, and the seconds the same paragraphs take embedded plainly
    (their first window only, which a build pays for anyway)."""
    lines = pl.read_parquet(
        index.snapshot.table_path("line_embeddings"), columns=["chunk_id", "line"]
    )
    content = dict(
        pl.read_parquet(index.snapshot.table_path("chunks"), columns=["chunk_id", "content"]).rows()
    )
    owners = list(dict.fromkeys(lines["chunk_id"]))
    texts = [content[c] for c in owners]
    spans = [line_spans(t) for t in texts]
    started = time.perf_counter()
    embedder.embed_documents(texts)
    plain_seconds = time.perf_counter() - started
    started = time.perf_counter()
    _, pooled = embedder.embed_with_spans(texts, spans)
    pooled_seconds = time.perf_counter() - started
    alone_texts = sorted({t[a:b] for t, s in zip(texts, spans, strict=True) for a, b in s})
    started = time.perf_counter()
    alone_vectors = dict(zip(alone_texts, embedder.embed_documents(alone_texts), strict=True))
    alone_seconds = time.perf_counter() - started
    by_owner = dict(zip(owners, range(len(owners)), strict=True))
    made = {"alone": [], "pooled": []}
    cut = 0
    for chunk_id, number in lines.iter_rows():
        text, span = texts[by_owner[chunk_id]], spans[by_owner[chunk_id]][number - 1]
        alone = alone_vectors[text[span[0] : span[1]]]
        vector = pooled[by_owner[chunk_id]][number - 1]
        cut += vector is None
        made["alone"].append(alone)
        # A line no window placed is embedded alone by the build too.
        made["pooled"].append(alone if vector is None else vector)
    cost = {
        "alone": {"seconds": alone_seconds, "texts": len(alone_texts)},
        "pooled": {"seconds": pooled_seconds, "texts": len(texts), "lines_unplaced": cut},
        # What the build spends on these paragraphs anyway (their first window).
        "paragraphs_plain": {"seconds": plain_seconds, "texts": len(texts)},
    }
    return {k: np.asarray(v, dtype=np.float32) for k, v in made.items()}, cost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, default=REPO / "benchmarks/out/obliqa/index")
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared/data/obliqa")
    args = parser.parse_args()
    index = Index.open(args.index)
    questions = load_questions(args.data)
    halves = {
        "tune": [q for q in questions if not held_out(q)],
        "held-out": [q for q in questions if held_out(q)],
    }
    made, cost = line_vectors(index, LocalEmbedder())
    lines = pl.read_parquet(index.snapshot.table_path("line_embeddings"), columns=["chunk_id"])
    order = vector_files.line_order(index.rows(lines["chunk_id"].to_list()))
    dense = index.dense
    owners, starts = dense.line_owners, dense.line_starts
    report = {"cost": cost, "retrieval": {}}
    for variant in ("alone", "pooled", "none"):
        if variant == "none":
            none = np.zeros(0, dtype=np.int64)
            dense.use_lines(dense.line_vectors[:0], none, none)
        else:
            dense.use_lines(np.asfortranarray(made[variant][order]), owners, starts)
        for mode in ("hybrid", "vector"):
            for half, asked in halves.items():
                runs, _, _ = obliqa.run_lexkb(index, asked, mode=mode)
                scores = {k: round(v, 4) for k, v in obliqa.metrics(runs, asked).items()}
                report["retrieval"][f"{variant} {mode} {half}"] = scores
                print(variant, mode, half, scores, flush=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
