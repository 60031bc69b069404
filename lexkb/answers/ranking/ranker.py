"""The order an answer reads its paragraphs in: a ranker learnt from people's questions.

A search's first hit is the paragraph most like the question; `ask` wants the one that
answers it. The ranker (LambdaMART, training/ranker_fit.py, read as plain arrays by
lexkb.core.judge.trees) scores each of a search's first RANK_DEPTH hits from what lexkb knows
of it (lexkb.answers.ranking.candidate_features): the search's own signals, the relevance model's
chance for the first CHANCE_DEPTH (those `ask`'s evidence reads anyway), the unit's kind, the
document the question names, the question's type against what the paragraph holds. Hits are
then read best first, a paragraph whose opening repeats one before it last.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from lexkb.answers.index_view import IndexView
from lexkb.answers.question import named_laws
from lexkb.answers.ranking.answered import ANSWER_DEPTH, first_chances
from lexkb.answers.ranking.candidate_features import FEATURES, candidate_features
from lexkb.core.judge.shipped import ranker_model
from lexkb.core.judge.trees import TreesError
from lexkb.results import Hit

RANK_DEPTH = 20  # the hits a search gives the ranker
CHANCE_DEPTH = ANSWER_DEPTH  # of which the relevance model reads the first
NO_CHANCE = -1.0  # a hit the relevance model did not read


def chances_of(question: str, hits: Sequence[Hit]) -> np.ndarray:
    """The relevance model's chance for each of the first CHANCE_DEPTH hits (kept on each as
    `answers`, which the evidence then reads), NO_CHANCE for the rest and where the model
    cannot be used."""
    found = np.full(len(hits), NO_CHANCE)
    chances = first_chances(question, hits)
    if chances:
        found[: len(chances)] = chances
    return found


@dataclass(frozen=True)
class Ranking:
    """Hits in the ranker's order, with its score and candidate features for each (empty
    `scores` where the model cannot be read: then the hits keep the search's order)."""

    hits: list[Hit]
    scores: np.ndarray
    rows: np.ndarray


def first_search(index: IndexView, question: str) -> tuple[list[Hit], str]:
    """The hits `ask` ranks for a first question, and the words it searched: scoped to the
    documents the question names, their names left out (named_laws.asked_of), RANK_DEPTH hits,
    no relevance floor. Training (training/ranker.py, training/foreign.py) reads the question
    through this, so the ranker learns from the lists it will be given."""
    scope, asked = named_laws.asked_of(index, question, question)
    filters = {"document": scope} if scope else None
    return index.search(asked, k=RANK_DEPTH, filters=filters, min_relevance=0.0).hits, asked


def ranked(
    index: IndexView, question: str, hits: Sequence[Hit], asked: str | None = None
) -> Ranking:
    """`hits` in the ranker's order: best first, a paragraph whose opening repeats one before
    it after every paragraph that says something new, ties in the search's order. `asked`: the
    words searched, where they are not the question's (candidate_features)."""
    unranked = Ranking(list(hits), np.zeros(0), np.zeros((0, len(FEATURES))))
    if not hits:
        return unranked
    try:
        model = ranker_model()
    except TreesError:
        return unranked
    if model.features != FEATURES:
        return unranked
    rows = candidate_features(index, question, hits, chances_of(question, hits), asked)
    scores = model.scores(rows)
    repeated = rows[:, FEATURES.index("repeated")] > 0
    order = np.lexsort((np.arange(len(hits)), -scores, repeated))
    return Ranking([hits[i] for i in order.tolist()], scores[order], rows[order])
