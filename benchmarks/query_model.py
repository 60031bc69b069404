"""Query embedding: the local model's float products against its integer ones (lexkb.core.embed.integer_model).

    .venv/bin/python -m benchmarks.query_model --index ROOT [--limit N]

ROOT: an ObliQA index built with the local embedder (benchmarks/obliqa.py builds one). Each
ObliQA dev question is embedded both ways and searched in vector and hybrid mode against the
same snapshot vectors (embedded at build time with the float products). Reported per half
(tune: sha256(QuestionID) even; held-out: odd), side by side: the query vectors' cosine to the
float model's, Recall@10 and MAP@10 of both, and the embedding's p50 latency.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from benchmarks.obliqa import metrics
from evaluation_data.obliqa import held_out, load_questions, passage_key
from lexkb import Index
from lexkb.core.embed.embedders import LocalEmbedder

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--data", default=str(REPO.parent / "shared/data/obliqa"))
    parser.add_argument("--limit", type=int, default=None, help="questions per half")
    args = parser.parse_args()
    index = Index.open(args.index)
    questions = load_questions(Path(args.data))
    halves = {
        "tune": [q for q in questions if not held_out(q)][: args.limit],
        "held-out": [q for q in questions if held_out(q)][: args.limit],
    }
    models = {"float products": LocalEmbedder(), "integer products": LocalEmbedder(serving=True)}
    print("| half | n | query model | cosine to float | embed p50 ms | mode | R@10 | MAP@10 |")
    print("|---|---|---|---|---|---|---|---|")
    for half, asked in halves.items():
        texts = [q["Question"] for q in asked]
        vectors: dict[str, np.ndarray] = {}
        latency: dict[str, float] = {}
        for name, model in models.items():
            model.embed_query(texts[0])  # load the session outside the timing
            spent = []
            rows = []
            for text in texts:
                started = time.perf_counter()
                rows.append(model.embed_query(text))
                spent.append(time.perf_counter() - started)
            vectors[name], latency[name] = np.array(rows), float(np.median(spent)) * 1000
        for name, model in models.items():
            cosine = float(np.mean(np.sum(vectors[name] * vectors["float products"], axis=1)))
            index.query_embedder = model
            for mode in ("vector", "hybrid"):
                index.dense.forget_queries()
                runs = {
                    q["QuestionID"]: [
                        passage_key(h) for h in index.search(q["Question"], mode=mode).hits
                    ]
                    for q in asked
                }
                scores = metrics(runs, asked)
                print(
                    f"| {half} | {len(asked)} | {name} | {cosine:.4f} | {latency[name]:.2f} | "
                    f"{mode} | {scores['recall@10']:.4f} | {scores['map@10']:.4f} |"
                )


if __name__ == "__main__":
    main()
