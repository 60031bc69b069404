"""Reranking ObliQA dev with the relevance model, next to the hybrid search it reorders, in one
run (issue 37, item 2).

    .venv/bin/python -m benchmarks.rerank [--index benchmarks/out/obliqa/index] [--limit N]
                                          [--max-tokens 256] [--depth 30]

Each dev question is searched (hybrid, the first lexkb.rerank.RERANK_DEPTH hits); the relevance
model reads the question with each hit, timed per question (the p50 is the rerank's cost on
this machine). The hits are then ordered by the model alone and by its blend with the search's
order at several weights. The weight shipped (lexkb.rerank.SEARCH_WEIGHT) is the best on the
tune half (sha256(QuestionID) even, the half the model was trained on); the held-out half, which
neither the model nor the choice saw, is reported. Recall@10 and MAP@10 against the gold
passages, as benchmarks/obliqa.py scores them. `--max-tokens` and `--depth` measure what reading
less costs and saves (the shipped model reads up to 256 tokens of the first 30).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from benchmarks.obliqa import metrics
from evaluation_data.obliqa import gold_of, held_out, load_questions, passage_key
from lexkb import Index
from lexkb.core.judge.shipped import as_question, relevance_model
from lexkb.rerank import RERANK_DEPTH, SEARCH_WEIGHT, blend

REPO = Path(__file__).resolve().parent.parent


WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "obliqa")
    parser.add_argument("--index", type=Path, default=REPO / "benchmarks/out/obliqa/index")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--max-tokens", type=int, default=256, help="of question and passage")
    parser.add_argument("--depth", type=int, default=RERANK_DEPTH, help="hits reranked")
    args = parser.parse_args()
    model = relevance_model(args.max_tokens)
    model.probabilities([("A first read loads the model?", "It is not timed.")])
    index = Index.open(args.index)
    questions = load_questions(args.data)[: args.limit]
    found, seconds = {}, []
    for q in questions:
        hits = index.search(q["Question"], k=args.depth, min_relevance=0.0).hits
        asked = as_question(q["Question"])
        started = time.perf_counter()
        chances = model.probabilities([(asked, h.text) for h in hits])[:, 0]
        seconds.append(time.perf_counter() - started)
        found[q["QuestionID"]] = ([passage_key(h) for h in hits], chances)
    halves = {
        "tune": [q for q in questions if not held_out(q)],
        "held-out": [q for q in questions if held_out(q)],
    }
    print(
        f"ObliQA dev: {len(questions)} questions; hybrid top {args.depth} reranked, "
        f"{args.max_tokens} tokens read"
    )
    print("| order | tune R@10 | tune MAP@10 | held-out R@10 | held-out MAP@10 |")
    print("|---|---|---|---|---|")
    for weight in WEIGHTS:
        runs = {
            qid: [keys[i] for i in blend(chances, weight)] for qid, (keys, chances) in found.items()
        }
        cells = []
        for half in halves.values():
            scores = metrics(runs, half)
            cells += [f"{scores['recall@10']:.3f}", f"{scores['map@10']:.3f}"]
        name = (
            "hybrid search (no rerank)"
            if weight == 1.0
            else "relevance model alone"
            if weight == 0.0
            else f"blend, search weight {weight}"
            + (" (shipped)" if weight == SEARCH_WEIGHT else "")
        )
        print(f"| {name} | " + " | ".join(cells) + " |")
    # Calibration on the held-out half: per bin of the model's chance, the share that is gold.
    chances, gold = [], []
    for q in halves["held-out"]:
        keys, found_chances = found[q["QuestionID"]]
        answers_of = gold_of(q)
        chances += list(found_chances)
        gold += [key in answers_of for key in keys]
    chance, hit = np.array(chances), np.array(gold)
    print("\nReliability (held-out half, every reranked pair): | chance | pairs | mean | gold |")
    error = 0.0
    for low in np.arange(0.0, 1.0, 0.1):
        inside = (chance > low) & (chance <= low + 0.1) if low else chance <= 0.1
        if inside.any():
            error += inside.mean() * abs(hit[inside].mean() - chance[inside].mean())
            print(
                f"| {low:.1f}-{low + 0.1:.1f} | {int(inside.sum())} | "
                f"{chance[inside].mean():.3f} | {hit[inside].mean():.3f} |"
            )
    print(f"expected calibration error: {error:.3f}")
    p50 = statistics.median(seconds) * 1000
    p90 = float(np.percentile(seconds, 90)) * 1000
    print(f"\nrerank of the top {args.depth}: p50 {p50:.0f} ms, p90 {p90:.0f} ms a question")


if __name__ == "__main__":
    main()
