"""Relevance pairs from the people's questions (issue 58): the next relevance model reads
questions asked in people's words, against lexkb's own near misses.

The relevance model was trained on ObliQA, XRefRAG and CUAD, whose questions repeat their
passages' phrases; on the people's questions written here it orders the first twenty worse
than the search does (first right 0.27 against 0.40). These rows teach it what a person's
question looks like: for each first turn of the train split (and the tune split, kept apart as
`people_tune` to measure), the units that answer it (read from the index, found by the search
or not) as answers, and the search's other hits among its first twenty as hard negatives; for
an unanswerable question, its first five hits, none of which answers.

    .venv/bin/python -m training.examples --tasks rel --people benchmarks/out/people/index
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from evaluation_data.people import holds, people_sets, split_of
from lexkb import Index

REPO = Path(__file__).resolve().parent.parent
SPLITS = {"train": "train", "tune": "people_tune"}
NEGATIVES = 8  # hard negatives a question, of its first twenty hits
UNANSWERED = 5  # an unanswerable question's first hits, each a negative
DEPTH = 20


def people_relevance_examples(root: Path, example: Callable[..., dict]) -> list[dict]:
    """Rows of the `rel` task (training/examples.py's `example`) from the people's sets."""
    index = Index.open(root)
    rows = []
    for row in people_sets(REPO / "benchmarks" / "questions" / "people"):
        split = SPLITS.get(split_of(row))
        if split is None or row["kind"] in ("followup", "switch"):
            continue
        question, group = row["question"], f"people|{row['id']}"
        hits = index.search(question, k=DEPTH, min_relevance=0.0).hits
        if row["kind"] == "unanswerable":
            rows += [example("rel", split, question, h.text, 0, group) for h in hits[:UNANSWERED]]
            continue
        units = [(a["document"], a["ref"]) for a in row["answers"]]
        answers = _unit_texts(index, units)
        keys = {index.document_paragraphs(d)[0]["document_key"]: d for d, _ in units}
        right = [
            any(keys.get(h.document_key) == d and holds(h.ref or "", r) for d, r in units)
            for h in hits
        ]
        answers += [h.text for h, ok in zip(hits, right, strict=True) if ok]
        for text in dict.fromkeys(answers):
            rows.append(example("rel", split, question, text, 1, group))
        wrong = [h.text for h, ok in zip(hits, right, strict=True) if not ok][:NEGATIVES]
        rows += [example("rel", split, question, text, 0, group) for text in wrong]
    return rows


def _unit_texts(index: Index, units: list[tuple[str, str]]) -> list[str]:
    """The paragraphs of each answer's unit: the unit itself, else the units inside it."""
    texts = []
    for document, ref in units:
        _, chunks = index.document_paragraphs(document)
        for found, content in chunks.select("ref", "content").iter_rows():
            if found and holds(found, ref) and len(found) >= len(ref.rstrip(".")):
                texts.append(content)
    return texts[:4]
