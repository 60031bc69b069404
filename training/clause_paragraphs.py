"""Every CUAD contract paragraph with the categories lawyers marked on it, for the clause model
fine-tuned by training/clause_train.py (issue 61).

    .venv/bin/python -m training.clause_paragraphs [--out training/out/clause-paragraphs.jsonl.gz]

The paragraphs and their labels are those benchmarks/classify.py scores: each contract's
non-empty paragraphs in the TXT contracts index benchmarks/contracts.py builds, in the index's
order, labelled by overlap with marked clauses (evaluation_data.cuad.held_paragraphs), so the
chances the training script writes line up with the benchmark's paragraphs row for row
(benchmarks/clause_finetuned.py checks the counts). Each row: the contract's key, its half
(`tune` where evaluation_data.cuad.tune_half holds, else `report`), the paragraph texts and, per
paragraph, the indexes into `names` of the categories whose marked clauses it overlaps. The
first row holds `names` alone. Runs in the project's venv (it reads the index); training needs
only this file.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

from evaluation_data.cuad import (
    categories,
    contract_key,
    held_paragraphs,
    marked_by_contract,
    tune_half,
)
from lexkb import Index

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared/data")
    parser.add_argument("--root", type=Path, default=REPO / "benchmarks/out/contracts/index-txt")
    parser.add_argument(
        "--out", type=Path, default=REPO / "training/out/clause-paragraphs.jsonl.gz"
    )
    args = parser.parse_args()
    names = categories(args.data)
    marked = marked_by_contract(args.data)
    index = Index.open(args.root)
    documents = sorted(index.documents(), key=lambda d: contract_key(d["document_key"]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    contracts = paragraphs = 0
    with gzip.open(args.out, "wt", encoding="utf-8") as handle:
        handle.write(json.dumps({"names": names}) + "\n")
        for document in documents:
            key = contract_key(document["document_key"])
            _, frame = index.document_paragraphs(document["document_key"])
            texts = [t for t in frame["content"].to_list() if t.strip()]
            if not texts:
                continue
            labels: list[list[int]] = [[] for _ in texts]
            for column, name in enumerate(names):
                spans = marked.get(key, {}).get(name, [])
                for j in sorted({j for held in held_paragraphs(texts, spans) for j in held}):
                    labels[j].append(column)
            row = {
                "key": key,
                "half": "tune" if tune_half(key) else "report",
                "texts": texts,
                "labels": labels,
            }
            handle.write(json.dumps(row) + "\n")
            contracts += 1
            paragraphs += len(texts)
    print(f"{contracts} contracts, {paragraphs} paragraphs -> {args.out}")


if __name__ == "__main__":
    main()
