"""Clause classification on CUAD: paragraphs labelled by clause type, cross-validated by contract.

    .venv/bin/python -m benchmarks.classify [--kind txt|pdf] [--contracts N] [--no-vectors]
        [--root INDEX] [--speed]

Needs the contract indexes benchmarks/contracts.py builds. Three classifiers:
- the 41 CUAD categories by the heads (lexkb.core.clauses.heads, fitted as
  benchmarks/clause_head_fit.py fits them, thresholds from folds inside the fitting half);
- the same categories zero-shot, each described by CUAD's own description;
- lexkb's default types zero-shot, scored through a fixed mapping from CUAD categories
  (MAPPING; the defaults CUAD has no category for, indemnity, confidentiality, dispute
  resolution and force majeure, cannot be scored here).

A predicted (paragraph, type) is right when the paragraph overlaps a lawyer-marked clause of a
category of that type; a marked clause is found when a paragraph overlapping it is predicted
with its type. Overlap: the first 60 characters of one (whitespace collapsed, case folded) occur
in the other, and neither is shorter than 10 characters (evaluation_data.cuad.overlaps: a drawn
line or a "[*]" would otherwise overlap every clause of its contract). Per type: precision,
recall, F1; macro-F1 over the types with clauses.

Cross-validated by contract, two folds: contracts are split by sha256 of their key, and each
half is labelled by what was fitted and chosen on the other (the heads; zero-shot's
`min_score` and name bonus, by macro-F1 over the 41 categories on the fitting half, grid
below). The figures pool every contract so labelled; each fold's heads figure is printed too.
Baseline, same run, same contracts: a paragraph gets a type when it holds every term of the
type's name.

--no-vectors adds what a build without an embedder labels with (lexkb.core.clauses.labels.
decide_by_name: every label by the names a paragraph says) next to the shipped heads, on the
second half. The shipped heads were fitted on all of CUAD, so their figure there is not held
out. --root: another contracts index (a `lexkb build` of some CUAD contracts: its clause vectors
are read from its cache). --speed: seconds to classify the longest contracts after a build.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import numpy as np

from benchmarks.clause_head_fit import fitted, load_contracts
from evaluation_data.cuad import descriptions, tune_half
from lexkb.core.clauses.default_types import DEFAULT_TYPES
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
    parser.add_argument(
        "--speed", action="store_true", help="also time classify on the longest contracts"
    )
    args = parser.parse_args()
    data = Path(args.data)
    root = Path(args.root) if args.root else REPO / f"benchmarks/out/contracts/index-{args.kind}"
    cuad = descriptions(data)
    names = list(cuad)
    halves: dict[bool, list[dict]] = {True: [], False: []}
    for contract in sorted(load_contracts(root, data, names), key=lambda c: c["key"]):
        halves[tune_half(contract["key"])].append(contract)
    first, second = (
        h[: args.contracts] if args.contracts else h for h in (halves[True], halves[False])
    )
    cuad_labels = {name: [name] for name in cuad}
    defaults = {name: DEFAULT_TYPES[name] for name in MAPPING}
    titles = {
        "heads": "41 CUAD categories, heads fitted on the other half",
        "zero-shot": "41 CUAD categories (zero-shot, CUAD's descriptions)",
        "defaults": "lexkb default types (zero-shot, mapped from CUAD)",
    }
    # Each contract's labels from what was fitted or chosen on the other half.
    predicted: dict[str, dict[str, np.ndarray]] = {run: {} for run in titles}
    for fold, (tune, report) in enumerate(((first, second), (second, first)), start=1):
        print(f"fold {fold}: fitted on {len(tune)} contracts, scored on {len(report)}")
        floor, bonus = zero_shot_settings(tune, cuad)
        heads, thresholds = fitted(tune, names)
        for contract in report:
            key = contract["key"]
            predicted["heads"][key] = heads(contract) >= thresholds
            predicted["zero-shot"][key] = _scored(contract, cuad, bonus) >= floor
            predicted["defaults"][key] = _scored(contract, defaults, bonus) >= floor
        ours = evaluate(report, cuad_labels, lambda c: predicted["heads"][c["key"]])
        print(f"  heads, this fold's held-out half: macro-F1 {macro(ours):.3f}\n")
    everyone = first + second
    runs = [
        (titles[run], cuad_labels if run != "defaults" else MAPPING, predicted[run])
        for run in titles
    ]
    for title, labels, chosen in runs:
        described = cuad if labels is cuad_labels else defaults
        report_table(
            f"{title}: cross-validated by contract, {len(everyone)} contracts",
            evaluate(everyone, labels, lambda c, p=chosen: p[c["key"]]),
            evaluate(everyone, labels, lambda c, d=described: keyword_baseline(c, d)),
        )
    if args.no_vectors:
        no_vectors(second, names, cuad_labels, cuad, defaults)
    if args.speed:
        speed(data)


_SCORES: dict[tuple, np.ndarray] = {}


def _scored(contract: dict, labels: dict[str, str], bonus: float) -> np.ndarray:
    """A contract's zero-shot scores, computed once per label set and bonus."""
    key = (contract["key"], tuple(labels), bonus)
    if key not in _SCORES:
        _SCORES[key] = scores(contract["texts"], labels, bonus, vectors=contract["vectors"])
    return _SCORES[key]


def zero_shot_settings(tune: list[dict], cuad: dict[str, str]) -> tuple[float, float]:
    """`min_score` and the name bonus that give the best macro-F1 over the 41 categories on
    `tune` (GRID_SCORES x GRID_BONUS), printed with the grid."""
    cuad_labels = {name: [name] for name in cuad}
    best = (MIN_SCORE, NAME_BONUS, -1.0)
    print(
        "  zero-shot on the fitting half: macro-F1 over the 41 CUAD categories (min_score x name bonus)"
    )
    for bonus in GRID_BONUS:
        line = []
        for floor in GRID_SCORES:
            f1 = macro(
                evaluate(tune, cuad_labels, lambda c, b=bonus, t=floor: _scored(c, cuad, b) >= t)
            )
            line.append(f"{f1:.3f}")
            if f1 > best[2]:
                best = (floor, bonus, f1)
        print(f"    bonus {bonus:.2f}: " + " ".join(line))
    print(
        f"  chosen: min_score {best[0]}, name bonus {best[1]} (shipped: {MIN_SCORE}, {NAME_BONUS})"
    )
    return best[0], best[1]


def report_table(title: str, ours: dict, plain: dict) -> None:
    print(title)
    print("| type | P | R | F1 | keyword baseline F1 |")
    print("|---|---|---|---|---|")
    for name in sorted(ours, key=lambda n: -ours[n][2]):
        p, r, f = ours[name]
        print(f"| {name} | {p:.3f} | {r:.3f} | {f:.3f} | {plain[name][2]:.3f} |")
    print(f"| macro | | | {macro(ours):.3f} | {macro(plain):.3f} |\n")


def no_vectors(report: list[dict], names: list[str], cuad_labels, cuad, defaults) -> None:
    """What a build without an embedder labels with, next to the shipped heads, on the second
    half (the shipped heads were fitted on all of CUAD: their figure is not held out)."""
    named = {name: name for name in names}
    runs = (
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
        report_table(
            f"{title}: second half, {len(report)} contracts",
            evaluate(report, labels, predict),
            evaluate(report, labels, lambda c, d=described: keyword_baseline(c, d)),
        )


SPEED_CONTRACTS = 10
SPEED_ROOT = REPO / "benchmarks/out/contracts/index-speed"


def speed(data: Path) -> None:
    """Seconds to classify each of the longest CUAD TXT contracts into every category, after a
    build with the local model (SPEED_ROOT): `classify` as shipped, which reads the build's
    labels, against deciding them again as it did before the build recorded its model (the
    reference, same run: lexkb.core.clauses.labels.decide, which embeds each paragraph)."""
    import shutil
    import time

    from lexkb import Index
    from lexkb.answers.classify import classify
    from pipelines.in_process import run_build

    files = sorted((data / "cuad" / "txt").glob("*.txt"), key=lambda f: -f.stat().st_size)
    chosen = files[:SPEED_CONTRACTS]
    sources = SPEED_ROOT.parent / "speed-sources"
    shutil.rmtree(sources, ignore_errors=True)
    sources.mkdir(parents=True)
    for file in chosen:
        shutil.copy(file, sources)
    run_build([sources], SPEED_ROOT)
    index = Index.open(SPEED_ROOT)
    read, again, sizes = [], [], []
    for document in index.documents():
        _, frame = index.document_paragraphs(document["document_key"])
        texts = [t for t in frame["content"].to_list() if t.strip()]
        sizes.append((len(texts), sum(len(t) for t in texts)))
        start = time.perf_counter()
        classify(index, document=document["document_key"], clause_types="cuad")
        read.append(time.perf_counter() - start)
        start = time.perf_counter()
        decide(texts, {name: name for name in descriptions(data)})
        again.append(time.perf_counter() - start)
    print(f"classify(document, 'cuad') on the {len(read)} longest TXT contracts after a build")
    print(
        f"(paragraphs {min(s[0] for s in sizes)}-{max(s[0] for s in sizes)}, "
        f"characters {min(s[1] for s in sizes):,}-{max(s[1] for s in sizes):,})"
    )
    print("| | p50 s | max s |")
    print("|---|---|---|")
    print(f"| classify, the build's labels read | {np.median(read):.3f} | {max(read):.3f} |")
    print(f"| reference: decided again (embeds) | {np.median(again):.3f} | {max(again):.3f} |")


if __name__ == "__main__":
    main()
