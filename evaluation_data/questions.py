"""The questions written here, one a line in benchmarks/questions/ (`#` starts a comment): on
subjects the ObliQA corpus lacks, to fit and measure abstention, and to train the relevance
model on questions a rulebook does not answer."""

from __future__ import annotations

import json
from pathlib import Path

QUESTIONS = Path(__file__).resolve().parents[1] / "benchmarks" / "questions"


def written_questions(name: str) -> list[str]:
    """The questions of one file in benchmarks/questions/ ("out_of_scope_tune.txt")."""
    lines = (QUESTIONS / name).read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


ELSEWHERE = QUESTIONS / "elsewhere" / "questions.jsonl"


def elsewhere_rows() -> list[dict]:
    """People's questions on subjects no index here holds (benchmarks/questions/elsewhere/), as
    rows of the people's sets, each answered by its topic as if a document: split and folded by
    topic (evaluation_data.people.split_of), so that no topic is on two sides."""
    lines = ELSEWHERE.read_text(encoding="utf-8").splitlines()
    return [
        {"id": f"elsewhere:{number}", "question": row["question"], "kind": "answerable",
         "set": "elsewhere", "answers": [{"document": f"elsewhere:{row['topic']}"}]}
        for number, row in enumerate(json.loads(line) for line in lines if line.strip())
    ]  # fmt: skip
