"""Questions on documents an index does not hold, as examples for the answerability model
(issue 58: know what the index holds).

    .venv/bin/python -m training.foreign [--index benchmarks/out/obliqa/index]
        [--out training/out/foreign-examples.npz]

The people's examples (training/ranker.py) are all asked of an index that holds every document
they are about, so their unanswerable questions are ones a held document is silent on; the
model fitted on them alone let through nine in ten questions on subjects the index lacks
(benchmarks/abstention.py's employment and safety questions asked of ADGM's rulebooks). Here
the people's first-turn answerable and list questions whose documents are not ADGM's (the GDPR,
the AI Act, the DMA, the CSRD, the Police Act, the contracts and NDAs) are asked of the index of
ADGM's rulebooks alone, as `ask` searches, and kept as unanswerable questions in the people's
own words, with the same rows as training/ranker.py writes and their own split (by the
document they are about, so a document's questions fall on one side whichever index they are
asked of); benchmarks/named_laws.py reports the test split's. Those are about five acts and
two kinds of contract; the questions written here to fit on, on other subjects ADGM's rulebooks
lack (benchmarks/questions/out_of_scope_tune.txt: employment, safety, tax; neighbouring_tune.txt:
privacy laws other than the GDPR, contracts other than NDAs), are added in the train split, so
that the model does not learn those five acts alone. The written questions not fitted on
(neighbouring.txt, gdpr.txt) stay a check (benchmarks/abstention.py).

Stop 73 adds people's questions on subjects no index here holds (benchmarks/questions/elsewhere/:
work, home and family, tax, travel and consumer life, health, environment and sector rules, in
many countries), split by topic; `--elsewhere-only` asks only those, of an index of other
documents (the people's index of 144 documents), so that "not held" is learnt beside more
than one index.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from evaluation_data.people import adgm, people_sets
from evaluation_data.questions import elsewhere_rows, written_questions
from lexkb import Index
from lexkb.answers.ranking.candidate_features import candidate_features
from lexkb.answers.ranking.ranker import chances_of, first_search
from training.ranker import question_record, save_examples

REPO = Path(__file__).resolve().parent.parent
KINDS = ("answerable", "list")
WRITTEN = ("out_of_scope_tune.txt", "neighbouring_tune.txt")


def foreign_rows(rulebooks: set[str]) -> list[dict]:
    """The people's first-turn answerable and list questions about no ADGM document."""
    found = []
    for row in people_sets(REPO / "benchmarks/questions/people"):
        documents = {a["document"] for a in row.get("answers", [])}
        if row["kind"] in KINDS and documents and not documents & rulebooks:
            found.append(row)
    return found


def written_rows() -> list[dict]:
    """The questions written here to fit on (WRITTEN), as rows of the train split."""
    return [
        {"id": f"{name}:{number}", "question": question, "kind": "answerable", "set": name,
         "split": "train"}
        for name in WRITTEN
        for number, question in enumerate(written_questions(name))
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, default=REPO / "benchmarks/out/obliqa/index")
    parser.add_argument("--out", type=Path, default=REPO / "training/out/foreign-examples.npz")
    parser.add_argument(
        "--elsewhere-only",
        action="store_true",
        help="only the questions on subjects no index holds (for an index of other documents)",
    )
    args = parser.parse_args()
    rows = elsewhere_rows()
    if not args.elsewhere_only:
        rows = foreign_rows(set(adgm())) + written_rows() + rows
    index = Index.open(args.index)
    features, qids, questions = [], [], []
    started = time.perf_counter()
    for number, row in enumerate(rows):
        hits, asked = first_search(index, row["question"])
        chances = chances_of(row["question"], hits)
        features.append(candidate_features(index, row["question"], hits, chances, asked))
        qids += [number] * len(hits)
        record = question_record(index, number, row, hits, [False] * len(hits))
        record["split"] = row.get("split", record["split"])
        questions.append({**record, "kind": "unanswerable", "question": row["question"]})
        if number % 200 == 0:
            print(f"{number}/{len(rows)} {time.perf_counter() - started:.0f}s", flush=True)
    save_examples(args.out, features, [False] * len(qids), qids, questions)
    print(f"{len(rows)} questions, {len(qids)} rows -> {args.out}")


if __name__ == "__main__":
    main()
