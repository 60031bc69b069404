"""Clause classification on CUAD: paragraphs labelled by clause type, zero-shot.

    .venv/bin/python -m benchmarks.classify [--kind txt|pdf] [--contracts N] [--no-vectors]
        [--root INDEX]

Needs the contract indexes benchmarks/contracts.py builds. Two label sets:
- the 41 CUAD categories as a caller's labels, each described by CUAD's own description;
- lexkb's default types, scored through a fixed mapping from CUAD categories (MAPPING; the
  defaults CUAD has no category for, indemnity, confidentiality, dispute resolution and force
  majeure, cannot be scored here).

A predicted (paragraph, type) is right when the paragraph overlaps a lawyer-marked clause of a
category of that type; a marked clause is found when a paragraph overlapping it is predicted
with its type. Overlap: the first 60 characters of one (whitespace collapsed, case folded) occur
in the other. Per type: precision, recall, F1; macro-F1 over the types with clauses.

Contracts are split by sha256 of their key: the even half chooses `min_score` and the name bonus
(grid below, by macro-F1 over the 41 categories); the odd half is reported. Baseline, same run:
a paragraph gets a type when it holds every term of the type's name.

--no-vectors adds what a build without an embedder labels with (lexkb.core.clauses.labels.
decide_by_name: every label by the names a paragraph says) next to the shipped heads, on the
same held-out half. The shipped heads were fitted on all of CUAD, so their figure there is not
held out; the heads fitted on the tune half are. --root: another contracts index (a `lexkb
build` of some CUAD contracts: its clause vectors are read from its cache).
"""

from __future__ import annotations

import argparse
import hashlib
from collections import defaultdict
from pathlib import Path

import numpy as np

from benchmarks.clause_head_fit import fitted, load_contracts
from evaluation_data.cuad import descriptions
from lexkb.core.clauses.defaults import DEFAULT_TYPES
from lexkb.core.clauses.labels import MIN_SCORE, NAME_BONUS, decide, decide_by_name, scores
from lexkb.core.text.tokenize import tokenize

REPO = Path(__file__).resolve().parent.parent


MAPPING = {
    "termination": ["Termination For Convenience"],
    "limitation of liability": ["Cap On Liability", "Uncapped Liability"],
    "governing law": ["Governing Law"],
    "assignment": ["Anti-Assignment"],
    "warranties": ["Warranty Duration"],
    "payment terms": ["Revenue/Profit Sharing", "Minimum Commitment"],
}
GRID_SCORES = (0.45, 0.5, 0.55, 0.6, 0.65)
GRID_BONUS = (0.0, 0.15, 0.3, 0.5, 1.0)


def tune_half(key: str) -> bool:
    return int(hashlib.sha256(key.encode()).hexdigest(), 16) % 2 == 0


def evaluate(
    contracts, labels: dict[str, list[str]], predict
) -> dict[str, tuple[float, float, float]]:
    """Per type (key of `labels`, mapped to CUAD categories): precision, recall, F1.
    `predict(contract) -> (paragraphs x types) bool` in `labels` order."""
    tp_pred = defaultdict(int)
    n_pred = defaultdict(int)
    found = defaultdict(int)
    n_gold = defaultdict(int)
    names = list(labels)
    for contract in contracts:
        predicted = predict(contract)
        for column, name in enumerate(names):
            right = set()
            for category in labels[name]:
                for paragraphs in contract["holds"][category]:
                    right.update(paragraphs)
                    n_gold[name] += 1
                    found[name] += any(predicted[j, column] for j in paragraphs)
            chosen = np.flatnonzero(predicted[:, column])
            n_pred[name] += chosen.size
            tp_pred[name] += sum(int(j) in right for j in chosen)
    result = {}
    for name in names:
        if not n_gold[name]:
            continue
        p = tp_pred[name] / n_pred[name] if n_pred[name] else 0.0
        r = found[name] / n_gold[name]
        result[name] = (p, r, 2 * p * r / (p + r) if p + r else 0.0)
    return result


def macro(result) -> float:
    return float(np.mean([f for _, _, f in result.values()])) if result else 0.0


def keyword_baseline(contract, labels: dict[str, str]) -> np.ndarray:
    words = [set(tokenize(t)) for t in contract["texts"]]
    out = np.zeros((len(words), len(labels)), dtype=bool)
    for column, name in enumerate(labels):
        terms = set(tokenize(name))
        out[:, column] = [bool(terms) and terms <= w for w in words]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=str(REPO.parent / "shared/data"))
    parser.add_argument("--kind", choices=("txt", "pdf"), default="txt")
    parser.add_argument("--contracts", type=int, default=None, help="contracts per half, at most")
    parser.add_argument(
        "--no-vectors", action="store_true", help="also the labels of a build with no embedder"
    )
    parser.add_argument("--root", default=None, help="contracts index (default: contracts.py's)")
    args = parser.parse_args()
    data = Path(args.data)
    root = Path(args.root) if args.root else REPO / f"benchmarks/out/contracts/index-{args.kind}"
    cuad = descriptions(data)
    names = list(cuad)
    halves: dict[bool, list[dict]] = {True: [], False: []}
    for contract in sorted(load_contracts(root, data, names), key=lambda c: c["key"]):
        halves[tune_half(contract["key"])].append(contract)
    tune, report = (
        h[: args.contracts] if args.contracts else h for h in (halves[True], halves[False])
    )
    cuad_labels = {name: [name] for name in cuad}
    defaults = {name: DEFAULT_TYPES[name] for name in MAPPING}
    tables: dict[tuple, np.ndarray] = {}

    def scored(contract, labels: dict[str, str], bonus: float) -> np.ndarray:
        key = (contract["key"], tuple(labels), bonus)
        if key not in tables:
            tables[key] = scores(contract["texts"], labels, bonus, vectors=contract["vectors"])
        return tables[key]

    best = (MIN_SCORE, NAME_BONUS, -1.0)
    print("tune half: macro-F1 over the 41 CUAD categories (min_score x name bonus)")
    for bonus in GRID_BONUS:
        line = []
        for floor in GRID_SCORES:
            f1 = macro(
                evaluate(tune, cuad_labels, lambda c, b=bonus, t=floor: scored(c, cuad, b) >= t)
            )
            line.append(f"{f1:.3f}")
            if f1 > best[2]:
                best = (floor, bonus, f1)
        print(f"  bonus {bonus:.2f}: " + " ".join(line))
    floor, bonus, _ = best
    print(
        f"chosen on the tune half: min_score {floor}, name bonus {bonus} (shipped: {MIN_SCORE}, {NAME_BONUS})\n"
    )
    heads, thresholds = fitted(tune, names)
    runs = (
        (
            "41 CUAD categories, heads fitted on the tune half",
            cuad_labels,
            lambda c: heads(c) >= thresholds,
        ),
        (
            "41 CUAD categories (zero-shot, CUAD's descriptions)",
            cuad_labels,
            lambda c: scored(c, cuad, bonus) >= floor,
        ),
        (
            "lexkb default types (zero-shot, mapped from CUAD)",
            MAPPING,
            lambda c: scored(c, defaults, bonus) >= floor,
        ),
    )
    if args.no_vectors:
        named = {name: name for name in names}
        runs += (
            (
                "41 CUAD categories, shipped heads (fitted on all of CUAD: not held out)",
                cuad_labels,
                lambda c: decide(c["texts"], named, vectors=c["vectors"])[1],
            ),
            (
                "41 CUAD categories, no embedder (the names a paragraph says)",
                cuad_labels,
                lambda c: decide_by_name(c["texts"], named)[1],
            ),
            (
                "lexkb default types, no embedder (the names a paragraph says)",
                MAPPING,
                lambda c: decide_by_name(c["texts"], defaults)[1],
            ),
        )
    for title, labels, predict in runs:
        described = cuad if labels is cuad_labels else defaults
        ours = evaluate(report, labels, predict)
        plain = evaluate(report, labels, lambda c, d=described: keyword_baseline(c, d))
        print(f"{title}: held-out half, {len(report)} contracts")
        print("| type | P | R | F1 | keyword baseline F1 |")
        print("|---|---|---|---|---|")
        for name in sorted(ours, key=lambda n: -ours[n][2]):
            p, r, f = ours[name]
            print(f"| {name} | {p:.3f} | {r:.3f} | {f:.3f} | {plain[name][2]:.3f} |")
        print(f"| macro | | | {macro(ours):.3f} | {macro(plain):.3f} |\n")


if __name__ == "__main__":
    main()
