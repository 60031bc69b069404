"""Two open indexes of the same sources answering alike: what a sharded snapshot, and a build in
parts, are held to against the one-process build (tests/query/test_sharded_snapshot.py,
tests/pipeline/test_partitioned.py)."""

from __future__ import annotations

from lexkb import Index

# Questions over the sample corpus (examples/corpus), each finding something in it.
QUESTIONS = [
    "how long must records be retained",
    "client money reconciliation",
    "audit documentation assembly period",
    "personal data breach notification",
    "what counts as client assets",
    "section 4",
]
MODES = ("keyword", "vector", "hybrid")


def unversioned(value: object) -> object:
    """A result's dict without the snapshot versions it names, which differ by design."""
    if isinstance(value, dict):
        return {k: unversioned(v) for k, v in value.items() if k != "snapshot_version"}
    if isinstance(value, list):
        return [unversioned(v) for v in value]
    return value


def assert_same_rankings(one: Index, other: Index, questions: list[str] = QUESTIONS) -> None:
    """Every search mode ranks the same chunks with the same scores, for every question."""
    for question in questions:
        for mode in MODES:
            a, b = one.search(question, k=10, mode=mode), other.search(question, k=10, mode=mode)
            assert [h.chunk_id for h in a.hits] == [h.chunk_id for h in b.hits], (question, mode)
            assert [h.score for h in a.hits] == [h.score for h in b.hits], (question, mode)
