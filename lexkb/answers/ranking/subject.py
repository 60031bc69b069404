"""Does the index hold what the question is about? A chance from the ranked list, beside
answerability's.

Two ways a question goes unanswered ask for two readings (issue 58). A document the index holds
may be silent on it (lexkb.answers.ranking.answerability, fitted on questions whose documents
were all held); or the question is about something the index does not hold at all: the GDPR, or
an NDA, asked of ADGM's rulebooks. The answerability model, which never saw the second kind,
let most of them through. This model reads the same features
(lexkb.answers.ranking.answerability.question_features) and is fitted on the second kind.

Model card. Data: the people's first-turn answerable and list questions
(benchmarks/questions/people/, as training/ranker.py searched them over the index of every
document they name) against questions asked of the index of ADGM's rulebooks alone
(training/foreign.py): the same sets' questions about documents that are not ADGM's, and the
questions written here to fit on about subjects those rulebooks lack
(benchmarks/questions/out_of_scope_tune.txt, neighbouring_tune.txt); 1,615 against 1,338 in the
train and tune splits, fitted by training/answerability.py (logistic, ridge 10 chosen out of fold,
five folds by document). ROC AUC 0.946 out of fold; on the test split 0.980 (379 answerable
against 210 asked of an index without their document), where the scope model alone reaches
0.970 and the relevance model's best chance 0.840. On the people's own unanswerable questions,
whose documents are held, it reads little (0.655 test): those are answerability's to judge.

Threshold: HELD_BELOW declines 3% of the answerable questions out of fold; answerability's
thresholds are lowered so that the two together decline at most 10%, and flag or decline at most
20%, of them. Out of fold the unanswerable questions declined (held and foreign weighed alike)
rose with the share: 0.512 at 0, 0.571 at 2%, 0.583 at 3%, 0.607 at 5%. Between 3% and 5%
realqa's answerable questions decided, a threshold read on realqa: the subject model declined
4.3% of them at 3% and 7.1% at 5%, and 20% of its unanswerable at both. On the test split,
together: 8.7% of the answerable declined (21.9% flagged or declined), 43.3% of the held
unanswerable (70.1%), 84.3% of those asked of an index without their document (88.6%);
answerability alone at its own thresholds: 9.0%, 43.9%, 70.0%.

Known weaknesses: its foreign questions are all asked of one index (ADGM's rulebooks); an index
of another family has not been read by it. The questions written here on neighbouring subjects
and not fitted on (benchmarks/questions/neighbouring.txt: HIPAA, the CCPA, leases, franchises)
it reads less well than the people's: with answerability it declined 39% of them, where the
relevance model's bar with the scope model declined 62%. So that bar still declines where this
model also leans foreign (lexkb.answers.evidence, `foreign_below`).
"""

from __future__ import annotations

import numpy as np

from lexkb.answers.ranking.answerability import FEATURES
from lexkb.relevance import Calibration

# Fitted by training/answerability.py (ridge 10, chosen out of fold; see the card above).
MODEL = Calibration(
    FEATURES,
    (0.1186, 0.8831, -0.0230, -0.4340, 0.7256, 1.8918, 0.3042, -0.1694, 2.7868, 6.8055, 0.2035,
     1.5810, 2.3712, -2.9702, -1.1673, -2.5098, -1.2365, -0.8425, -0.0903, 1.0050, 0.4254,
     -3.1812, -0.6618, 1.7400, 2.0006, -1.1267, -1.5066, -0.7124, 1.9151, -2.1042, -1.1491,
     2.4799),
    -1.6459,
)  # fmt: skip
HELD_BELOW = 0.1850


def chance(features: np.ndarray) -> float:
    """The chance the question is about something the index holds, from
    answerability.question_features' row."""
    return float(MODEL.apply(features, FEATURES)[0])
