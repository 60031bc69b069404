"""The verdict on a claim cited to a whole document, from what the verifier found in it.

A claim cited to a document ("the NDA lets the recipient share it with employees") is judged
against the document's paragraphs nearest the claim (lexkb.answers.claims.judge_in_document),
each read by the rules and the support model. What those findings add up to:

1. A quantity in conflict with the claim's ("30 days" where the claim says "14 days") in one of
   the paragraphs decides: `contradicted`, as it does for a single paragraph. No other rule's
   finding decides alone.
2. Otherwise the support model's readings over all the paragraphs: `contradicted` when the
   highest Contradiction reaches DOCUMENT_CONTRADICT_AT and exceeds the highest Entailment,
   resting on the sentence that carries it; `supported` when the highest Entailment reaches
   DOCUMENT_ENTAIL_AT and its paragraph states every quantity the claim states; else
   `not_addressed`. An opposed modality or polarity found by rule in one paragraph counts as a
   contradiction read at no less than DOCUMENT_CONTRADICT_AT: where another paragraph entails
   the claim more strongly (an exception read against its rule, "need not ... where"), the
   entailment wins.
   The thresholds are the ones each of five folds chose when cross-validated over ContractNLI
   dev's NDAs (benchmarks/verify.py: macro-F1 0.758, against 0.704 at 0.5 / 0.5; BENCHMARKS.md):
   a document holds many paragraphs near a claim, and one of them reading as Entailment at 0.5
   is weak evidence that the document says it.
3. Where the model could not be used, the rule it replaced: a conflict in one of the paragraphs,
   else the best paragraph's word-overlap support at the paragraph threshold.

Every verdict names the paragraph and sentence it rests on; `contradicted` only ever with a
conflicting sentence found.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lexkb.answers.passages.quantities import QUANTITY_KINDS
from lexkb.core.vocabulary import Decider, Verdict
from lexkb.results import Hit

DOCUMENT_ENTAIL_AT = 0.95
DOCUMENT_CONTRADICT_AT = 0.9


def document_verdict(
    claim: str,
    judged: Sequence[tuple[Hit, dict[str, Any]]],
    entail_at: float = DOCUMENT_ENTAIL_AT,
    contradict_at: float = DOCUMENT_CONTRADICT_AT,
) -> tuple[Hit, dict[str, Any]]:
    """The verdict, with the paragraph and finding that carry it (`claim` is the one judged;
    the thresholds are for measuring others)."""
    quantity = next(
        ((h, r) for h, r in judged if r["verdict"] == Verdict.CONTRADICTED and _about_quantity(r)),
        None,
    )
    if quantity is not None:
        return quantity
    if any("entailment" not in r for _, r in judged):
        return _without_model(judged)
    entailing = max(judged, key=lambda item: item[1]["entailment"])
    contradicting = max(judged, key=lambda item: _contradiction(item[1], contradict_at))
    entail = entailing[1]["entailment"]
    contradict = _contradiction(contradicting[1], contradict_at)
    if contradict >= contradict_at and contradict > entail:
        hit, result = contradicting
        return hit, {**result, "verdict": Verdict.CONTRADICTED, "confidence": round(contradict, 3)}
    hit, result = entailing
    if entail >= entail_at and not result.get("missing"):
        return hit, {
            **result,
            "verdict": Verdict.SUPPORTED,
            "decided_by": Decider.MODEL,
            "reason": "the support model reads the claim in this paragraph of the document "
            f"(probability {entail:.2f})",
            "words": [],
            "confidence": round(entail, 3),
        }
    return hit, {
        **result,
        "verdict": Verdict.NOT_ADDRESSED,
        "decided_by": Decider.RULE if result.get("missing") else Decider.MODEL,
        "reason": (
            result["reason"]
            if result.get("missing")
            else "no paragraph of the document supports the claim (the support model's highest "
            f"probability {entail:.2f}, below {entail_at})"
        ),
        "words": [],
        "confidence": round(1.0 - max(entail, contradict), 3),
    }


def _contradiction(result: dict[str, Any], contradict_at: float) -> float:
    """The model's Contradiction, raised to `contradict_at` where a rule found an opposed
    modality."""
    contradiction: float = result["contradiction"]
    if result["verdict"] == Verdict.CONTRADICTED and result.get("decided_by") == Decider.RULE:
        return max(contradiction, contradict_at)
    return contradiction


def _without_model(judged: Sequence[tuple[Hit, dict[str, Any]]]) -> tuple[Hit, dict[str, Any]]:
    """A conflict found in one of the paragraphs, else the paragraph that best supports the
    claim, with the verdict word overlap gave it."""
    conflict = next(((h, r) for h, r in judged if r["verdict"] == Verdict.CONTRADICTED), None)
    if conflict is not None:
        return conflict
    return max(judged, key=lambda item: item[1]["support"])


def _about_quantity(result: dict[str, Any]) -> bool:
    """A conflict over a number, amount, date or period, found by rule. Only these decide a
    document alone: a polarity or modality found in one paragraph of many is weighed against
    what the others say (an NDA's "shall not ... (b) use" list reads as denying "use"; issue
    57: counting polarity here took ContractNLI dev from 0.772 to 0.593 macro-F1)."""
    return result.get("conflict") in QUANTITY_KINDS
