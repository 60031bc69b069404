"""Fit the candidate ranker (LambdaMART) on the people's questions' examples (issue 58).

    /tmp/lgbvenv/bin/python -m training.ranker_fit [--examples training/out/ranker-examples.npz]
        [--out lexkb/core/judge/models/ranker.json] [--seed 58]

Needs only numpy and LightGBM (a venv of its own: `python3.11 -m venv /tmp/lgbvenv &&
/tmp/lgbvenv/bin/pip install lightgbm numpy`). The examples come from training/ranker.py
(each question's first twenty hits with lexkb.answers.ranking.candidate_features' rows, labelled right
when the hit is a unit that answers it). Train and tune fit; five-fold cross-validation by
document over them chooses the number of trees (the best mean nDCG@1) and reports the first
candidate right out of fold beside the search's order; the test split is only reported. The
model is
written as plain arrays (lexkb.core.judge.trees), and its SHA-256 printed for
lexkb/core/judge/shipped.py and the card.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import lightgbm as lgb
import numpy as np

REPO = Path(__file__).resolve().parent.parent
ROUNDS = 400  # the most trees cross-validation may choose
PARAMETERS = {
    "objective": "lambdarank",
    "metric": "ndcg",
    "eval_at": [1, 3],
    "learning_rate": 0.05,
    "num_leaves": 15,
    "min_data_in_leaf": 20,
    "feature_fraction": 0.9,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambdarank_truncation_level": 20,
    "num_threads": 2,
    "verbose": -1,
    "deterministic": True,
    "force_row_wise": True,
}


def grouped(qid: np.ndarray) -> np.ndarray:
    """LightGBM's group sizes: rows of one question are consecutive."""
    _, starts, counts = np.unique(qid, return_index=True, return_counts=True)
    return counts[np.argsort(starts)]


def as_arrays(tree: dict) -> tuple[dict, int]:
    """One LightGBM tree as lexkb.core.judge.trees reads it, and its depth."""
    structure = tree["tree_structure"]
    if "leaf_value" in structure:
        return {"feature": [], "threshold": [], "left": [], "right": [],
                "leaf": [structure["leaf_value"]]}, 0  # fmt: skip
    count = tree["num_leaves"] - 1
    feature, threshold = [0] * count, [0.0] * count
    left, right, leaf = [0] * count, [0] * count, [0.0] * tree["num_leaves"]
    depth = 0

    def child(node: dict) -> int:
        return ~node["leaf_index"] if "leaf_index" in node else node["split_index"]

    stack = [(structure, 1)]
    while stack:
        node, level = stack.pop()
        if "leaf_index" in node:
            leaf[node["leaf_index"]] = node["leaf_value"]
            depth = max(depth, level - 1)
            continue
        assert node["decision_type"] == "<=", node["decision_type"]
        at = node["split_index"]
        feature[at], threshold[at] = node["split_feature"], float(node["threshold"])
        left[at], right[at] = child(node["left_child"]), child(node["right_child"])
        stack += [(node["left_child"], level + 1), (node["right_child"], level + 1)]
    arrays = {"feature": feature, "threshold": threshold, "left": left, "right": right,
              "leaf": leaf}  # fmt: skip
    return arrays, depth


def first_right(scores: np.ndarray, labels: np.ndarray, qid: np.ndarray) -> float:
    """Of the questions with a right candidate or none, the share whose best-scored candidate
    is right (ties: the search's order)."""
    right = []
    for q in np.unique(qid):
        mine = np.flatnonzero(qid == q)
        best = mine[np.lexsort((np.arange(mine.size), -scores[mine]))[0]]
        right.append(labels[best] > 0)
    return float(np.mean(right))


def folds(qid: np.ndarray, document_of: dict[int, str], count: int) -> np.ndarray:
    """Each row's fold, by its question's document (SHA-256), so a document is in one fold."""
    fold_of = {
        q: int(hashlib.sha256(d.encode()).hexdigest(), 16) % count for q, d in document_of.items()
    }
    return np.array([fold_of[int(q)] for q in qid])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=Path, default=REPO / "training/out/ranker-examples.npz")
    parser.add_argument("--out", type=Path, default=REPO / "lexkb/core/judge/models/ranker.json")
    parser.add_argument("--seed", type=int, default=58)
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args()
    data = np.load(args.examples, allow_pickle=False)
    features, labels, qid, split = data["features"], data["labels"], data["qid"], data["split"]
    names = [str(n) for n in data["names"]]
    questions = json.loads(args.examples.with_suffix(".questions.json").read_text("utf-8"))
    document_of = {q["qid"]: q["document"] or q["id"] for q in questions}
    set_of = {q["qid"]: q["set"] for q in questions}
    # A question none of whose candidates answers teaches the ranking nothing.
    useful = np.isin(qid, np.unique(qid[labels > 0]))
    fit = np.isin(split, ("train", "tune")) & useful
    fold = folds(qid, document_of, args.folds)
    parameters = {**PARAMETERS, "seed": args.seed}
    curves, boosters = [], []
    for held in range(args.folds):
        inner, outer = fit & (fold != held), fit & (fold == held)
        found: dict = {}
        booster = lgb.train(
            parameters,
            lgb.Dataset(features[inner], labels[inner], group=grouped(qid[inner])),
            num_boost_round=ROUNDS,
            valid_sets=[lgb.Dataset(features[outer], labels[outer], group=grouped(qid[outer]))],
            callbacks=[lgb.record_evaluation(found)],
        )
        curves.append(found["valid_0"]["ndcg@1"])
        boosters.append(booster)
    mean = np.mean(curves, axis=0)
    rounds = int(np.argmax(mean)) + 1
    print(f"rounds {rounds} (cross-validated nDCG@1 {mean[rounds - 1]:.3f}; at 1: {mean[0]:.3f})")
    search = -np.log1p(np.arange(len(qid)) - np.searchsorted(qid, qid))  # the search's order
    out_of_fold = np.zeros(len(qid))
    for held, booster in enumerate(boosters):
        outer = fit & (fold == held)
        out_of_fold[outer] = booster.predict(features[outer], num_iteration=rounds)
    report(search, out_of_fold, labels, qid, fit, np.array([set_of[int(q)] for q in qid]))
    booster = lgb.train(
        parameters,
        lgb.Dataset(features[fit], labels[fit], group=grouped(qid[fit]), feature_name=names),
        num_boost_round=rounds,
    )
    dump = booster.dump_model()
    trees, depths = zip(*(as_arrays(t) for t in dump["tree_info"]), strict=True)
    model = {"features": names, "depth": max(depths), "trees": list(trees)}
    args.out.write_text(json.dumps(model, separators=(",", ":")), encoding="utf-8")
    test = (split == "test") & useful
    print(
        f"test, first candidate right (questions with one in the first twenty): search "
        f"{first_right(search[test], labels[test], qid[test]):.3f}, ranker "
        f"{first_right(booster.predict(features[test]), labels[test], qid[test]):.3f}"
    )
    gains = booster.feature_importance("gain")
    for name, gain in sorted(zip(names, gains, strict=True), key=lambda x: -x[1])[:12]:
        print(f"  {name:28} {gain:10.1f}")
    print("sha256", hashlib.sha256(args.out.read_bytes()).hexdigest())


def report(
    search: np.ndarray,
    out_of_fold: np.ndarray,
    labels: np.ndarray,
    qid: np.ndarray,
    fit: np.ndarray,
    sets: np.ndarray,
) -> None:
    """The first candidate right out of fold, in the search's order and the ranker's, over
    every fitted question and by question set: the ranker's gain over its ablation."""
    print("first candidate right, out of fold by document (train and tune; questions with one "
          "in the first twenty): search, ranker, questions")  # fmt: skip
    for name in ["all", *sorted(set(sets[fit]))]:
        part = fit & ((sets == name) if name != "all" else True)
        print(f"  {name:16} {first_right(search[part], labels[part], qid[part]):.3f} "
              f"{first_right(out_of_fold[part], labels[part], qid[part]):.3f} "
              f"{np.unique(qid[part]).size}")  # fmt: skip


if __name__ == "__main__":
    main()
