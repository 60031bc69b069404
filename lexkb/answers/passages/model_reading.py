"""The support model's reading of a claim against one paragraph: how strongly some part of it
entails or contradicts the claim, and which sentence carries that.

The paragraph is read whole (the model was trained on spans read alone and on several read
together) and, when it has several sentences, each sentence alone, so that the reading names the
sentence it rests on. The highest Entailment and the highest Contradiction over those readings
are what the verdict weighs (lexkb.answers.claims, lexkb.answers.passages.document_verdict). Where the
model cannot be used (its file missing or not the one shipped), `read_claim` says why and the
caller falls back to word overlap, saying so in its reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lexkb.answers.passages.statements import Statement
from lexkb.core.judge.pairs import PairModelError
from lexkb.core.judge.shipped import SupportClass, support

# The support model's probabilities at which a paragraph supports or contradicts a claim
# (benchmarks/verify.py and benchmarks/nli.py measure them).
ENTAIL_AT = 0.5
CONTRADICT_AT = 0.5
# A paragraph of more sentences is read whole and its first MAX_SENTENCES sentences alone: a
# bound on the work one citation costs (the whole reading still covers the rest, to 512 tokens).
MAX_SENTENCES = 24


@dataclass(frozen=True)
class Reading:
    entailment: float  # the highest probability of Entailment over the readings
    contradiction: float  # the highest of Contradiction
    supporting: Statement | None  # the sentence with the highest Entailment
    contradicting: Statement | None  # the sentence with the highest Contradiction


@dataclass(frozen=True)
class Unreadable:
    reason: str


def read_claim(claim: str, text: str, sentences: Sequence[Statement]) -> Reading | Unreadable:
    alone = sentences[:MAX_SENTENCES] if len(sentences) > 1 else []
    try:
        p = support(claim, [text, *(s.text for s in alone)])
    except PairModelError as error:
        return Unreadable(str(error))
    entail, contradict = p[:, SupportClass.ENTAILMENT], p[:, SupportClass.CONTRADICTION]
    supporting: Statement | None
    contradicting: Statement | None
    if alone:
        supporting = alone[int(entail[1:].argmax())]
        contradicting = alone[int(contradict[1:].argmax())]
    else:
        supporting = contradicting = sentences[0] if sentences else None
    return Reading(
        round(float(entail.max()), 4), round(float(contradict.max()), 4), supporting, contradicting
    )
