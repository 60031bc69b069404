"""Examples for the candidate ranker and the answerability model, from people's questions
(issue 58).

    .venv/bin/python -m training.ranker [--index benchmarks/out/people/index] [--limit N]
        [--out training/out/ranker-examples.npz]

The index holds every document the people's question sets (benchmarks/questions/people/) name,
built with the local embedder (training/README.md says how). Each first-turn question
(answerable, list, unanswerable) is searched as `ask` searches a first question
(lexkb.answers.ranking.ranker.first_search: scoped to the documents it names, hybrid, twenty
hits, no relevance floor); the relevance model reads the first ten, as `ask`'s evidence does; each hit
becomes a row of lexkb.answers.ranking.candidate_features, labelled 1 when it is a unit that answers
(the answer's document and unit, or a unit inside or around it). Per question it also keeps
the scope model's probability and what the question names, for the answerability model. Splits
are by document (evaluation_data.people.split_of). Hard negatives are lexkb's own: the other
hits of the same search.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from evaluation_data.people import holds, people_sets, split_of
from lexkb import Index
from lexkb.answers.question import named_laws, scope
from lexkb.answers.ranking.candidate_features import FEATURES, candidate_features
from lexkb.answers.ranking.ranker import chances_of, first_search

REPO = Path(__file__).resolve().parent.parent
KINDS = ("answerable", "list", "unanswerable")


def document_keys(index: Index, rows: list[dict]) -> dict[str, str]:
    """The sets' document names (file stems) -> the index's keys."""
    names = {a["document"] for row in rows for a in row.get("answers", [])}
    return {name: index.document_paragraphs(name)[0]["document_key"] for name in names}


def question_record(index: Index, number: int, row: dict, hits: list, right: list[bool]) -> dict:
    """What the answerability model reads of a question beside its candidates: the scope
    model's probability and signals, what the question names, whether `ask` scopes it to the
    documents it names, its split and document."""
    probability, signals = scope.in_scope(index, row["question"], hits[:10])
    named = named_laws.named(index, row["question"])
    # Asked of the documents it names (by title or a party's name): `ask` never asks the
    # subject model of such a question, and training/answerability.py fits it on the others.
    scoped = bool(named_laws.asked_of(index, row["question"], row["question"])[0])
    return {
        "qid": number, "id": row["id"], "kind": row["kind"], "split": split_of(row),
        "document": min((a["document"] for a in row.get("answers", [])), default=None),
        "set": row["set"], "scope": probability, "scope_values": list(signals.values),
        "only_foreign": named.only_foreign, "foreign": len(named.foreign),
        "known": len(named.known), "found": any(right), "first": bool(right and right[0]),
        "scoped": scoped,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, default=REPO / "benchmarks/out/people/index")
    parser.add_argument("--out", type=Path, default=REPO / "training/out/ranker-examples.npz")
    parser.add_argument("--limit", type=int)
    args = parser.parse_args()
    rows = [r for r in people_sets(REPO / "benchmarks/questions/people") if r["kind"] in KINDS]
    rows = rows[: args.limit] if args.limit else rows
    index = Index.open(args.index)
    keys = document_keys(index, rows)
    features, labels, qids = [], [], []
    questions = []
    started = time.perf_counter()
    for number, row in enumerate(rows):
        question = row["question"]
        hits, asked = first_search(index, question)
        chances = chances_of(question, hits)
        units = [(keys[a["document"]], a["ref"]) for a in row.get("answers", [])]
        right = [any(h.document_key == d and holds(h.ref or "", r) for d, r in units) for h in hits]
        features.append(candidate_features(index, question, hits, chances, asked))
        labels += right
        qids += [number] * len(hits)
        questions.append(question_record(index, number, row, hits, right))
        if number % 200 == 0:
            print(f"{number}/{len(rows)} {time.perf_counter() - started:.0f}s", flush=True)
    save_examples(args.out, features, labels, qids, questions)
    print(f"{len(rows)} questions, {len(labels)} rows, {sum(labels)} right -> {args.out}")


def save_examples(
    out: Path,
    features: list[np.ndarray],
    labels: list[bool],
    qids: list[int],
    questions: list[dict],
) -> None:
    """The candidates' rows, labels, question numbers and splits as `out` (.npz), and each
    question's record beside it (.questions.json), as training/answerability.py reads them."""
    split = {q["qid"]: q["split"] for q in questions}
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(
        out,
        features=np.concatenate(features) if features else np.zeros((0, len(FEATURES))),
        labels=np.array(labels, dtype=np.int64),
        qid=np.array(qids, dtype=np.int64),
        split=np.array([split[q] for q in qids]),
        names=np.array(FEATURES),
    )
    out.with_suffix(".questions.json").write_text(json.dumps(questions), encoding="utf-8")


if __name__ == "__main__":
    main()
