"""The questions written here, one a line in benchmarks/questions/ (`#` starts a comment): on
subjects the ObliQA corpus lacks, to fit and measure abstention, and to train the relevance
model on questions a rulebook does not answer."""

from __future__ import annotations

from pathlib import Path

QUESTIONS = Path(__file__).resolve().parents[1] / "benchmarks" / "questions"


def written_questions(name: str) -> list[str]:
    """The questions of one file in benchmarks/questions/ ("out_of_scope_tune.txt")."""
    lines = (QUESTIONS / name).read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]
