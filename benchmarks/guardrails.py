"""Guardrails: accuracy per question type on questions written here, asked of the ObliQA index.

    .venv/bin/python -m benchmarks.guardrails --index benchmarks/out/obliqa/index

The questions (benchmarks/questions/guardrails.tsv) were written for this benchmark across the
allowed type and the five forbidden ones. Both they and the patterns of
lexkb.answers.guardrails were written here, so this measures consistency with the policy the
module states more than generalisation: read the per-type errors, which are listed. Side by
side, a plain keyword baseline: a question is predictive if it says "will", advice if it says
"should", own data if it says "our" or "my", estimation if it says "estimate" or "how much";
out of scope never.
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from pathlib import Path

from lexkb import Index
from lexkb.answers.guardrails import ALLOWED, TYPES, check_question

REPO = Path(__file__).resolve().parent.parent


QUESTIONS = Path(__file__).resolve().parent / "questions" / "guardrails.tsv"
BASELINE = (
    ("predictive", ("will",)),
    ("advice", ("should",)),
    ("own_data", ("our", "my")),
    ("estimation", ("estimate", "how much")),
)


def load() -> list[tuple[str, str]]:
    rows = []
    for line in QUESTIONS.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            kind, question = line.split("\t", 1)
            rows.append((kind, question))
    return rows


def baseline(question: str) -> str:
    words = f" {question.casefold().rstrip('?.')} "
    for kind, cues in BASELINE:
        if any(f" {cue} " in words for cue in cues):
            return kind
    return ALLOWED


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", default=str(REPO / "benchmarks/out/obliqa/index"))
    args = parser.parse_args()
    index = Index.open(args.index)
    rows = load()
    correct: dict[str, Counter] = defaultdict(Counter)
    errors = []
    for kind, question in rows:
        got = check_question(index, question).question_type
        plain = baseline(question)
        correct[kind]["n"] += 1
        correct[kind]["lexkb"] += got == kind
        correct[kind]["baseline"] += plain == kind
        correct[kind]["lexkb_refusal_right"] += (got == ALLOWED) == (kind == ALLOWED)
        if got != kind:
            errors.append((kind, got, question))
    print(f"{len(rows)} questions\n")
    print("| type | n | lexkb type accuracy | allowed/refused right | keyword baseline |")
    print("|---|---|---|---|---|")
    total = Counter()
    for kind in (ALLOWED, *TYPES):
        c = correct[kind]
        total.update(c)
        print(
            f"| {kind} | {c['n']} | {c['lexkb'] / c['n']:.3f} | "
            f"{c['lexkb_refusal_right'] / c['n']:.3f} | {c['baseline'] / c['n']:.3f} |"
        )
    print(
        f"| all | {total['n']} | {total['lexkb'] / total['n']:.3f} | "
        f"{total['lexkb_refusal_right'] / total['n']:.3f} | {total['baseline'] / total['n']:.3f} |"
    )
    print("\nerrors (expected -> got):")
    for kind, got, question in errors:
        print(f"  {kind} -> {got}: {question}")


if __name__ == "__main__":
    main()
