"""answered: does a paragraph found answer the question? The relevance model's best chance.

Two judges read a question against an index. The relevance model (lexkb.core.judge) reads the
question with each paragraph found and says how likely it is that the paragraph answers it.
Where the subject and answerability models over the ranked list judge
(lexkb.answers.ranking.subject and .answerability, which read this best chance among their
features), they decide (lexkb.answers.evidence). Elsewhere `declined` turns this best chance
into a reason: the scope model (lexkb.answers.question.scope), fitted to questions that repeat
their passages' phrases, only says why: out of scope when it also reads the question as foreign,
else not answered by the sources. A statement, which the relevance model does not read, is
judged by the scope model alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from lexkb.core.judge.pairs import PairModelError
from lexkb.core.judge.shipped import answers
from lexkb.core.vocabulary import AbstentionReason
from lexkb.results import Hit

# Hits given without the relevance model's chances get them for the first ANSWER_DEPTH.
ANSWER_DEPTH = 10
OUT_OF_SCOPE = AbstentionReason.OUT_OF_SCOPE
NOT_ANSWERED = AbstentionReason.NOT_ANSWERED_BY_SOURCES
# Below this best chance a question is declined where the two models do not judge,
# and an answer's first source is flagged; at DIRECT_ANSWERS or more for the first hit an
# answer may be DIRECT. Both chosen on questions in people's words (BENCHMARKS.md, "People's
# questions"): the model barely tells answerable from unanswerable ones, and the nearest
# provisions, marked as possibly not answering, serve a person better than a refusal.
MIN_ANSWERS = 0.005
DIRECT_ANSWERS = 0.95

_QUESTION_WORDS = frozenset(
    ("what", "which", "who", "whom", "whose", "when", "where", "why", "how", "is", "are", "was",
     "were", "does", "do", "did", "can", "could", "must", "may", "might", "should", "shall",
     "will", "would", "has", "have")
)  # fmt: skip


def is_question(query: str) -> bool:
    """A question, not a phrase to look up: it ends with "?" or opens with a question word or an
    auxiliary ("how long must ...", "does the rule ..."). Only a question can go unanswered."""
    words = query.strip().casefold().split()
    return query.strip().endswith("?") or bool(words) and words[0] in _QUESTION_WORDS


def best_chance(query: str, hits: Sequence[Hit]) -> float | None:
    """The best chance that one of the first ANSWER_DEPTH hits answers `query`: read from hits
    a reranked search gave, else asked of the relevance model now and kept on each of those hits
    as `answers`. None for a query that is not a question, and where the model cannot be used
    (its file missing or not the one shipped); the other signals then decide alone."""
    if not hits or not is_question(query):
        return None
    chances = [h.answers for h in hits if h.answers is not None]
    if chances:
        return max(chances)
    found = first_chances(query, hits)
    return None if found is None else max(found)


def first_chances(query: str, hits: Sequence[Hit]) -> list[float] | None:
    """The relevance model's chance for each of the first ANSWER_DEPTH hits, asked of it for
    those that lack one and kept on each as `answers`; None where the model cannot be used."""
    read = list(hits[:ANSWER_DEPTH])
    missing = [h for h in read if h.answers is None]
    if missing:
        try:
            found = answers(query, [h.text for h in missing])
        except PairModelError:
            return None
        for hit, chance in zip(missing, found.tolist(), strict=True):
            hit.answers = round(float(chance), 4)
    return [h.answers for h in read if h.answers is not None]  # all of them, set above


def declined(
    scope: float, min_scope: float, chance: float | None, min_answers: float
) -> AbstentionReason | None:
    """Why a question is declined, or None. With the relevance model's best chance (`chance`,
    from best_chance): declined when it is under `min_answers`, as OUT_OF_SCOPE where the scope
    model also reads the question as foreign (`scope` under `min_scope`), else NOT_ANSWERED.
    Without it (a statement, or no model): OUT_OF_SCOPE where the scope model says so."""
    if chance is None:
        return OUT_OF_SCOPE if scope < min_scope else None
    if chance >= min_answers:
        return None
    return OUT_OF_SCOPE if scope < min_scope else NOT_ANSWERED
