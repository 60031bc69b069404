"""answered: does a paragraph found answer the question? The relevance model's best chance.

Two judges read a question against an index. The scope model (lexkb.answers.scope) asks whether
the question is about what the index holds, from signals of the whole search; the relevance
model (lexkb.core.judge) reads the question with each paragraph and says how likely it is that
the paragraph answers it. The scope model keys on words, so it declines answerable questions
worded unlike the corpus (26 of the 40 held-out answerable ObliQA questions `evidence` declined
at stop 36 were its); where the relevance model is near certain that a paragraph answers, that
reading overrules an out-of-scope one.
SCOPE_OVERRULE is the lowest value (on a grid of 0.005) at which no unanswerable tune question
is overruled: neither the neighbouring subjects written to choose it
(benchmarks/questions/neighbouring_tune.txt, which neither model was fitted on), nor the
out-of-scope tune questions and CUAD's tune negatives. It rescues 1 of XRefRAG's 92 ADGM dev
questions, which neither model saw (BENCHMARKS.md, "Stop 37").
"""

from __future__ import annotations

from collections.abc import Sequence

from lexkb.core.judge.pairs import PairModelError
from lexkb.core.judge.shipped import answers
from lexkb.results import Hit

# Hits given without the relevance model's chances get them for the first ANSWER_DEPTH.
ANSWER_DEPTH = 10
# The best chance at which an out-of-scope reading is overruled (1.0 or more: never).
SCOPE_OVERRULE = 0.995

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
    a reranked search gave, else asked of the relevance model now. None for a query that is not
    a question, and where the model cannot be used (its file missing or not the one shipped);
    the other signals then decide alone."""
    if not hits or not is_question(query):
        return None
    chances = [h.answers for h in hits if h.answers is not None]
    if chances:
        return max(chances)
    try:
        return float(answers(query, [h.text for h in hits[:ANSWER_DEPTH]]).max())
    except PairModelError:
        return None


def scope_overruled(
    scope: float, min_scope: float, chance: float | None, threshold: float = SCOPE_OVERRULE
) -> str | None:
    """Why an out-of-scope reading (`scope` under `min_scope`) is overruled, in words: where the
    relevance model's best chance (`chance`, from best_chance) reaches `threshold`. None where
    it is not overruled, and where the scope model did not read the question as out of scope."""
    if scope >= min_scope or chance is None or chance < threshold:
        return None
    return (
        f"scope {scope:.2f} < {min_scope}, overruled: the relevance model reads a paragraph "
        f"found as answering the question ({chance:.2f} >= {threshold})"
    )
