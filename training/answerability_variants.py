"""The answerability model's variants, compared by cross-validation by document (issue 58).

    .venv/bin/python -m training.answerability_variants table     # -> training/out/answerability-table.npz
    /tmp/lgbvenv/bin/python -m training.answerability_variants fit  # LightGBM's venv (training/README.md)

`table` (the project's venv) writes each question's features from the examples training/ranker.py
wrote, scored by the shipped ranker: the fourteen the model before this one read (`former`),
lexkb.answers.ranking.answerability.FEATURES (`shipped`), and a wider set (`wide`: top-three
statistics of every candidate column, the ranker's score distribution, unit kinds of the
ranker's first, documents, the question's type; WIDE). `fit` (numpy and LightGBM only) prints
ROC AUC out of fold over train and tune (five folds by document, as training/answerability.py)
and on the test split, for logistic models (ridge chosen out of fold) and small gradient-boosted
ones (leaves, leaf size and feature share chosen out of fold from GRID, the number of trees by
the folds' mean AUC; `nested` chooses them inside each outer fold). The test split is only
reported. Seeded (58): the same figures on a rerun with the same examples.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
TABLE = REPO / "training/out/answerability-table.npz"
FOLDS = 5
# The model before: its coefficients as shipped (stop 62), in `former`'s order.
FORMER = (
    -0.1112, 0.4351, 0.8486, -0.3284, 0.4345, -0.4549, 0.2794, -0.8448, -0.4907, -0.5449,
    -1.2687, -3.3514, 0.5008, 0.3901,
)  # fmt: skip
FORMER_BIAS = 1.3382
TYPE = ("asks_period", "asks_amount", "period_ranked3", "amount_ranked3", "period_any")


def former(rows: np.ndarray, scores: np.ndarray, q: dict, c: dict[str, int]) -> list[float]:
    """The fourteen features of the model before (its question_features); `c`: the candidate
    features' columns."""
    v = q["scope_values"]
    scope = [q["scope"], v[3], v[4], v[5], v[8], v[7], float(q["only_foreign"])]
    if not len(rows):
        return [-10.0, 0.0, 0.0, 0.0, 0.0, *scope, 0.0, 0.0]
    order = np.argsort(-scores, kind="stable")
    rest, chances, first = scores[order[1:5]], rows[:, c["answers"]], rows[order[0]]
    return [
        float(scores[order[0]]),
        float(scores[order[0]] - rest.mean()) if rest.size else 0.0,
        float(chances.max()),
        float(first[c["answers"]]),
        float(rows[:, c["relevance"]].max()),
        *scope,
        float(first[c["names_document"]]),
        float(first[c["document_share"]]),
    ]


def wide(
    rows: np.ndarray, scores: np.ndarray, q: dict, asks: tuple[bool, bool], c: dict[str, int]
) -> dict:
    """Every statistic tried: the shipped FEATURES' definitions and more besides."""
    from lexkb.answers.question.scope import FEATURES as SCOPE

    f = {f"s_{k}": float(x) for k, x in zip(SCOPE, q["scope_values"], strict=True)}
    f.update(scope=q["scope"], only_foreign=float(q["only_foreign"]), foreign=q["foreign"],
             known=q["known"], asks_period=float(asks[0]), asks_amount=float(asks[1]))  # fmt: skip
    if not len(rows):
        return f
    order = np.argsort(-scores, kind="stable")
    search = np.argsort(rows[:, c["rank"]], kind="stable")
    s, n = scores[order], len(rows)
    p = np.exp(s - s[0])
    p /= p.sum()
    f.update(r_top=s[0], r_gap=s[0] - s[1:5].mean() if n > 1 else 0.0,
             r_gap2=s[0] - s[1] if n > 1 else 0.0, r_top3=s[:3].mean(), r_std=s.std(),
             r_ptop=p[0], r_entropy=float(-(p * np.log(p + 1e-12)).sum()))  # fmt: skip
    ch = rows[:, c["answers"]]
    read = np.sort(ch[ch >= 0])[::-1] if (ch >= 0).any() else np.zeros(1)
    f.update(c_max=read[0], c_second=read[1] if read.size > 1 else 0.0, c_top3=read[:3].mean(),
             c_sum=read.sum(), c_first=max(ch[order[0]], 0.0), c_n10=float((read >= 0.1).sum()),
             c_rtop3=max(ch[order[:3]].max(), 0.0))  # fmt: skip
    rel, cos = rows[:, c["relevance"]], rows[:, c["cosine"]]
    rs, cs = np.sort(rel)[::-1], np.sort(cos)[::-1]
    f.update(rel_max=rs[0], rel_gap=rs[0] - rs[1] if n > 1 else 0.0, rel_rtop=rel[order[0]],
             rel_mean5=rel[search[:5]].mean(), cos_max=cs[0],
             cos_gap=cs[0] - cs[1] if n > 1 else 0.0, cos_mean3=cs[:3].mean(),
             cos_rtop=cos[order[0]])  # fmt: skip
    for column, k in (("rare_words_held", "rare"), ("words_held", "words"),
                      ("heading_words_held", "heading")):  # fmt: skip
        v = rows[:, c[column]]
        f.update({f"{k}_rtop": v[order[0]], f"{k}_rtop3max": v[order[:3]].max(),
                  f"{k}_rtop3mean": v[order[:3]].mean(), f"{k}_max": v.max(),
                  f"{k}_search3max": v[search[:3]].max()})  # fmt: skip
    for k in ("definition", "recital", "amending", "front_matter", "annex", "short"):
        f[f"k_{k}_top"] = rows[order[0], c[k]]
    per, amt = rows[:, c["asks_when_holds_period"]], rows[:, c["asks_amount_holds_amount"]]
    f.update(len_top=rows[order[0], c["length"]], doc_share_top=rows[order[0], c["document_share"]],
             n_docs=float(np.expm1(rows[:, c["document_rank"]].max()) + 1),
             names_doc_top=rows[order[0], c["names_document"]],
             names_any=rows[0, c["names_any_document"]], named_share=rows[:, c["names_document"]].mean(),
             asks_meaning=rows[0, c["asks_meaning"]], asks_who=rows[0, c["asks_who"]],
             period_ranked3=per[order[:3]].max(), amount_ranked3=amt[order[:3]].max(),
             period_any=per.max(), search_gap2=rows[search[1], c["score_gap"]] if n > 1 else 0.0,
             search_gap5=rows[search[min(4, n - 1)], c["score_gap"]])  # fmt: skip
    return {k: float(v) for k, v in f.items()}


def write_table(examples: Path, ranker: Path, out: Path) -> None:
    from evaluation_data.people import people_sets
    from lexkb.answers.ranking.answerability import FEATURES, question_features
    from lexkb.answers.ranking.candidate_features import FEATURES as CANDIDATE
    from lexkb.answers.ranking.candidate_features import asks_amount, asks_period
    from lexkb.core.judge.trees import Trees

    data = np.load(examples, allow_pickle=False)
    questions = json.loads(examples.with_suffix(".questions.json").read_text("utf-8"))
    words = {r["id"]: r["question"] for r in people_sets(REPO / "benchmarks/questions/people")}
    features, qid = data["features"], data["qid"]
    scores = Trees.of(json.loads(ranker.read_text("utf-8"))).scores(features)
    c = {name: n for n, name in enumerate(CANDIDATE)}
    formers, shipped, wides = [], [], []
    for q in questions:
        mine, text = qid == q["qid"], words[q["id"]]
        rows, mine_scores = features[mine], scores[mine]
        formers.append(former(rows, mine_scores, q, c))
        shipped.append(question_features(text, rows, mine_scores, q["scope"], q["scope_values"],
                                         q["only_foreign"])[0])  # fmt: skip
        wides.append(wide(rows, mine_scores, q, (asks_period(text), asks_amount(text)), c))
    names = sorted({k for w in wides for k in w})
    documents = [q.get("document") or q["id"] for q in questions]
    np.savez(
        out,
        former=np.array(formers),
        shipped=np.array(shipped),
        shipped_names=np.array(FEATURES),
        wide=np.array([[w.get(k, 0.0) for k in names] for w in wides]),
        wide_names=np.array(names),
        y=np.array([0 if q["kind"] == "unanswerable" else 1 for q in questions]),
        split=np.array([q["split"] for q in questions]),
        fold=np.array([int(hashlib.sha256(d.encode()).hexdigest(), 16) % FOLDS for d in documents]),
    )
    print(f"{len(questions)} questions, {len(names)} wide features -> {out}")


GRID = [
    {"num_leaves": leaves, "min_data_in_leaf": size, "feature_fraction": share}
    for leaves, size, share in itertools.product((4, 8, 16), (20, 60), (0.5, 0.9))
]
BOOST = {"objective": "binary", "metric": "auc", "learning_rate": 0.03, "bagging_fraction": 0.8,
         "bagging_freq": 1, "lambda_l2": 1.0, "num_threads": 2, "verbose": -1,
         "deterministic": True, "force_row_wise": True, "seed": 58}  # fmt: skip
ROUNDS = 600
RIDGES = (1.0, 3.0, 10.0, 30.0, 100.0)


def fit(table: Path, nested: bool) -> None:
    import lightgbm as lgb

    from training.answerability import auc, fitted

    t = np.load(table, allow_pickle=False)
    y, split, fold = t["y"], t["split"], t["fold"]
    train, test = split != "test", split == "test"

    def logistic(x: np.ndarray, ridges=RIDGES) -> tuple[float, float, str]:
        def held(l2: float, rows: np.ndarray) -> np.ndarray:
            out = np.zeros(len(y))
            for h in np.unique(fold[rows]):
                i, o = rows & (fold != h), rows & (fold == h)
                w, b = fitted(x[i], y[i].astype(np.float64), l2)
                out[o] = x[o] @ w + b
            return out

        found = {l2: held(l2, train) for l2 in ridges}
        l2 = max(ridges, key=lambda r: auc(found[r][train], y[train]))
        w, b = fitted(x[train], y[train].astype(np.float64), l2)
        return auc(found[l2][train], y[train]), auc((x @ w + b)[test], y[test]), f"ridge {l2:g}"

    def boosted(x: np.ndarray, rows: np.ndarray, grid=GRID) -> tuple[float, dict, int, np.ndarray]:
        best = None
        for g in grid:
            curves, models = [], []
            for h in np.unique(fold[rows]):
                i, o = rows & (fold != h), rows & (fold == h)
                seen: dict = {}
                model = lgb.train({**BOOST, **g}, lgb.Dataset(x[i], y[i]), ROUNDS,
                                  valid_sets=[lgb.Dataset(x[o], y[o])],
                                  callbacks=[lgb.record_evaluation(seen)])  # fmt: skip
                curves.append(seen["valid_0"]["auc"])
                models.append((o, model))
            rounds = int(np.argmax(np.mean(curves, axis=0))) + 1
            held = np.zeros(len(y))
            for o, model in models:
                held[o] = model.predict(x[o], num_iteration=rounds, raw_score=True)
            score = auc(held[rows], y[rows])
            if best is None or score > best[0]:
                best = (score, g, rounds, held)
        return best

    def gbm(x: np.ndarray) -> tuple[float, float, str]:
        score, g, rounds, _ = boosted(x, train)
        model = lgb.train({**BOOST, **g}, lgb.Dataset(x[train], y[train]), rounds)
        tested = auc(model.predict(x[test], raw_score=True), y[test])
        note = f"{g['num_leaves']} leaves, {g['min_data_in_leaf']} a leaf, {rounds} trees"
        if nested:
            held = np.zeros(len(y))
            for h in range(FOLDS):
                inner, outer = train & (fold != h), train & (fold == h)
                _, g, rounds, _ = boosted(x, inner)
                model = lgb.train({**BOOST, **g}, lgb.Dataset(x[inner], y[inner]), rounds)
                held[outer] = model.predict(x[outer], raw_score=True)
            note += f"; nested out of fold {auc(held[train], y[train]):.3f}"
        return score, tested, note

    shipped = [str(n) for n in t["shipped_names"]]
    no_type = [n for n, name in enumerate(shipped) if name not in TYPE]
    x_former, x_shipped, x_wide = t["former"], t["shipped"], t["wide"]
    as_shipped = x_former @ np.array(FORMER) + FORMER_BIAS
    print("| variant | features | out of fold (train+tune) | test | chosen |")
    print("|---|---|---|---|---|")
    print(f"| the model before, coefficients as shipped | 14 | - | "
          f"{auc(as_shipped[test], y[test]):.3f} | |")  # fmt: skip
    rows = [
        ("logistic, the fourteen before (refitted)", x_former, logistic, {"ridges": (1.0,)}),
        ("logistic, shipped features", x_shipped, logistic, {}),
        ("logistic, shipped less the question's type", x_shipped[:, no_type], logistic, {}),
        ("logistic, wide", x_wide, logistic, {}),
        ("LightGBM, the fourteen before", x_former, gbm, {}),
        ("LightGBM, shipped features", x_shipped, gbm, {}),
        ("LightGBM, shipped less the question's type", x_shipped[:, no_type], gbm, {}),
        ("LightGBM, wide", x_wide, gbm, {}),
    ]
    for label, x, how, extra in rows:
        held, tested, note = how(x, **extra)
        print(f"| {label} | {x.shape[1]} | {held:.3f} | {tested:.3f} | {note} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=("table", "fit"))
    parser.add_argument("--examples", type=Path, default=REPO / "training/out/ranker-examples.npz")
    parser.add_argument("--ranker", type=Path, default=REPO / "lexkb/core/judge/models/ranker.json")
    parser.add_argument("--table", type=Path, default=TABLE)
    parser.add_argument("--nested", action="store_true", help="also nested cross-validation")
    args = parser.parse_args()
    if args.step == "table":
        write_table(args.examples, args.ranker, args.table)
    else:
        fit(args.table, args.nested)


if __name__ == "__main__":
    main()
