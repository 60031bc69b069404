"""The ranker `ask` reads its paragraphs in (issue 58): what it knows of each candidate, and the
order it gives, on the real sample index with the shipped model."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from lexkb.answers.ask import AskSettings, ask
from lexkb.answers.ranking import ranker
from lexkb.answers.ranking.candidate_features import FEATURES, candidate_features

QUESTION = "How long must client money reconciliation records be kept?"


def _column(rows: np.ndarray, name: str) -> np.ndarray:
    return rows[:, FEATURES.index(name)]


def test_a_candidate_is_read_for_its_kind_and_the_question_s_type(index):
    hits = index.search(QUESTION, k=4, min_relevance=0.0).hits
    texts = [
        '"Client money" means money of any currency held for a client.',
        'In Article 4, the following point is inserted: "(7a) records ..."',
        "Records shall be kept for a period of six years from the date of reconciliation.",
        "Records shall be kept for a period of six years from the date of reconciliation.",
    ]
    hits = [replace(h, text=t, answers=None) for h, t in zip(hits, texts, strict=True)]
    rows = candidate_features(index, QUESTION, hits, np.array([0.2, 0.1, 0.9, 0.9]))
    assert _column(rows, "definition").tolist() == [1, 0, 0, 0]
    assert _column(rows, "amending").tolist() == [0, 1, 0, 0]
    # "how long" against a paragraph holding a period; the same opening twice is a repeat.
    assert _column(rows, "asks_when_holds_period").tolist() == [0, 0, 1, 1]
    assert _column(rows, "repeated").tolist() == [0, 0, 0, 1]
    assert np.allclose(_column(rows, "answers_gap"), [-0.7, -0.8, 0.0, 0.0])


def test_the_ranker_orders_a_search_and_puts_repeats_last(index):
    hits = index.search(QUESTION, k=ranker.RANK_DEPTH, min_relevance=0.0).hits
    repeat = replace(hits[1], chunk_id=hits[1].chunk_id, text=hits[0].text, answers=None)
    found = ranker.ranked(index, QUESTION, [*hits[:5], repeat])
    assert sorted(h.chunk_id for h in found.hits) == sorted(h.chunk_id for h in [*hits[:5], repeat])
    assert found.hits[-1] is repeat
    assert np.all(np.diff(found.scores[:-1]) <= 0)
    assert found.rows.shape == (6, len(FEATURES))


def test_ask_reads_the_ranker_s_first_paragraph_first(index):
    answer = ask(index, QUESTION, cache=None)
    searched = ask(index, QUESTION, cache=None, settings=AskSettings(rank=False))
    hits = index.search(QUESTION, k=ranker.RANK_DEPTH, min_relevance=0.0).hits
    first = ranker.ranked(index, QUESTION, hits).hits[0]
    assert answer.sources and answer.sources[0].chunk_id == first.chunk_id
    assert answer.verification["answering"]["answerability"] is not None
    assert searched.sources


def test_answerability_reads_the_list_in_any_order_and_the_question_s_type(index):
    from lexkb.answers.question import scope
    from lexkb.answers.ranking import answerability

    hits = index.search(QUESTION, k=20, min_relevance=0.0).hits
    ranking = ranker.ranked(index, QUESTION, hits)
    probability, signals = scope.in_scope(index, QUESTION, hits)

    def row(question: str, order: np.ndarray) -> np.ndarray:
        return answerability.question_features(
            question, ranking.rows[order], ranking.scores[order], probability, signals.values, False
        )[0]

    # The ranker's order (as `evidence` passes it) and the search's (as training passes it).
    search = np.argsort(_column(ranking.rows, "rank"), kind="stable")
    ranked = row(QUESTION, np.arange(len(hits)))
    assert np.allclose(ranked, row(QUESTION, search))
    names = answerability.FEATURES
    assert ranked[names.index("asks_period")] == 1 and ranked[names.index("asks_amount")] == 0
    assert 0.0 <= answerability.chance(ranked[None, :]) <= 1.0
    # No hits: the question's own signals only.
    alone = answerability.question_features(QUESTION, np.zeros((0, len(FEATURES))),
                                            np.zeros(0), probability, signals.values, True)[0]  # fmt: skip
    assert alone[names.index("only_foreign")] == 1 and alone[names.index("chance_max")] == 0
