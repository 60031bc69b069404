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
document they name) against questions asked of an index that does not hold what they are about
(training/foreign.py): asked of the index of ADGM's rulebooks alone, the same sets' questions
about documents that are not ADGM's, the questions written here to fit on about subjects those
rulebooks lack (benchmarks/questions/out_of_scope_tune.txt, neighbouring_tune.txt), and people's
questions on 66 subjects no index here holds (benchmarks/questions/elsewhere/: work, family,
tax, travel, health, ...; stop 73), which are also asked of the people's index of 144 documents,
so that "not held" is learnt beside two indexes. 1,615 against 2,358 in the train and tune
splits, fitted by training/answerability.py (logistic, ridge 10 chosen out of fold, five folds
by document or topic; the two classes weighed alike, so that 0.5 stays even odds, which
lexkb.answers.evidence's `foreign_below` reads, however many foreign questions are added). ROC
AUC 0.951 out of fold; on the test split 0.970 (379 answerable against 510 asked of an index
without what they are about), where the scope model alone reaches 0.954 and the relevance
model's best chance 0.801 (stop 74: the ranked lists as `ask` searches, scoped to a document
the question names). On the people's own unanswerable questions, whose documents are held, it
reads little (0.638 test): those are answerability's to judge.

Threshold: HELD_BELOW declines 3% of the answerable questions out of fold (the share chosen at
stop 72, between 3% and 5%, by realqa's answerable questions: a threshold read on realqa);
answerability's thresholds are lowered so that the two together decline at most 10%, and flag
or decline at most 20%, of them. Out of fold the unanswerable questions declined (held and
foreign weighed alike) rise with the share: 0.446 at 0, 0.555 at 2%, 0.560 at 3%, 0.594 at 5%.
On the test split, together: 7.7% of the answerable declined (20.8% flagged or declined), 43.3%
of the held unanswerable (67.5%), 75.1% of those asked of an index without what they are about
(82.0%); answerability alone at its own thresholds: 8.4%, 47.1%, 43.3% (stop 73: 8.2%,
42.0%, 78.0% together). Fitted without the weights, the model read more of the people's everyday-worded ADGM questions as leaning foreign
(under 0.5), where the relevance and scope models' agreement declines them: on the people's
test split 3 fewer answered right than stop 72's model; weighed alike, one fewer.

Known weaknesses: the written questions on neighbouring subjects not fitted on
(benchmarks/questions/neighbouring.txt: HIPAA, the CCPA, leases, franchises) it reads less well
than the people's: 63% of them declined (benchmarks/abstention.py), 85% of the people's
neighbouring test questions (benchmarks/named_laws.py). The relevance model's bar with the scope
model still declines where this model also leans foreign (lexkb.answers.evidence,
`foreign_below`).
"""

from __future__ import annotations

import numpy as np

from lexkb.answers.ranking.answerability import FEATURES
from lexkb.relevance import Calibration

# Fitted by training/answerability.py (ridge 10, chosen out of fold, the two classes weighed
# alike; see the card above).
MODEL = Calibration(
    FEATURES,
    (0.0859, 2.2846, -0.1618, 0.1549, 0.4835, 1.2868, 0.2541, 0.1853, 3.0510, 5.8497, -0.1346,
     -0.1221, 3.5645, -3.2623, -0.2334, -3.3493, -1.1193, -0.8063, 0.5872, 1.0050, -0.0830,
     -3.1833, -0.0292, 1.8436, 3.3694, 0.7367, 0.1251, -1.4310, 2.4869, -4.7374, -0.6874, 1.1874),
    -2.8637,
)  # fmt: skip
HELD_BELOW = 0.1436


def chance(features: np.ndarray) -> float:
    """The chance the question is about something the index holds, from
    answerability.question_features' row."""
    return float(MODEL.apply(features, FEATURES)[0])
