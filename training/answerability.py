"""Fit the answerability and subject models and choose their thresholds (issue 58).

    .venv/bin/python -m training.answerability [--examples training/out/ranker-examples.npz]
        [--foreign training/out/foreign-examples.npz training/out/foreign-elsewhere-people.npz]
        [--ranker lexkb/core/judge/models/ranker.json]

Reads the examples training/ranker.py wrote (each people's question's candidates over the index
of every document they name, and what the question names) and those training/foreign.py wrote
(the same people's questions about documents that are not ADGM's, asked of ADGM's rulebooks
alone, and people's questions on subjects no index here holds, asked of ADGM's rulebooks and of
the people's index), the questions' words (benchmarks/questions/people/, by id) and the ranker
training/ranker_fit.py fitted; scores each question's candidates with the ranker as lexkb does
(lexkb.core.judge.trees) and fits two logistic models over
lexkb.answers.ranking.answerability.FEATURES, on the train and tune splits: answerability
(answerable and list questions against unanswerable ones, every document held) and the subject
model (the same answerable questions against those asked of an index without their document),
fitted on the questions `ask` asks it of: not those scoped to documents they name (the
examples' "scoped"), which `evidence` never declines as out of scope. Every choice is made out
of fold over those two splits (five folds by document, SHA-256 of the first answer's document,
or of the id for an unanswerable question): each model's ridge (RIDGES, the best ROC AUC), then
the thresholds: HELD_BELOW declines HELD_SHARE of the answerable questions the subject model is
asked of, and ABSTAIN_BELOW is the highest at which the two together decline at most
DECLINE_SHARE of all the answerable, FLAG_BELOW flag or decline at most FLAG_SHARE. Not counted
in these shares: `evidence` also declines as out of scope where the subject and scope models
lean foreign and the relevance model finds nothing answering (1.7% of the train split's answerable,
2.9% of the test split's, stop 75). The test split is only reported. Deterministic (Newton's
method, no sampling). Printed: the coefficients and thresholds to put in
lexkb/answers/ranking/answerability.py and subject.py, and ROC AUC per split beside the
relevance model's best chance alone (the signal `ask` declined by before) and the scope model
alone.
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
# The answerable questions, out of fold, the subject model alone may decline. Each of
# HELD_SHARES is reported; HELD_SHARE ships. Out of fold the unanswerable declined (held and
# foreign, half each) rose with the share, 0.512 at 0 to 0.583 at 3% and 0.607 at 5%; between
# the last two realqa's answerable questions decided (the subject model declined 4.3% of them
# at 3%, 7.1% at 5%; 20% of its unanswerable at both): a threshold read on realqa.
HELD_SHARES = (0.0, 0.01, 0.02, 0.03, 0.05)
HELD_SHARE = 0.03


def fitted(
    x: np.ndarray, y: np.ndarray, l2: float = 1.0, balanced: bool = False
) -> tuple[np.ndarray, float]:
    """Logistic regression by Newton's method on standardised columns, with a ridge; returned
    as weights and bias on the raw columns. `balanced`: the two classes weigh the same in all,
    so that a chance of 0.5 is even odds however many examples of either class there are."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    design = np.column_stack([(x - mean) / scale, np.ones(len(x))])
    weight = np.ones(len(y))
    if balanced:
        positive = y == 1
        weight = np.where(positive, len(y) / (2 * positive.sum()), len(y) / (2 * (~positive).sum()))
    w = np.zeros(design.shape[1])
    ridge = l2 * np.eye(len(w))
    ridge[-1, -1] = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(design @ w)))
        gradient = design.T @ (weight * (p - y)) + ridge @ w
        hessian = (design * (weight * p * (1 - p))[:, None]).T @ design + ridge
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


def out_of_fold(
    x: np.ndarray, y: np.ndarray, fit: np.ndarray, fold: np.ndarray, l2: float, balanced: bool
):
    """Each train and tune question's chance from the model fitted on the other folds."""
    held_chance = np.zeros(len(y))
    for held in range(FOLDS):
        inner, outer = fit & (fold != held), fit & (fold == held)
        w, b = fitted(x[inner], y[inner].astype(np.float64), l2, balanced)
        held_chance[outer] = 1.0 / (1.0 + np.exp(-(x[outer] @ w + b)))
    return held_chance


def table(
    examples: list[Path], ranker: Path
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """FEATURES of every question of every examples file, its label (1: answered), split, fold,
    whether it came from a file after the first (asked of an index without its document), and
    whether `ask` asks it of documents it names (never of the subject model, then)."""
    # Imported here: training.answerability_variants reads fitted and auc in LightGBM's venv.
    from evaluation_data.people import people_sets
    from lexkb.answers.ranking.answerability import question_features
    from lexkb.core.judge.trees import Trees

    words = {r["id"]: r["question"] for r in people_sets(REPO / "benchmarks/questions/people")}
    trees = Trees.of(json.loads(ranker.read_text("utf-8")))
    rows, labels, splits, documents, foreign, scoped = [], [], [], [], [], []
    for number, path in enumerate(examples):
        data = np.load(path, allow_pickle=False)
        questions = json.loads(path.with_suffix(".questions.json").read_text("utf-8"))
        features, qid = data["features"], data["qid"]
        scores = trees.scores(features)
        for q in questions:
            mine = qid == q["qid"]
            text = q.get("question") or words[q["id"]]
            rows.append(question_features(text, features[mine], scores[mine],
                                          q["scope"], q["scope_values"], q["only_foreign"])[0])  # fmt: skip
            labels.append(0 if q["kind"] == "unanswerable" else 1)
            splits.append(q["split"])
            documents.append(q.get("document") or q["id"])
            foreign.append(number > 0)
            scoped.append(bool(q["scoped"]))
    fold = np.array([int(hashlib.sha256(d.encode()).hexdigest(), 16) % FOLDS for d in documents])
    return (np.array(rows), np.array(labels), np.array(splits), fold, np.array(foreign),
            np.array(scoped))  # fmt: skip


def chosen_ridge(x, y, fit, fold, balanced: bool) -> tuple[float, np.ndarray]:
    """The ridge of the best out-of-fold ROC AUC over the `fit` rows, and those chances."""
    by_ridge = {l2: out_of_fold(x, y, fit, fold, l2, balanced) for l2 in RIDGES}
    for l2, held in by_ridge.items():
        print(f"  ridge {l2:g}: out-of-fold ROC AUC {auc(held[fit], y[fit]):.4f}")
    l2 = max(RIDGES, key=lambda r: auc(by_ridge[r][fit], y[fit]))
    return l2, by_ridge[l2]


def joint_below(answerability: np.ndarray, gone: np.ndarray, share: float) -> float:
    """The highest answerability threshold under which, with those the subject model declines
    (`gone`), at most `share` of these (answerable) questions are declined."""
    below = float(np.sort(answerability)[0])
    for t in np.sort(answerability):
        if np.mean((answerability < t) | gone) > share:
            break
        below = float(t)
    return below


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=Path, default=REPO / "training/out/ranker-examples.npz")
    parser.add_argument(
        "--foreign",
        type=Path,
        nargs="+",
        default=[REPO / "training/out/foreign-examples.npz",
                 REPO / "training/out/foreign-elsewhere-people.npz"],
    )  # fmt: skip
    parser.add_argument("--ranker", type=Path, default=REPO / "lexkb/core/judge/models/ranker.json")
    args = parser.parse_args()
    from lexkb.answers.ranking.answerability import FEATURES

    x, y, split, fold, foreign, scoped = table([args.examples, *args.foreign], args.ranker)
    fit, test = split != "test", split == "test"
    sigmoid = lambda z: 1.0 / (1.0 + np.exp(-z))  # noqa: E731
    # Two models over the same features, each fitted on train and tune, its ridge chosen out of
    # fold: answerability (people's answerable against unanswerable, every document held), and
    # the held subject (the same answerable questions against questions asked of an index
    # without their document), of the questions `ask` asks it of: those not scoped to
    # documents they name, whose lists (one document's paragraphs) say nothing of the subject.
    models, out_fold, chances = {}, {}, {}
    for name, rows in (("answerability", ~foreign), ("subject", ((y == 1) | foreign) & ~scoped)):
        print(name)
        # The subject model's foreign questions outnumber the answerable ones, by more as sets
        # are added: its classes weigh the same, so that its 0.5 (lexkb.answers.evidence's
        # `foreign_below`) stays even odds.
        balanced = name == "subject"
        l2, held_chance = chosen_ridge(x[rows], y[rows], fit[rows], fold[rows], balanced)
        weights, bias = fitted(x[fit & rows], y[fit & rows].astype(np.float64), l2, balanced)
        models[name] = (l2, weights, bias)
        chances[name] = sigmoid(x @ weights + bias)
        # Out of fold where the model was fitted on the row's kind; elsewhere (never fitted on
        # them) the model's own chance.
        out_fold[name] = chances[name].copy()
        out_fold[name][np.flatnonzero(rows)[fit[rows]]] = held_chance[fit[rows]]
        print(f"  ridge {l2:g}\n  MODEL = Calibration(FEATURES, ("
              + ", ".join(f"{w:.4f}" for w in weights) + f"), {bias:.4f})")  # fmt: skip
    column = {n: i for i, n in enumerate(FEATURES)}
    print("| split | questions (unanswerable) | answerability AUC | subject AUC | relevance "
          "model's best chance AUC | scope AUC |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for part in ("train", "tune", "test"):
        for name, rows in (("held", ~foreign), ("foreign", ((y == 1) | foreign) & ~scoped)):
            s = (split == part) & rows
            print(f"| {part}, {name} | {s.sum()} ({(y[s] == 0).sum()}) | "
                  f"{auc(chances['answerability'][s], y[s]):.3f} | "
                  f"{auc(chances['subject'][s], y[s]):.3f} | "
                  f"{auc(x[s, column['chance_max']], y[s]):.3f} | "
                  f"{auc(x[s, column['scope']], y[s]):.3f} |")  # fmt: skip
    answerable = fit & (y == 1)
    groups = (("answerable", y == 1), ("unanswerable, held", (y == 0) & ~foreign),
              ("asked of an index without its document", foreign))  # fmt: skip
    chosen = (0.0, 0.0, 0.0)
    for held_share in HELD_SHARES:
        # The subject model declines at most held_share of the answerable out of fold; the
        # answerability model's threshold is then the highest at which the two decline at most
        # DECLINE_SHARE, and flag or decline at most FLAG_SHARE.
        a, h = out_fold["answerability"][answerable], out_fold["subject"][answerable]
        asked = h[~scoped[answerable]]
        held_below = float(np.sort(asked)[int(held_share * len(asked))]) if held_share else 0.0
        gone = (h < held_below) & ~scoped[answerable]
        abstain_below = joint_below(a, gone, DECLINE_SHARE)
        flag_below = joint_below(a, gone, FLAG_SHARE)
        print(f"held share {held_share}: HELD_BELOW = {held_below:.4f}, ABSTAIN_BELOW = "
              f"{abstain_below:.4f}, FLAG_BELOW = {flag_below:.4f}")  # fmt: skip
        for part, chance in (("train and tune, out of fold", out_fold), ("test", chances)):
            s = fit if part != "test" else test
            for name, rows in groups:
                gone = (chance["subject"] < held_below) & ~scoped
                declined = (chance["answerability"] < abstain_below) | gone
                flagged = (chance["answerability"] < flag_below) | gone
                c = s & rows
                print(f"  {part} {name}: declined {declined[c].mean():.3f}, flagged or "
                      f"declined {flagged[c].mean():.3f} (n={c.sum()})")  # fmt: skip
            if part != "test":
                unanswered = [declined[s & rows].mean() for name, rows in groups[1:]]
                print(f"  out of fold, unanswerable declined, held and foreign alike: "
                      f"{np.mean(unanswered):.3f}")  # fmt: skip
        if held_share == HELD_SHARE:
            chosen = (held_below, abstain_below, flag_below)
    print("shipped: HELD_SHARE {}\nHELD_BELOW = {:.4f}\nABSTAIN_BELOW = {:.4f}\n"
          "FLAG_BELOW = {:.4f}".format(HELD_SHARE, *chosen))  # fmt: skip


if __name__ == "__main__":
    main()
