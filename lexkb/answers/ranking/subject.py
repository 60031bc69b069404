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
so that "not held" is learnt beside two indexes. Only questions `ask` asks it of: a question
scoped to documents it names (by title or a party's name, lexkb.answers.question.named_laws) is
never declined as out of scope, and its list, one document's paragraphs, says nothing of the
subject; fitted on them too (stop 75's first refit), the model read the lists of unscoped
questions as held more often (the written neighbouring questions, benchmarks/abstention.py,
0.640 -> 0.562 declined). 843 answerable against 2,329 in the train and tune splits, fitted by
training/answerability.py (logistic, ridge 30 chosen out of fold, five folds by document or
topic; the two classes weighed alike, so that 0.5 stays even odds, which
lexkb.answers.evidence's `foreign_below` reads, however many foreign questions are added). ROC
AUC 0.953 out of fold; on the test split 0.974 (241 answerable against 486 asked of an index
without what they are about, none scoped), where the scope model alone reaches 0.950 and the
relevance model's best chance 0.787 (stop 75; stop 74, every question: 0.951 and 0.970). On the
people's own unanswerable questions, whose documents are held, it reads little (0.642 test):
those are answerability's to judge.

Threshold: HELD_BELOW declines 3% of the answerable questions it is asked of, out of fold (the
share chosen at stop 72, between 3% and 5%, by realqa's answerable questions: a threshold read
on realqa); answerability's thresholds are lowered so that the two together decline at most
10%, and flag or decline at most 20%, of all the answerable questions. Out of fold the
unanswerable questions declined (held and foreign weighed alike) rise with the share: 0.447 at
0, 0.573 at 2%, 0.595 at 3%, 0.630 at 5% (stop 75). On the test split, together: 9.2% of the
answerable declined (22.7% flagged or declined), 44.6% of the held unanswerable (71.3%), 78.4%
of those asked of an index without what they are about (84.9%); stop 74: 7.7%, 43.3%, 75.1%.
Not read into these shares: evidence also declines as out of scope where this model leans
foreign (under 0.5), the scope model reads the question as foreign and the relevance model
finds nothing answering; on the people's test split `ask` declined 12.4% of the answerable in
all (47 of 379, 13 of them out of scope). Fitted without the weights, the model read more of the people's everyday-worded ADGM questions as leaning foreign
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

# Fitted by training/answerability.py (ridge 30, chosen out of fold, the two classes weighed
# alike; see the card above).
MODEL = Calibration(
    FEATURES,
    (0.0199, 1.2028, 0.5581, -0.1028, 0.6825, 1.1614, 0.2025, 0.1925, 4.8488, 7.0771, -0.4894,
     0.0555, 1.3673, -1.1035, 0.7587, -2.1688, -0.8913, -0.3509, 0.0370, 0.4992, 0.0756,
     -2.0907, 0.1399, 0.7772, 1.9388, 0.3137, -0.6724, -1.0844, 1.9247, -4.1623, -0.6094, 1.5501),
    -3.1176,
)  # fmt: skip
HELD_BELOW = 0.1611


def chance(features: np.ndarray) -> float:
    """The chance the question is about something the index holds, from
    answerability.question_features' row."""
    return float(MODEL.apply(features, FEATURES)[0])
