"""ContractNLI pairs for training and measuring the support/contradiction model, and how a
reading of them is scored.

Train: `contractnli/train.csv`, the train split as 7,191 (premise, hypothesis, label) rows in
blocks of 17 per NDA; the premise is the gold evidence spans joined by newlines, or three random
spans of the NDA for NotMentioned. Dev: `contractnli/dev.json` turned into pairs the same way
(gold spans; three spans drawn with a fixed seed for NotMentioned), so the two splits are read
alike. Labels: 0 Entailment, 1 Contradiction, 2 NotMentioned, as train.csv numbers them.
"""

from __future__ import annotations

import csv
import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

LABELS = ("Entailment", "Contradiction", "NotMentioned")
HYPOTHESES_PER_NDA = 17
NOT_MENTIONED_SPANS = 3


@dataclass(frozen=True)
class Pair:
    premise: str
    hypothesis: str
    label: int
    nda: str  # the document it comes from, for splitting by document


def train_pairs(data: Path) -> list[Pair]:
    path = data / "contractnli" / "train.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [
        Pair(row["concatenated_spans"], row["hypothesis"], int(row["label"]), f"train-{n // 17}")
        for n, row in enumerate(rows)
    ]


def dev_pairs(data: Path, seed: int = 13) -> list[Pair]:
    raw = json.loads((data / "contractnli" / "dev.json").read_text(encoding="utf-8"))
    hypotheses = {key: value["hypothesis"] for key, value in raw["labels"].items()}
    rng = random.Random(seed)
    pairs: list[Pair] = []
    for document in raw["documents"]:
        text, spans = document["text"], document["spans"]
        annotations = document["annotation_sets"][0]["annotations"]
        for key in sorted(annotations, key=lambda k: int(k.split("-")[1])):
            annotation = annotations[key]
            label = LABELS.index(annotation["choice"])
            if label == 2:
                chosen = rng.sample(range(len(spans)), min(NOT_MENTIONED_SPANS, len(spans)))
            else:
                chosen = annotation["spans"]
            premise = "\n".join(text[spans[i][0] : spans[i][1]].strip() for i in chosen)
            pairs.append(Pair(premise, hypotheses[key], label, str(document["id"])))
    return pairs


def hard_negatives(pairs: list[Pair], per_pair: int, seed: int) -> list[Pair]:
    """NotMentioned pairs whose premise is a span of the same NDA that is not the hypothesis's
    evidence: the evidence of another of its 17 hypotheses. Spans of the same contract about a
    neighbouring matter are what a reader of a whole NDA meets, and what random spans never
    teach: that related is not addressed. A span that is also the hypothesis's own evidence is
    never taken."""
    rng = random.Random(seed)
    by_nda: dict[str, list[Pair]] = {}
    for pair in pairs:
        by_nda.setdefault(pair.nda, []).append(pair)
    negatives: list[Pair] = []
    for block in by_nda.values():
        for pair in block:
            own = set() if pair.label == 2 else {line.strip() for line in pair.premise.split("\n")}
            lines = sorted(
                {
                    line.strip()
                    for other in block
                    if other is not pair and other.label != 2
                    for line in other.premise.split("\n")
                    if line.strip() and line.strip() not in own
                }
            )
            for line in rng.sample(lines, min(per_pair, len(lines))):
                negatives.append(Pair(line, pair.hypothesis, 2, pair.nda))
    return negatives


def macro_f1(gold: list[int], predicted) -> tuple[float, list[float]]:
    """Macro-F1 over LABELS, and each class's F1 (Contradiction's reported on its own)."""
    scores = []
    for label in range(len(LABELS)):
        tp = sum(g == p == label for g, p in zip(gold, predicted, strict=True))
        fp = sum(p == label != g for g, p in zip(gold, predicted, strict=True))
        fn = sum(g == label != p for g, p in zip(gold, predicted, strict=True))
        scores.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return float(np.mean(scores)), scores
