"""The people's questions on subjects no index here holds (benchmarks/questions/elsewhere/):
what the subject model learns "not held" from must be split by topic and never name what the
indexes hold."""

from __future__ import annotations

import re
from collections import Counter, defaultdict

from evaluation_data.people import split_of
from evaluation_data.questions import elsewhere_rows

# Names of what the indexes here hold; a question naming one is no example of "not held".
HELD = re.compile(
    r"\b(?:GDPR|AI Act|Digital Markets Act|DMA|CSRD|ADGM|FSRA|DORA|IFRS|Bribery Act|"
    r"Copyright|Police \(Northern Ireland\)|non-disclosure|NDA)\b",
    re.IGNORECASE,
)


def test_each_topic_sits_in_one_split_and_no_question_names_a_held_law():
    rows = elsewhere_rows()
    topics = Counter(row["answers"][0]["document"] for row in rows)
    assert len(rows) == 660 and set(topics.values()) == {10}
    splits: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        splits[row["answers"][0]["document"]].add(split_of(row))
    assert all(len(found) == 1 for found in splits.values())
    assert {s for found in splits.values() for s in found} == {"train", "tune", "test"}
    assert len({row["question"].casefold() for row in rows}) == len(rows)
    assert not [row["question"] for row in rows if HELD.search(row["question"])]
