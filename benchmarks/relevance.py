"""Calibrated relevance on ObliQA dev: fit on the tune half, reliability on the held-out half.

    .venv/bin/python -m benchmarks.relevance --index benchmarks/out/obliqa/index [--fit]

Needs an index built from the ObliQA passages with the local embedder (benchmarks/obliqa.py
builds one). For every dev question, the top 10 hits of each mode are labelled relevant when they
are one of the question's gold passages. `--fit` fits the logistic models of lexkb.relevance on
the tune half (sha256(QuestionID) even) and prints their coefficients, to be written into
lexkb/relevance.py; without it, the shipped coefficients are scored. Either way the report is on
the held-out half, side by side with a plain baseline (min-max of the ranking score within each
search, what a caller has without calibration):

- reliability: hits binned by relevance, mean predicted next to the observed rate of gold hits;
- expected calibration error (ECE), Brier score and ROC AUC per mode;
- the floor on a search's best relevance: in-scope questions still answered and their
  Recall@10, against off-topic queries (CUAD contract clauses marked by lawyers, asked of the
  ADGM regulations) and nonsense queries (made-up words and one real one) left with no hit.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import numpy as np

from evaluation_data.cuad import clauses
from evaluation_data.obliqa import gold_of, held_out, load_questions, passage_key
from lexkb import Index, relevance

REPO = Path(__file__).resolve().parent.parent


MODES = ("keyword", "hybrid", "vector")
BINS = np.linspace(0.0, 1.0, 11)
FLOORS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4)


def collect(index: Index, questions: list[dict]) -> dict[str, dict[str, np.ndarray]]:
    """Per mode: features, labels, question number and the baseline score of every top-10 hit."""
    rows_by_mode: dict[str, dict[str, list]] = {
        m: {"x": [], "y": [], "q": [], "base": []} for m in MODES
    }
    for number, q in enumerate(questions):
        gold = gold_of(q)
        cosine = index.dense_scores(q["Question"])
        for mode in MODES:
            hits = index.search(q["Question"], k=10, mode=mode, min_relevance=0.0).hits
            if not hits:
                continue
            rows = index.rows([h.chunk_id for h in hits])
            x = index.relevance_features(q["Question"], rows, cosine)
            scores = np.array([h.score for h in hits])
            spread = scores.max() - scores.min()
            base = (scores - scores.min()) / spread if spread else np.ones_like(scores)
            out = rows_by_mode[mode]
            out["x"].append(x)
            out["y"] += [passage_key(h) in gold for h in hits]
            out["q"] += [number] * len(hits)
            out["base"].append(base)
    return {
        m: {
            "x": np.vstack(v["x"]),
            "y": np.array(v["y"], dtype=float),
            "q": np.array(v["q"]),
            "base": np.concatenate(v["base"]),
        }
        for m, v in rows_by_mode.items()
    }


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-3) -> tuple[np.ndarray, float]:
    """Maximum likelihood by Newton's method, with a small ridge to keep it finite."""
    design = np.column_stack([x, np.ones(len(x))])
    w = np.zeros(design.shape[1])
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(design @ w)))
        gradient = design.T @ (p - y) + l2 * w
        hessian = (design * (p * (1 - p))[:, None]).T @ design + l2 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return w[:-1], float(w[-1])


def reliability(p: np.ndarray, y: np.ndarray) -> tuple[list[tuple[str, int, float, float]], float]:
    table, ece = [], 0.0
    which = np.clip(np.digitize(p, BINS) - 1, 0, len(BINS) - 2)
    for b in range(len(BINS) - 1):
        mask = which == b
        if mask.any():
            predicted, observed = float(p[mask].mean()), float(y[mask].mean())
            table.append((f"{BINS[b]:.1f}-{BINS[b + 1]:.1f}", int(mask.sum()), predicted, observed))
            ece += mask.sum() / len(p) * abs(predicted - observed)
    return table, ece


def auc(p: np.ndarray, y: np.ndarray) -> float:
    order = np.argsort(p, kind="stable")
    ranks = np.empty(len(p))
    ranks[order] = np.arange(1, len(p) + 1)
    positives = y.sum()
    negatives = len(y) - positives
    return float((ranks[y == 1].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def off_topic_queries(data: Path, n: int = 400) -> list[str]:
    spans = [c.text for c in clauses(data, min_chars=40) if len(c.text) <= 300]
    return random.Random(7).sample(spans, n)


def nonsense_queries(questions: list[dict], n: int = 200) -> list[str]:
    """Three made-up words and one real word of a question: the index knows the real word, so
    a dense ranking still orders every paragraph."""
    rng = random.Random(11)
    words = [w for q in questions for w in q["Question"].split() if w.isalpha() and len(w) > 3]
    made_up = ["".join(rng.choice("bcdfghjklmnpqrstvwxz") + rng.choice("aeiou") for _ in range(3))
               for _ in range(3 * n)]  # fmt: skip
    return [" ".join([*made_up[3 * i : 3 * i + 3], rng.choice(words)]) for i in range(n)]


def floor_table(
    index: Index, questions: list[dict], off_topic: list[str], nonsense: list[str]
) -> list[tuple]:
    """At each floor on a hybrid search's best relevance: in-scope Recall@10 and share answered,
    and the share of off-topic and of nonsense queries left with no hit."""
    in_scope = []
    for q in questions:
        hits = index.search(q["Question"], k=10, min_relevance=0.0).hits
        gold = gold_of(q)
        top = max((h.relevance for h in hits), default=0.0)
        in_scope.append((top, sum(passage_key(h) in gold for h in hits) / len(gold)))

    def tops(queries: list[str]) -> list[float]:
        return [
            max((h.relevance for h in index.search(t, k=10, min_relevance=0.0).hits), default=0.0)
            for t in queries
        ]

    off, junk = tops(off_topic), tops(nonsense)
    table = []
    for floor in FLOORS:
        recall = float(np.mean([r if top >= floor else 0.0 for top, r in in_scope]))
        answered = float(np.mean([top >= floor for top, _ in in_scope]))
        silent = float(np.mean([top < floor for top in off]))
        silent_junk = float(np.mean([top < floor for top in junk]))
        table.append((floor, recall, answered, silent, silent_junk))
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--index", type=Path, default=REPO / "benchmarks/out/obliqa/index")
    parser.add_argument("--fit", action="store_true", help="fit on the tune half and print")
    parser.add_argument("--floors", action="store_true", help="only the floor tables")
    args = parser.parse_args()
    index = Index.open(args.index)
    questions = load_questions(args.data / "obliqa")
    if args.floors:
        report_floors(index, questions, args.data)
        return
    data = collect(index, questions)
    tune = np.array([not held_out(q) for q in questions])
    models = {
        "keyword": relevance.LEXICAL,
        "hybrid": relevance.calibration_for(index.embedder_name, True),
        "vector": relevance.calibration_for(index.embedder_name, True),
    }
    if args.fit:
        lexical_cols = [relevance.FEATURES.index(f) for f in relevance.LEXICAL.features]
        d = data["keyword"]
        w, b = fit_logistic(d["x"][tune[d["q"]]][:, lexical_cols], d["y"][tune[d["q"]]])
        lexical = relevance.Calibration(relevance.LEXICAL.features, tuple(w), b)
        x = np.vstack([data[m]["x"][tune[data[m]["q"]]] for m in ("hybrid", "vector")])
        y = np.concatenate([data[m]["y"][tune[data[m]["q"]]] for m in ("hybrid", "vector")])
        w, b = fit_logistic(x, y)
        dense = relevance.Calibration(relevance.FEATURES, tuple(w), b)
        print(f"LEXICAL = {lexical!r}\nDENSE[{index.embedder_name!r}] = {dense!r}\n")
        models = {"keyword": lexical, "hybrid": dense, "vector": dense}

    print(f"ObliQA dev held-out half ({int((~tune).sum())} questions), top-10 hits per mode")
    print(f"{'mode':8} {'scorer':26} {'hits':>6} {'gold':>5} {'ECE':>6} {'Brier':>6} {'AUC':>6}")
    tables = {}
    for mode in MODES:
        d = data[mode]
        held = ~tune[d["q"]]
        y = d["y"][held]
        p = models[mode].apply(d["x"][held])
        for name, values in (("lexkb relevance", p), ("baseline: min-max score", d["base"][held])):
            table, ece = reliability(values, y)
            brier = float(np.mean((values - y) ** 2))
            print(
                f"{mode:8} {name:26} {len(y):6d} {y.mean():5.3f} {ece:6.3f} {brier:6.3f} "
                f"{auc(values, y):6.3f}"
            )
            if name == "lexkb relevance":
                tables[mode] = table
    for mode, table in tables.items():
        print(f"\nreliability, {mode}: bin, hits, mean relevance, observed gold rate")
        for label, n, predicted, observed in table:
            print(f"  {label}  {n:6d}  {predicted:.3f}  {observed:.3f}")
    if args.fit:
        return
    report_floors(index, questions, args.data)


def report_floors(index: Index, questions: list[dict], data: Path) -> None:
    off_topic, nonsense = off_topic_queries(data), nonsense_queries(questions)
    for half, chosen in (
        ("tune", [q for q in questions if not held_out(q)]),
        ("held-out", [q for q in questions if held_out(q)]),
    ):
        print(
            f"\nfloor on the best hybrid hit ({half} half): in-scope R@10, in-scope answered, "
            "off-topic silent, nonsense silent"
        )
        for floor, recall, answered, silent, junk in floor_table(
            index, chosen, off_topic, nonsense
        ):
            print(f"  {floor:5.2f}  {recall:.3f}  {answered:.3f}  {silent:.3f}  {junk:.3f}")


if __name__ == "__main__":
    main()
