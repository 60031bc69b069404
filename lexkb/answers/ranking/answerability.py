"""Does anything the index holds answer the question? A chance from the ranked list as a whole.

The relevance model reads one paragraph at a time; whether a question is answered shows in the
list: how far the ranker's first paragraph stands above the rest, whether the relevance model
reads any of the first ten as answering, whether the question's rarer words and word pairs
occur in what was found (lexkb.answers.question.scope's signals), and whether the question names a law
the index lacks (lexkb.answers.question.named_laws) or a document it holds. A logistic model over these,
fitted on the people's questions written here (training/answerability.py: train split by
document, thresholds on the tune split), gives the chance; `evidence` declines below
ABSTAIN_BELOW and says an answer may not answer below FLAG_BELOW.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lexkb.answers.ranking.candidate_features import FEATURES as CANDIDATE
from lexkb.relevance import Calibration

FEATURES = (
    "ranker_top",
    "ranker_gap",
    "chance_max",
    "chance_first",
    "relevance_top",
    "scope",
    "missing_mass",
    "max_missing",
    "bigram_coverage",
    "best_bigrams",
    "defined_terms",
    "only_foreign",
    "names_document",
    "top_document_share",
)
# scope.FEATURES' positions of the signals read here.
_SCOPE = {"missing_mass": 3, "max_missing": 4, "bigram_coverage": 5, "best_bigrams": 8,
          "defined_terms": 7}  # fmt: skip


def question_features(
    rows: np.ndarray,
    ranker_scores: np.ndarray,
    scope_probability: float,
    scope_values: Sequence[float],
    only_foreign: bool,
) -> np.ndarray:
    """One row of FEATURES for a question: `rows` are its candidates' features
    (lexkb.answers.ranking.candidate_features, search order) and `ranker_scores` the ranker's score of
    each, in the same order."""
    column = {name: n for n, name in enumerate(CANDIDATE)}
    if not len(rows):
        return np.array([[-10.0, 0.0, 0.0, 0.0, 0.0, scope_probability,
                          *(scope_values[_SCOPE[k]] for k in ("missing_mass", "max_missing",
                                                               "bigram_coverage", "best_bigrams",
                                                               "defined_terms")),
                          float(only_foreign), 0.0, 0.0]])  # fmt: skip
    order = np.argsort(-ranker_scores, kind="stable")
    top = float(ranker_scores[order[0]])
    rest = ranker_scores[order[1:5]]
    chances = rows[:, column["answers"]]
    first = rows[order[0]]
    return np.array([[
        top,
        top - float(rest.mean()) if rest.size else 0.0,
        float(chances.max()),
        float(first[column["answers"]]),
        float(rows[:, column["relevance"]].max()),
        scope_probability,
        scope_values[_SCOPE["missing_mass"]],
        scope_values[_SCOPE["max_missing"]],
        scope_values[_SCOPE["bigram_coverage"]],
        scope_values[_SCOPE["best_bigrams"]],
        scope_values[_SCOPE["defined_terms"]],
        float(only_foreign),
        float(first[column["names_document"]]),
        float(first[column["document_share"]]),
    ]])  # fmt: skip


# Fitted by training/answerability.py on the train and tune splits of the people's questions
# (2,268 questions, 653 unanswerable); ROC AUC on the test split 0.661 (the relevance model's
# best chance alone 0.569, the scope model 0.628). The thresholds decline 5% and flag or
# decline 10% of the answerable ones out of fold (five folds by document).
MODEL = Calibration(
    FEATURES,
    (-0.1112, 0.4351, 0.8486, -0.3284, 0.4345, -0.4549, 0.2794, -0.8448, -0.4907, -0.5449,
     -1.2687, -3.3514, 0.5008, 0.3901),
    1.3382,
)  # fmt: skip
ABSTAIN_BELOW = 0.4677
FLAG_BELOW = 0.5378


def chance(features: np.ndarray) -> float:
    """The chance the question is answered by the index, from question_features' row."""
    return float(MODEL.apply(features, FEATURES)[0])
