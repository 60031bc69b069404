"""Does anything the index holds answer the question? A chance from the ranked list as a whole.

The relevance model reads one paragraph at a time; whether a question is answered shows in the
list and in what the question asks for. Read here, per question (issue 58):

- the ranker's scores of the twenty hits: how far its first stands above the next four, their
  spread, and how much of the list's weight (a softmax of the scores) the first takes;
- the relevance model's chances for the first ten: the best, the mean of the best three, their
  sum, and the best of the ranker's first three;
- the dense cosine: the best and the mean of the best three;
- the question's words and rarer words (IDF-weighted) that single hits hold: the most any hit
  holds, the ranker's first three, the search's first three, and the headings;
- the question's type against what was found: whether it asks for a period or an amount
  (lexkb.answers.ranking.candidate_features' patterns), and whether the ranker's first three,
  or any hit, hold one. A near miss often asks for a figure the documents do not give;
- lexkb.answers.question.scope's probability and its nine signals;
- whether the question names only laws, regulators or standards the index lacks
  (lexkb.answers.question.named_laws). How many it names is left out: a foreign name beside a
  held one is answered with a warning, not counted against the question (out of fold the
  counts added nothing).

A logistic model over these, fitted on the people's questions written here
(training/answerability.py: train and tune splits, five folds by document), gives the chance;
`evidence` declines below ABSTAIN_BELOW and says an answer may not answer below FLAG_BELOW.

Model card. Data: the first turns of benchmarks/questions/people/ (answerable and list against
unanswerable; data card there), searched over the index of the 144 documents they name
(training/ranker.py). Fitted on train and tune (2,268 questions, 653 unanswerable), the ridge
chosen by out-of-fold ROC AUC (five folds by document); the features were chosen from a wider
set of statistics (95; training/answerability_variants.py keeps 71 of them, among them the unit
kinds of the ranker's first, its document and the relevance and cosine gaps, which added
nothing) by the gains of a gradient-boosted model fitted on train and tune. ROC AUC 0.810 out
of fold and 0.814 on the test split (536 questions, 157 unanswerable; stop 75, the lists as
`ask` searches them, a party's name scoping too; stop 74: 0.805 and 0.819), against 0.713 / 0.692 for the fourteen
features before (the ranker's first score and gap, the first and best chance, scope and five
of its signals, only-foreign, the named document and its share) refitted on the same examples,
and 0.684 on the test split for their shipped coefficients; the relevance model's best chance
alone 0.569, the scope model alone 0.641 (test). LightGBM over the same features did no better
by a clear margin (0.815 out of fold, nested; 0.814 test), so the logistic model ships.

Known weakness: most of the gain is the question's type. Without it (asks a period or an
amount, and whether the hits hold one) the model reaches 0.734 / 0.700; with only "asks one and
no hit holds one" in its place, 0.745 / 0.710. A near miss often asks for a figure the documents
do not give, so asking for an amount is itself read as a sign of no answer, and an answerable
question that asks for one is the likelier to be flagged. It is not our writers' habit alone:
of realqa's questions, written elsewhere, 10 of 25 unanswerable ask for an amount and 8 of 70
answerable (people's sets here: 39% and 14%); only those proportions were read there.

Thresholds: chosen with lexkb.answers.ranking.subject's (whether the index holds what the
question is about, fitted on questions asked of an index without their document): the two
together decline at most 10%, and flag or decline at most 20%, of the answerable questions out of
fold, the subject model 3% of them alone (refitted at stop 73 with people's questions on
subjects no index here holds, and at stop 74 on the lists as `ask` searches them). On the test
split together they decline 7.7% and flag or decline 20.8% of the answerable, decline 43.3% and
flag or decline 67.5% of the unanswerable, and decline 75.1% of those asked of an index without
what they are about; this model alone at its own 10% / 20% thresholds (0.5097, 0.6655): 8.4%,
21.4%, 47.1%, 68.2%, 43.3% (stop 73: 9.0%, 21.4%, 43.9%, 69.4%, 43.9%). The relevance
model's bar before these (best chance under 0.005) declined 20.1% of the test split's answerable
questions and 19.1% of its unanswerable ones; joined with the scope model reading the question
as foreign, 17.9% and 18.5%, so it declines only where the subject model also leans foreign.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lexkb.answers.question.scope import FEATURES as SCOPE
from lexkb.answers.ranking.candidate_features import FEATURES as CANDIDATE
from lexkb.answers.ranking.candidate_features import asks_amount, asks_period
from lexkb.relevance import Calibration

FEATURES = (
    "ranker_gap",
    "ranker_spread",
    "ranker_first_share",
    "ranker_entropy",
    "chance_max",
    "chance_best3",
    "chance_sum",
    "chance_ranked3",
    "cosine_max",
    "cosine_best3",
    "rare_words_max",
    "rare_words_ranked3",
    "rare_words_first3",
    "words_max",
    "words_first3",
    "heading_words_max",
    "asks_period",
    "asks_amount",
    "period_ranked3",
    "amount_ranked3",
    "period_any",
    "only_foreign",
    "scope",
    *SCOPE,
)
_COLUMN = {name: n for n, name in enumerate(CANDIDATE)}


def question_features(
    question: str,
    rows: np.ndarray,
    ranker_scores: np.ndarray,
    scope_probability: float,
    scope_values: Sequence[float],
    only_foreign: bool,
) -> np.ndarray:
    """One row of FEATURES for `question`: `rows` are its hits' features
    (lexkb.answers.ranking.candidate_features, in any order: the search's is read from their
    `rank`), `ranker_scores` the ranker's score of each in the same order; `only_foreign`:
    the question names only laws the index lacks (lexkb.answers.question.named_laws)."""
    found = dict.fromkeys(FEATURES, 0.0)
    found.update(zip(SCOPE, (float(v) for v in scope_values), strict=True))
    found["scope"] = float(scope_probability)
    found["only_foreign"] = float(only_foreign)
    period, amount = asks_period(question), asks_amount(question)
    found["asks_period"], found["asks_amount"] = float(period), float(amount)
    if len(rows):
        found.update(_list_features(rows, np.asarray(ranker_scores, dtype=np.float64)))
    return np.array([[found[name] for name in FEATURES]])


def _list_features(rows: np.ndarray, scores: np.ndarray) -> dict[str, float]:
    ranked = np.argsort(-scores, kind="stable")
    first3 = np.argsort(rows[:, _COLUMN["rank"]], kind="stable")[:3]
    ranked3 = ranked[:3]
    ordered = scores[ranked]
    weights = np.exp(ordered - ordered[0])
    weights /= weights.sum()
    chances = rows[:, _COLUMN["answers"]]
    read = np.sort(chances[chances >= 0])[::-1]  # unread hits hold NO_CHANCE
    if not read.size:
        read = np.zeros(1)
    cosines = np.sort(rows[:, _COLUMN["cosine"]])[::-1]
    rare = rows[:, _COLUMN["rare_words_held"]]
    words = rows[:, _COLUMN["words_held"]]
    period = rows[:, _COLUMN["asks_when_holds_period"]]
    amount = rows[:, _COLUMN["asks_amount_holds_amount"]]
    return {
        "ranker_gap": float(ordered[0] - ordered[1:5].mean()) if ordered.size > 1 else 0.0,
        "ranker_spread": float(ordered.std()),
        "ranker_first_share": float(weights[0]),
        "ranker_entropy": float(-(weights * np.log(weights + 1e-12)).sum()),
        "chance_max": float(read[0]),
        "chance_best3": float(read[:3].mean()),
        "chance_sum": float(read.sum()),
        "chance_ranked3": max(float(chances[ranked3].max()), 0.0),
        "cosine_max": float(cosines[0]),
        "cosine_best3": float(cosines[:3].mean()),
        "rare_words_max": float(rare.max()),
        "rare_words_ranked3": float(rare[ranked3].mean()),
        "rare_words_first3": float(rare[first3].max()),
        "words_max": float(words.max()),
        "words_first3": float(words[first3].max()),
        "heading_words_max": float(rows[:, _COLUMN["heading_words_held"]].max()),
        "period_ranked3": float(period[ranked3].max()),
        "amount_ranked3": float(amount[ranked3].max()),
        "period_any": float(period.max()),
    }


# Fitted by training/answerability.py (ridge 30, chosen out of fold; see the card above).
MODEL = Calibration(
    FEATURES,
    (0.1372, 0.5429, 1.0086, 0.0602, 0.1581, 0.2483, -0.0088, 0.3600, 2.4935, 1.0219, -0.5398,
     -0.5488, -0.2189, 0.8245, 0.6929, -0.6168, -0.5302, -1.4101, -0.2251, -0.1958, 0.1818, -2.6126,
     0.0826, -0.3701, -1.1103, 1.5346, 0.3789, -0.7837, -0.2058, 4.2295, -1.4364, -0.0344),
    -4.4590,
)  # fmt: skip
ABSTAIN_BELOW = 0.4981
FLAG_BELOW = 0.6708


def chance(features: np.ndarray) -> float:
    """The chance the question is answered by the index, from question_features' row."""
    return float(MODEL.apply(features, FEATURES)[0])
