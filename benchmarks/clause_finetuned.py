"""The fine-tuned clause model (training/clause_train.py) against the shipped clause heads, on
CUAD's two halves, each labelled by what was fitted on the other (issue 61).

    .venv/bin/python -m benchmarks.clause_finetuned [--runs training/out/clause-tune
        training/out/clause-report]

The two run folders are one model fine-tuned on each half: each holds the chances its model gave
the fitting half's valid contracts (never trained on) and every contract of the other half.
Labellings, scored as benchmarks/classify.py scores (paragraph precision, clause recall,
macro-F1 over the categories with a marked clause), pooled over both halves, same contracts,
same run:
- heads: fitted on the whole fitting half as benchmarks/classify.py fits them (the reference);
- fine-tuned: the model alone, each category's threshold chosen on the valid contracts;
- stacked: the heads with the fine-tuned model's 41 log-odds as features beside the vector and
  the words (benchmarks.clause_head_fit.features), fitted and thresholded as the reference is;
- chosen: per category, the heads' rule or the fine-tuned model, whichever read the fitting
  half better, at its best threshold there;
- keyword baseline: the paragraph says every term of the category's name.
Stacked and chosen read the fitting half through the model fine-tuned on the other half, and the
half scored through the model fine-tuned on the fitting half (cross-fitting): what they learn
from are chances the model gave contracts it never saw, as it would give a new contract.
A paragraph without a word takes no label in any of them (as lexkb.core.clauses.labels decides).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from benchmarks.classify import evaluate, keyword_baseline, macro
from benchmarks.clause_head_fit import Heads, best_threshold, fitted, load_contracts
from evaluation_data.cuad import descriptions
from lexkb.core.clauses.heads import wordless

REPO = Path(__file__).resolve().parent.parent


def read_run(folder: Path) -> dict[str, tuple[str, np.ndarray]]:
    """contract key -> (its split in the run, `valid` or `predicted`; its probabilities)."""
    with np.load(folder / "probabilities.npz") as saved:
        offsets, table = saved["offsets"], saved["probabilities"].astype(np.float32)
        return {
            str(key): (str(split), table[offsets[n] : offsets[n + 1]])
            for n, (key, split) in enumerate(zip(saved["keys"], saved["splits"], strict=True))
        }


def chosen_thresholds(
    contracts: list[dict], scores: list[np.ndarray], names: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Each category's threshold of best F1 on `contracts` and that F1 (0.5 and 0.0 where none
    is marked there)."""
    thresholds = np.full(len(names), 0.5, dtype=np.float32)
    f1s = np.zeros(len(names))
    for column, name in enumerate(names):
        if any(c["holds"][name] for c in contracts):
            thresholds[column], f1s[column] = best_threshold(contracts, scores, column, name)
    return thresholds, f1s


def chosen_source(
    fitting: list[dict], crossed: dict[str, np.ndarray], heads: Heads, names: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Per category: whether the fine-tuned model read the fitting half better than the heads'
    chosen rule did out of fold (benchmarks.clause_head_fit.fitted's report), and the model's
    best threshold there."""
    chances = [silenced(c, crossed[c["key"]]) for c in fitting]
    thresholds, f1s = chosen_thresholds(fitting, chances, names)
    use = np.array(
        [
            name in heads.out_of_fold and f1s[n] > max(heads.out_of_fold[name])
            for n, name in enumerate(names)
        ]
    )
    return use, thresholds


def silenced(contract: dict, chances: np.ndarray) -> np.ndarray:
    chances = chances.copy()
    chances[wordless(contract["words"])] = 0.0
    return chances


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared/data")
    parser.add_argument("--root", type=Path, default=REPO / "benchmarks/out/contracts/index-txt")
    parser.add_argument(
        "--runs",
        type=Path,
        nargs="+",
        default=[REPO / "training/out/clause-tune", REPO / "training/out/clause-report"],
    )
    args = parser.parse_args()
    names = list(descriptions(args.data))
    contracts = {c["key"]: c for c in load_contracts(args.root, args.data, names)}
    runs = {folder: read_run(folder) for folder in args.runs}
    # Each contract's chances from the run that did not train on its half.
    crossed = {k: t for run in runs.values() for k, (s, t) in run.items() if s == "predicted"}
    if len(crossed) != len(contracts) or any(
        len(t) != len(contracts[k]["texts"]) for k, t in crossed.items()
    ):
        raise SystemExit("the runs must predict every contract of the index, one run per half")
    labels = {name: [name] for name in names}
    predicted: dict[str, dict[str, np.ndarray]] = {
        kind: {} for kind in ("heads", "fine-tuned", "stacked", "chosen")
    }
    for folder, run in runs.items():
        valid = [contracts[k] for k, (s, _) in run.items() if s == "valid"]
        report = [contracts[k] for k, (s, _) in run.items() if s == "predicted"]
        fitting = [c for k, c in contracts.items() if k not in {c["key"] for c in report}]
        print(
            f"{folder.name}: fitted on {len(fitting)} contracts ({len(valid)} valid), "
            f"scored on {len(report)}"
        )
        heads, head_thresholds = fitted(fitting, names)
        valid_chances = [silenced(c, run[c["key"]][1]) for c in valid]
        valid_thresholds, _ = chosen_thresholds(valid, valid_chances, names)
        stacked, stacked_thresholds = fitted(
            [c | {"tuned": crossed[c["key"]]} for c in fitting], names
        )
        use_model, model_thresholds = chosen_source(fitting, crossed, heads, names)
        for contract in report:
            key = contract["key"]
            chances = silenced(contract, crossed[key])
            by_heads = heads(contract) >= head_thresholds
            predicted["heads"][key] = by_heads
            predicted["fine-tuned"][key] = chances >= valid_thresholds
            predicted["stacked"][key] = (
                stacked(contract | {"tuned": crossed[key]}) >= stacked_thresholds
            )
            predicted["chosen"][key] = np.where(use_model, chances >= model_thresholds, by_heads)
        line = ", ".join(
            f"{kind} {macro(evaluate(report, labels, lambda c, p=chosen: p[c['key']])):.3f}"
            for kind, chosen in predicted.items()
        )
        print(f"  this half: {line}")
        print("  the model chosen for: " + ", ".join(np.array(names)[use_model]))
    everyone = [contracts[k] for k in predicted["heads"]]
    results = {
        kind: evaluate(everyone, labels, lambda c, p=chosen: p[c["key"]])
        for kind, chosen in predicted.items()
    }
    plain = evaluate(
        everyone, labels, lambda c: keyword_baseline(c, {name: name for name in names})
    )
    print(f"\n41 CUAD categories, {len(everyone)} contracts, each labelled from the other half")
    print("| category | " + " | ".join(f"{k} F1" for k in results) + " | keyword F1 |")
    print("|---" * (len(results) + 2) + "|")
    for name in sorted(results["heads"], key=lambda n: -results["chosen"][n][2]):
        row = " | ".join(f"{results[k][name][2]:.3f}" for k in results)
        print(f"| {name} | {row} | {plain[name][2]:.3f} |")
    row = " | ".join(f"**{macro(results[k]):.3f}**" for k in results)
    print(f"| macro | {row} | {macro(plain):.3f} |")


if __name__ == "__main__":
    main()
