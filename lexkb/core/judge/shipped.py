"""The two models lexkb ships, each read on first use and refused unless its SHA-256 is the one
stated here (and in its card, `models/*.md`).

- support: (claim, passage) -> Entailment, Contradiction, NotMentioned probabilities. Trained on
  ContractNLI's train split, each hypothesis read against a span, several spans together, and
  the spans of a whole NDA nearest it (training/examples.py). Reads up to 512 tokens.
- relevance: (question, passage) -> the chance the passage answers the question. Trained on
  ObliQA dev's tune half, XRefRAG train (ADGM and UK PRA) and CUAD's tune half (its clause
  descriptions asked of contracts' paragraphs), with contract questions against rulebooks as
  negatives. Reads up to 256 tokens.
- ranker: a search's first twenty hits -> the order an answer reads them in (LambdaMART over
  lexkb.answers.ranking.candidate_features, as plain arrays: lexkb.core.judge.trees). Trained on the
  people's questions written here (training/ranker.py, training/ranker_fit.py).
"""

from __future__ import annotations

from enum import IntEnum
from functools import cache
from pathlib import Path

import numpy as np

from lexkb.core.judge.pairs import PairModel
from lexkb.core.judge.trees import Trees

MODELS = Path(__file__).resolve().parent / "models"
SUPPORT_SHA256 = "90cbaed02193daaf6c03723350deb513f38d3963f3fa1ea3e3cf1f8daa03b416"
RELEVANCE_SHA256 = "476cf48591257824a9224df31ea73c7555c49fedda28b3f80b3557433888b4d9"
RANKER_SHA256 = "ba9e439950cd0bd750f898cb7880ece2eb7288420642ac0032fe05d4d28ddad4"


class SupportClass(IntEnum):
    """The support model's outputs, in its order."""

    ENTAILMENT = 0
    CONTRADICTION = 1
    NOT_MENTIONED = 2


@cache
def support_model() -> PairModel:
    return PairModel(MODELS / "support.onnx", SUPPORT_SHA256, max_tokens=512)


@cache
def relevance_model(max_tokens: int = 256) -> PairModel:
    """The relevance model; `max_tokens` other than 256 is for measuring what reading less
    costs (benchmarks/rerank.py)."""
    return PairModel(MODELS / "relevance.onnx", RELEVANCE_SHA256, max_tokens=max_tokens)


@cache
def ranker_model() -> Trees:
    """The candidate ranker, read on first use (lexkb.core.judge.trees.TreesError if its file
    is missing or not the one shipped)."""
    return Trees.read(MODELS / "ranker.json", RANKER_SHA256)


def support(claim: str, passages: list[str]) -> np.ndarray:
    """(len(passages), 3) probabilities, SupportClass's order."""
    if not passages:
        return np.zeros((0, len(SupportClass)), np.float32)
    return support_model().probabilities([(claim, p) for p in passages])


def answers(question: str, passages: list[str]) -> np.ndarray:
    """The chance each passage answers `question`, in the order given."""
    if not passages:
        return np.zeros(0, np.float32)
    asked = as_question(question)
    return relevance_model().probabilities([(asked, p) for p in passages])[:, 0]


def as_question(text: str) -> str:
    """A query written as the questions the relevance model learnt from are: capitalised and
    ending in "?" ("how long must a firm keep client records" scored a paragraph that answers
    it at 0.17, and 0.84 asked as "How long must a firm keep client records?")."""
    text = " ".join(text.split())
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in "?.!" else text + "?"
