"""Fit the answerability model and choose its thresholds (issue 58).

    .venv/bin/python -m training.answerability [--examples training/out/ranker-examples.npz]
        [--ranker lexkb/core/judge/models/ranker.json]

Reads the examples training/ranker.py wrote (each question's candidates and what the question
names), the questions' words (benchmarks/questions/people/, by id) and the ranker
training/ranker_fit.py fitted, scores each question's candidates with the ranker as lexkb does
(lexkb.core.judge.trees), and fits a logistic model over
lexkb.answers.ranking.answerability.FEATURES: answerable and list questions against unanswerable
ones, over the train and tune splits. Every choice is made out of fold over those two (five folds
by document, SHA-256 of the first answer's document, or of the id for an unanswerable question):
the ridge (RIDGES, the best ROC AUC), then the thresholds: ABSTAIN_BELOW declines at most
DECLINE_SHARE of their answerable questions, FLAG_BELOW flags or declines at most FLAG_SHARE. The
model is the only judge of whether a question is declined (lexkb.answers.evidence: the relevance
model's best chance is one of its features, no longer a bar of its own), so these shares are
the whole of what it costs answerable questions. The test split is only
reported. Deterministic (Newton's method, no sampling). Printed: the coefficients and thresholds
to put in lexkb/answers/ranking/answerability.py, and ROC AUC per split beside the relevance
model's best chance alone (the signal `ask` declined by before) and the scope model alone.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
FOLDS = 5
RIDGES = (1.0, 3.0, 10.0, 30.0, 100.0)
# The answerable questions, out of fold, a threshold may decline, and flag or decline. The
# relevance model's bar (best chance under 0.005) this replaced declined 14-20% of them and
# no more of the unanswerable (19-25%).
DECLINE_SHARE = 0.10
FLAG_SHARE = 0.20


def fitted(x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> tuple[np.ndarray, float]:
    """Logistic regression by Newton's method on standardised columns, with a ridge; returned
    as weights and bias on the raw columns."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    design = np.column_stack([(x - mean) / scale, np.ones(len(x))])
    w = np.zeros(design.shape[1])
    ridge = l2 * np.eye(len(w))
    ridge[-1, -1] = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(design @ w)))
        gradient = design.T @ (p - y) + ridge @ w
        hessian = (design * (p * (1 - p))[:, None]).T @ design + ridge
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    weights = w[:-1] / scale
    return weights, float(w[-1] - weights @ mean)


def auc(score: np.ndarray, y: np.ndarray) -> float:
    """ROC AUC by ranks (ties averaged)."""
    order = np.argsort(score, kind="stable")
    ranks = np.empty(len(score))
    ranks[order] = np.arange(1, len(score) + 1)
    for value in np.unique(score):
        tied = score == value
        ranks[tied] = ranks[tied].mean()
    positive = y == 1
    n1, n0 = positive.sum(), (~positive).sum()
    return float((ranks[positive].sum() - n1 * (n1 + 1) / 2) / max(n1 * n0, 1))


def out_of_fold(x: np.ndarray, y: np.ndarray, fit: np.ndarray, fold: np.ndarray, l2: float):
    """Each train and tune question's chance from the model fitted on the other folds."""
    held_chance = np.zeros(len(y))
    for held in range(FOLDS):
        inner, outer = fit & (fold != held), fit & (fold == held)
        w, b = fitted(x[inner], y[inner].astype(np.float64), l2)
        held_chance[outer] = 1.0 / (1.0 + np.exp(-(x[outer] @ w + b)))
    return held_chance


def table(examples: Path, ranker: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """FEATURES of every question, its label (1: answered), split and fold."""
    # Imported here: training.answerability_variants reads fitted and auc in LightGBM's venv.
    from evaluation_data.people import people_sets
    from lexkb.answers.ranking.answerability import question_features
    from lexkb.core.judge.trees import Trees

    data = np.load(examples, allow_pickle=False)
    questions = json.loads(examples.with_suffix(".questions.json").read_text("utf-8"))
    words = {r["id"]: r["question"] for r in people_sets(REPO / "benchmarks/questions/people")}
    trees = Trees.of(json.loads(ranker.read_text("utf-8")))
    features, qid = data["features"], data["qid"]
    scores = trees.scores(features)
    rows, labels, splits = [], [], []
    for q in questions:
        mine = qid == q["qid"]
        rows.append(question_features(words[q["id"]], features[mine], scores[mine], q["scope"],
                                      q["scope_values"], q["only_foreign"])[0])  # fmt: skip
        labels.append(0 if q["kind"] == "unanswerable" else 1)
        splits.append(q["split"])
    documents = [q.get("document") or q["id"] for q in questions]
    fold = np.array([int(hashlib.sha256(d.encode()).hexdigest(), 16) % FOLDS for d in documents])
    return np.array(rows), np.array(labels), np.array(splits), fold


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=Path, default=REPO / "training/out/ranker-examples.npz")
    parser.add_argument("--ranker", type=Path, default=REPO / "lexkb/core/judge/models/ranker.json")
    args = parser.parse_args()
    from lexkb.answers.ranking.answerability import FEATURES

    x, y, split, fold = table(args.examples, args.ranker)
    fit = split != "test"
    # The ridge, then the thresholds, from out-of-fold chances over train and tune; the model
    # itself is then fitted on both.
    by_ridge = {l2: out_of_fold(x, y, fit, fold, l2) for l2 in RIDGES}
    for l2, held in by_ridge.items():
        print(f"ridge {l2:g}: out-of-fold ROC AUC {auc(held[fit], y[fit]):.4f}")
    l2 = max(RIDGES, key=lambda r: auc(by_ridge[r][fit], y[fit]))
    held_chance = by_ridge[l2]
    weights, bias = fitted(x[fit], y[fit].astype(np.float64), l2)
    chance = 1.0 / (1.0 + np.exp(-(x @ weights + bias)))
    print(f"ridge {l2:g}\nMODEL = Calibration(FEATURES, ("
          + ", ".join(f"{w:.4f}" for w in weights) + f"), {bias:.4f})")  # fmt: skip
    column = {n: i for i, n in enumerate(FEATURES)}
    print("| split | questions (unanswerable) | answerability AUC | relevance model's best "
          "chance AUC | scope AUC |")  # fmt: skip
    print("|---|---|---|---|---|")
    for part in ("train", "tune", "test"):
        s = split == part
        print(f"| {part} | {s.sum()} ({(y[s] == 0).sum()}) | {auc(chance[s], y[s]):.3f} | "
              f"{auc(x[s, column['chance_max']], y[s]):.3f} | "
              f"{auc(x[s, column['scope']], y[s]):.3f} |")  # fmt: skip
    print(f"| train and tune, out of fold | {fit.sum()} ({(y[fit] == 0).sum()}) | "
          f"{auc(held_chance[fit], y[fit]):.3f} | | |")  # fmt: skip
    answerable = np.sort(held_chance[fit & (y == 1)])
    abstain_below = float(answerable[int(DECLINE_SHARE * len(answerable))])
    flag_below = float(answerable[int(FLAG_SHARE * len(answerable))])
    print(f"ABSTAIN_BELOW = {abstain_below:.4f}\nFLAG_BELOW = {flag_below:.4f}")
    for part, chances in (("train and tune, out of fold", held_chance), ("test", chance)):
        s = fit if part != "test" else split == "test"
        for label, name in ((1, "answerable"), (0, "unanswerable")):
            c = chances[s & (y == label)]
            print(f"  {part} {name}: abstained {np.mean(c < abstain_below):.3f}, flagged or "
                  f"abstained {np.mean(c < flag_below):.3f} (n={c.size})")  # fmt: skip


if __name__ == "__main__":
    main()
