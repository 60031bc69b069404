"""Support and contradiction on ContractNLI dev pairs, today's rules next to plain baselines and
the trained model, in one run (issue 37, item 1).

    .venv/bin/python -m benchmarks.nli [--data ../shared/data] [--model FILE.onnx] [--limit N]

Pairs: ContractNLI dev (61 NDAs x 17 hypotheses, 1,037 pairs) as evaluation_data/contractnli.py builds
them, the way train.csv was built: the premise is the gold evidence spans, or three spans of the
NDA drawn with a fixed seed for NotMentioned. Each system reads (hypothesis, premise) and says
Entailment, Contradiction or NotMentioned:
- lexkb's verifier on the premise as one paragraph (`lexkb.answers.claims.judge`: supported,
  contradicted, not addressed), as shipped (rules, then the support model) and without its
  model (rules, then word overlap, as before issue 37);
- per-hypothesis majority: each of the 17 hypotheses' most common label in train.csv (the issue's
  bar, there taken from dev itself: 0.627);
- always Entailment;
- the model (`--model`, an ONNX file from training/export.py), when given.
Reported: macro-F1, F1 of each class (Contradiction on its own), and, for systems with scores,
expected calibration error over ten bins of the top class's probability.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

import numpy as np

from evaluation_data.contractnli import LABELS, Pair, dev_pairs, macro_f1, train_pairs

REPO = Path(__file__).resolve().parent.parent


def calibration_error(gold: list[int], probabilities: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error of the top class's probability."""
    top = probabilities.max(1)
    right = probabilities.argmax(1) == np.array(gold)
    edges = np.linspace(0.0, 1.0, bins + 1)
    error = 0.0
    for low, high in zip(edges[:-1], edges[1:], strict=True):
        inside = (top > low) & (top <= high)
        if inside.any():
            error += inside.mean() * abs(right[inside].mean() - top[inside].mean())
    return float(error)


def reliability(gold: list[int], probabilities: np.ndarray, bins: int = 10) -> list[str]:
    """Table rows: per bin of the top class's probability, the pairs in it, their mean
    probability and the share the top class was right."""
    top = probabilities.max(1)
    right = probabilities.argmax(1) == np.array(gold)
    edges = np.linspace(0.0, 1.0, bins + 1)
    rows = []
    for low, high in zip(edges[:-1], edges[1:], strict=True):
        inside = (top > low) & (top <= high)
        if inside.any():
            rows.append(
                f"| {low:.1f}-{high:.1f} | {int(inside.sum())} | {top[inside].mean():.3f} | "
                f"{right[inside].mean():.3f} |"
            )
    return rows


def rules(pairs: list[Pair], model: bool = True) -> list[int]:
    """lexkb's verdict on each premise as one paragraph: `judge` (rules, then the support
    model), or with `model` False the verifier before its model (rules, then word overlap)."""
    from lexkb.answers.claims import judge
    from lexkb.results import Hit

    verdicts = {"supported": 0, "contradicted": 1, "not_addressed": 2}
    predicted = []
    for pair in pairs:
        hit = Hit(
            chunk_id="pair",
            document_key="nda",
            document_title=None,
            chunk_level="paragraph",
            ref=None,
            section_path=[],
            page=None,
            score=None,
            text=pair.premise,
        )
        predicted.append(verdicts[str(judge(pair.hypothesis, hit, model)["verdict"])])
    return predicted


def majority(train: list[Pair], pairs: list[Pair]) -> list[int]:
    by_hypothesis: dict[str, Counter] = {}
    for pair in train:
        by_hypothesis.setdefault(pair.hypothesis, Counter())[pair.label] += 1
    return [by_hypothesis[p.hypothesis].most_common(1)[0][0] for p in pairs]


def model_probabilities(path: Path, pairs: list[Pair]) -> np.ndarray:
    from lexkb.core.judge.pairs import PairModel

    return PairModel(path).probabilities([(p.hypothesis, p.premise) for p in pairs])


# -- whole NDAs -------------------------------------------------------------------------------
CANDIDATES = 16
JOINED = 8


def nda_tasks(path: Path) -> list[tuple[list[str], list[tuple[str, int]]]]:
    """(span texts, [(hypothesis, label)]) per NDA of a ContractNLI file in its own format."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    hypotheses = {key: value["hypothesis"] for key, value in raw["labels"].items()}
    tasks = []
    for document in raw["documents"]:
        spans = [document["text"][a:b].strip() for a, b in document["spans"]]
        annotations = document["annotation_sets"][0]["annotations"]
        judged = [
            (hypotheses[k], LABELS.index(a["choice"])) for k, a in sorted(annotations.items())
        ]
        tasks.append(([s for s in spans if s], judged))
    return tasks


def nda_scores(model_path: Path, tasks) -> tuple[list[int], np.ndarray]:
    """Gold labels and, per (NDA, hypothesis), the probabilities of its `CANDIDATES` spans
    closest to the hypothesis (local embedder), each alone, nearest first, then of its `JOINED`
    closest read together: (pairs, CANDIDATES + 1, classes)."""
    from lexkb.core.embed.sentence_vectors import sentence_vectors
    from lexkb.core.judge.pairs import PairModel

    model = PairModel(model_path, max_tokens=512)
    gold, pairs, owners = [], [], []
    for spans, judged in tasks:
        vectors = sentence_vectors(spans)
        for hypothesis, label in judged:
            closest = np.argsort(-(vectors @ sentence_vectors([hypothesis])[0]))[:CANDIDATES]
            # each span alone, and the nearest few together, nearest first, as training joined them
            together = "\n".join(spans[i] for i in closest[:JOINED])
            for premise in [*(spans[i] for i in closest), together]:
                pairs.append((hypothesis, premise))
                owners.append(len(gold))
            gold.append(label)
    probabilities = model.probabilities(pairs).reshape(len(gold), CANDIDATES + 1, len(LABELS))
    return gold, probabilities


def nda_best(probabilities: np.ndarray) -> np.ndarray:
    """The highest Entailment and Contradiction probabilities over all readings of an NDA."""
    return probabilities[:, :, :2].max(1)


def nda_verdicts(best: np.ndarray, entail: float, contradict: float) -> list[int]:
    """Contradicted where a span contradicts at least `contradict` and more than any entails;
    else supported where one entails at least `entail`; else not mentioned."""
    out = []
    for p_entail, p_contradict in best:
        if p_contradict >= contradict and p_contradict > p_entail:
            out.append(1)
        elif p_entail >= entail:
            out.append(0)
        else:
            out.append(2)
    return out


def nda_thresholds(gold: list[int], best: np.ndarray) -> tuple[float, float]:
    grid = np.linspace(0.3, 0.95, 14)
    return max(
        ((e, c) for e in grid for c in grid),
        key=lambda t: macro_f1(gold, nda_verdicts(best, *t))[0],
    )


def nda_cross_validated(gold: list[int], best: np.ndarray) -> tuple[list[int], str]:
    """Verdicts with thresholds chosen on the other half of the NDAs (17 hypotheses each), and
    the thresholds each half chose."""
    fold = np.array([(n // 17) % 2 for n in range(len(gold))])
    out = np.zeros(len(gold), int)
    chosen = []
    for held in (0, 1):
        fit = fold != held
        entail, contradict = nda_thresholds(
            [g for g, f in zip(gold, fit, strict=True) if f], best[fit]
        )
        out[~fit] = nda_verdicts(best[~fit], entail, contradict)
        chosen.append(f"{entail:.2f} / {contradict:.2f}")
    return list(out), ", ".join(chosen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--pairs-only", action="store_true", help="skip the whole-NDA reading")
    args = parser.parse_args()
    pairs = dev_pairs(args.data)[: args.limit]
    gold = [p.label for p in pairs]
    print(f"ContractNLI dev pairs: {len(pairs)} ({dict(Counter(LABELS[g] for g in gold))})")
    rows = []
    systems = {
        "always Entailment": lambda: [0] * len(pairs),
        "per-hypothesis majority (train.csv)": lambda: majority(train_pairs(args.data), pairs),
        "lexkb without its model (rules, then word overlap)": lambda: rules(pairs, model=False),
        "lexkb judge (rules, then the support model)": lambda: rules(pairs),
    }
    for name, run in systems.items():
        started = time.perf_counter()
        predicted = run()
        rows.append((name, *macro_f1(gold, predicted), None, time.perf_counter() - started))
    if args.model is not None:
        started = time.perf_counter()
        probabilities = model_probabilities(args.model, pairs)
        predicted = list(probabilities.argmax(1))
        seconds = time.perf_counter() - started
        table = reliability(gold, probabilities)
        rows.append(
            (
                f"model ({args.model.name})",
                *macro_f1(gold, predicted),
                calibration_error(gold, probabilities),
                seconds,
            )
        )
    if args.model is not None and not args.pairs_only:
        started = time.perf_counter()
        dev_gold, dev = nda_scores(args.model, nda_tasks(args.data / "contractnli" / "dev.json"))
        best = nda_best(dev)
        macro, per_class = macro_f1(dev_gold, nda_verdicts(best, 0.5, 0.5))
        name = f"model over whole NDAs (top {CANDIDATES} spans, each alone; 0.5 / 0.5)"
        rows.append((name, macro, per_class, None, time.perf_counter() - started))
        predicted, chosen = nda_cross_validated(dev_gold, best)
        macro, per_class = macro_f1(dev_gold, predicted)
        name = f"model over whole NDAs, thresholds cross-validated (2 folds by NDA: {chosen})"
        rows.append((name, macro, per_class, None, 0.0))
        macro, per_class = macro_f1(dev_gold, list(dev[:, -1].argmax(1)))
        name = f"model over whole NDAs, the nearest {JOINED} spans read together"
        rows.append((name, macro, per_class, None, 0.0))
    print(
        "\n| system | macro-F1 | Entailment F1 | Contradiction F1 | NotMentioned F1 | ECE | seconds |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, macro, per_class, ece, seconds in rows:
        scores = " | ".join(f"{s:.3f}" for s in per_class)
        ece_text = f"{ece:.3f}" if ece is not None else "-"
        print(f"| {name} | {macro:.3f} | {scores} | {ece_text} | {seconds:.1f} |")
    if args.model is not None:
        print("\nReliability of the model on the pairs (top class's probability):")
        print("| bin | pairs | mean probability | right |\n|---|---|---|---|")
        print("\n".join(table))


if __name__ == "__main__":
    main()
