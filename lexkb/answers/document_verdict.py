"""The verdict on a claim cited to a whole document, from what the verifier found in it.

A claim cited to a document ("the NDA lets the recipient share it with employees") is judged
against the document's paragraphs nearest the claim (lexkb.answers.claims.judge_in_document).
Which verdict those findings add up to is decided by a small multinomial logistic model over
FEATURES, fitted on ContractNLI dev (61 NDAs, 1,037 claims) with the classes weighted equally.
Cross-validated over NDAs it reaches macro-F1 MACRO_F1_CV, where the threshold rule it replaced
reached 0.461 the same way (BENCHMARKS.md "ContractNLI dev"). The quantity features never fire
on NDAs, so their weights are 0: a conflicting quantity found in one of the paragraphs decides
the verdict by rule, as it does for a single paragraph.

The model weighs evidence; it never invents it. It may say `contradicted` only when a conflict
was found in one of the paragraphs, and `supported` only when the best paragraph states every
quantity the claim states. Nothing it reads names the claim, so it cannot have learnt
ContractNLI's seventeen hypotheses one by one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lexkb.core.vocabulary import Verdict
from lexkb.results import Hit

FEATURES = (
    "best support",
    "nearest support",
    "second support",
    "nearest relevance",
    "share contradicted",
    "nearest contradicted",
    "first conflict is modality",
    "first conflict is a quantity",
    "best lacks a quantity",
    "claim negated",
    "claim permits",
)
CLASSES = (Verdict.SUPPORTED, Verdict.CONTRADICTED, Verdict.NOT_ADDRESSED)

# Fitted by `benchmarks/verify.py --fit` on all 61 ContractNLI dev NDAs: features are
# standardised with MEAN and SCALE, then WEIGHTS (one row per feature, then the bias; one column
# per class in CLASSES) give each class's logit.
MEAN = (0.6058, 0.5665, 0.5325, 0.4774, 0.0132, 0.0405, 0.0627, 0.0, 0.0, 0.2941, 0.4706)
SCALE = (0.1254, 0.1763, 0.1181, 0.2466, 0.052, 0.1971, 0.2424, 1.0, 1.0, 0.4556, 0.4991)
WEIGHTS = (
    (0.2341, -0.0859, -0.1482),
    (-0.2168, 0.1855, 0.0313),
    (-0.0223, 0.1649, -0.1426),
    (0.4463, 0.0369, -0.4832),
    (-0.0252, 0.0585, -0.0333),
    (-0.0535, -0.0043, 0.0579),
    (-0.0964, 0.2834, -0.187),
    (0.0, 0.0, 0.0),
    (0.0, 0.0, 0.0),
    (0.4757, -0.9294, 0.4537),
    (0.5129, -0.2819, -0.2311),
    (0.1752, -0.2587, 0.0835),
)
MACRO_F1_CV = 0.494


def features(claim: str, judged: Sequence[tuple[Hit, dict]]) -> np.ndarray:
    """FEATURES of a claim and its judged paragraphs (nearest first)."""
    if not judged:
        return np.zeros(len(FEATURES))
    supports = sorted((r["support"] for _, r in judged), reverse=True) + [0.0]
    conflicts = [r for _, r in judged if r["verdict"] == Verdict.CONTRADICTED]
    best = max((r for _, r in judged), key=lambda r: r["support"])
    padded = f" {claim.lower()} "
    return np.array(
        [
            supports[0],
            judged[0][1]["support"],
            supports[1],
            judged[0][0].relevance or 0.0,
            len(conflicts) / len(judged),
            float(judged[0][1]["verdict"] == Verdict.CONTRADICTED),
            float(bool(conflicts) and not _about_quantity(conflicts[0])),
            float(bool(conflicts) and _about_quantity(conflicts[0])),
            float(bool(best.get("missing"))),
            float(any(w in padded for w in (" not ", " no ", " never ", " nor "))),
            float(" may " in padded),
        ]
    )


def probabilities(
    values: np.ndarray, mean: np.ndarray, scale: np.ndarray, weights: np.ndarray
) -> np.ndarray:
    """Each class's probability for rows of `values` (FEATURES), the classes a finding rules out
    at 0: no conflict found, no `contradicted`; a quantity the best paragraph lacks, no
    `supported`."""
    values = np.atleast_2d(values)
    scaled = np.hstack([(values - mean) / scale, np.ones((len(values), 1))])
    logits = scaled @ weights
    logits[
        values[:, FEATURES.index("share contradicted")] <= 0, CLASSES.index(Verdict.CONTRADICTED)
    ] = -np.inf
    logits[
        values[:, FEATURES.index("best lacks a quantity")] > 0, CLASSES.index(Verdict.SUPPORTED)
    ] = -np.inf
    exp = np.exp(logits - logits.max(axis=1, keepdims=True))
    return exp / exp.sum(axis=1, keepdims=True)


def document_verdict(claim: str, judged: Sequence[tuple[Hit, dict]]) -> tuple[Hit, dict]:
    """The verdict, with the paragraph and finding that carry it: the first conflict found for
    `contradicted`, else the paragraph that best supports the claim."""
    quantity = next(
        ((h, r) for h, r in judged if r["verdict"] == Verdict.CONTRADICTED and _about_quantity(r)),
        None,
    )
    if quantity is not None:
        # Another value of one of the claim's quantities is decisive, as it is for a single
        # paragraph; NDAs never showed the model one, so it has no weight to give it.
        return quantity[0], {**quantity[1], "confidence": 1.0}
    model = (np.array(MEAN), np.array(SCALE), np.array(WEIGHTS))
    p = probabilities(features(claim, judged), *model)[0]
    verdict = CLASSES[int(p.argmax())]
    confidence = round(float(p.max()), 3)
    if verdict == Verdict.CONTRADICTED:
        hit, result = next((h, r) for h, r in judged if r["verdict"] == Verdict.CONTRADICTED)
        return hit, {**result, "confidence": confidence}
    hit, result = max(judged, key=lambda item: item[1]["support"])
    if verdict == Verdict.SUPPORTED:
        reason = (
            "the document's nearest paragraphs, taken together, state the claim "
            f"(model confidence {confidence}); best sentence here"
        )
    else:
        reason = (
            "no paragraph of the document addresses the claim closely enough "
            f"(model confidence {confidence})"
        )
    return hit, {
        **result,
        "verdict": verdict,
        "reason": reason,
        "words": [],
        "confidence": confidence,
    }


def _about_quantity(result: dict) -> bool:
    """A conflict over a number, amount, date or period rather than an opposed modality."""
    return result.get("conflict") != "modality"
