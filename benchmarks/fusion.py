"""Fused attention and GELU (lexkb.core.embed.onnx_fusions) against the packaged model's own graph.

    .venv/bin/python -m benchmarks.fusion [--texts 600] [--questions 1000]

Side by side in one process, taking turns in blocks so a slow spell of this shared machine
falls on both: documents embedded as the build embeds them (float products, batches by token
budget) and ObliQA dev questions one at a time as a service embeds them (integer products),
each by the unfused graph and by the fused one. Reports throughput or p50/p95 latency, and how
far the vectors move: fused against unfused, and each query model against the float model that
embedded the snapshot's documents.
"""

from __future__ import annotations

import argparse
import json
import time
import zipfile
from pathlib import Path

import numpy as np

from lexkb.core.embed.embedders import LocalEmbedder

REPO = Path(__file__).resolve().parent.parent


DATA = REPO.parent / "shared/data/obliqa"
BLOCK = 50


def unfused(serving: bool) -> LocalEmbedder:
    """An embedder running the packaged graph as exported (integer products when `serving`)."""
    embedder = LocalEmbedder(serving=serving, fused=False)
    embedder.warm()
    return embedder


def paragraphs(count: int) -> list[str]:
    """`count` ObliQA passages of more than 200 characters, spread over the documents."""
    texts = []
    with zipfile.ZipFile(DATA / "StructuredRegulatoryDocuments.zip") as archive:
        for name in sorted(archive.namelist()):
            if name.endswith(".json") and not name.startswith("__MACOSX"):
                passages = json.loads(archive.read(name))
                texts += [p["Passage"] for p in passages if len(p["Passage"]) > 200]
    step = max(1, len(texts) // count)
    return texts[::step][:count]


def documents(texts: list[str]) -> None:
    models = {"unfused": unfused(serving=False), "fused": LocalEmbedder()}
    spent = dict.fromkeys(models, 0.0)
    vectors = {}
    for model in models.values():
        model.embed_documents(texts[:16])
    for start in range(0, len(texts), 4 * BLOCK):
        part = texts[start : start + 4 * BLOCK]
        for name, model in models.items():
            began = time.perf_counter()
            rows = model.embed_documents(part)
            spent[name] += time.perf_counter() - began
            vectors.setdefault(name, []).append(rows)
    joined = {name: np.vstack(rows) for name, rows in vectors.items()}
    moved = np.abs(joined["fused"] - joined["unfused"]).max()
    print(f"Documents ({len(texts)} ObliQA passages over 200 characters, float products):\n")
    print("| graph | texts a second | largest difference to unfused |")
    print("|---|---|---|")
    for name in models:
        rate = len(texts) / spent[name]
        print(f"| {name} | {rate:.1f} | {0.0 if name == 'unfused' else moved:.2e} |")


def questions(asked: list[str]) -> None:
    reference = LocalEmbedder()
    models = {"unfused": unfused(serving=True), "fused": LocalEmbedder(serving=True)}
    spent: dict[str, list[float]] = {name: [] for name in models}
    vectors: dict[str, list[np.ndarray]] = {name: [] for name in models}
    for model in models.values():
        model.embed_query(asked[0])
    for start in range(0, len(asked), BLOCK):
        for name, model in models.items():
            for text in asked[start : start + BLOCK]:
                began = time.perf_counter()
                vectors[name].append(model.embed_query(text))
                spent[name].append(time.perf_counter() - began)
    floats = reference.embed_documents(asked)
    rows = {name: np.array(v) for name, v in vectors.items()}
    to_unfused = np.sum(rows["fused"] * rows["unfused"], axis=1)
    print(f"\nQuestions ({len(asked)} ObliQA dev, one at a time, integer products):\n")
    print(
        "| graph | p50 ms | p95 ms | cosine to float model: mean / min | to unfused: mean / min |"
    )
    print("|---|---|---|---|---|")
    for name in models:
        ms = np.array(spent[name]) * 1000
        to_float = np.sum(rows[name] * floats, axis=1)
        other = (
            "1 / 1" if name == "unfused" else f"{to_unfused.mean():.5f} / {to_unfused.min():.4f}"
        )
        print(
            f"| {name} | {np.median(ms):.2f} | {np.percentile(ms, 95):.2f} | "
            f"{to_float.mean():.5f} / {to_float.min():.4f} | {other} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=600)
    parser.add_argument("--questions", type=int, default=1000)
    args = parser.parse_args()
    documents(paragraphs(args.texts))
    asked = [q["Question"] for q in json.loads((DATA / "questions-dev.json").read_text())]
    questions(asked[: args.questions])


if __name__ == "__main__":
    main()
