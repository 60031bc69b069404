"""CUAD examples for the relevance model (issue 37): clause-description questions against a
contract's paragraphs, and each paragraph's lawyer-marked categories for the clause head.

The paragraphs are those of the TXT contracts index `benchmarks/contracts.py` builds (the ones
`benchmarks/classify.py` and `benchmarks/extraction.py` measure), so what the model learns and
what the benchmarks read are cut the same way. Contracts are split by sha256 of their key as
those benchmarks split them: only the tune half (even) is written. One tune contract in eight
(sha256 % 16 == 0) is `valid`, to choose the epoch and the clause head's thresholds; the
held-out half is never read here.

- `rel`/`train`: per contract and category (the question is CUAD's description of the category,
  as extraction asks it), up to four paragraphs overlapping a marked clause (answers), four that
  BM25 ranks first among the rest and one at random of at least 25 words (not answers); where
  the contract has no such clause, the two paragraphs BM25 ranks first (not answers: the
  contract does not say it).
- `rel`/`cuad_valid`: the valid contracts' categories that have a clause, the contract's BM25
  top 30 labelled by overlap (group = contract|category), to measure ranking.
- `clause`/`train`, `clause`/`valid`: each paragraph of at least 5 words with the indexes (into
  `names`) of the categories whose marked clauses it overlaps, often none.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

from evaluation_data.cuad import (
    categories,
    clauses,
    contract_key,
    descriptions,
    marked_by_contract,
    overlaps,
    squeeze,
)

SEED = 7
POSITIVES = 4
NEAR = 4
ABSENT = 2
RANKED = 30
MIN_WORDS = 25


def digest(key: str) -> int:
    return int(hashlib.sha256(key.encode()).hexdigest(), 16)


def split_of(key: str) -> str | None:
    """`train`, `valid` or None (the held-out half, never read)."""
    value = digest(key)
    if value % 2:
        return None
    return "valid" if value % 16 == 0 else "train"


def contracts(root: Path, data: Path) -> list[dict]:
    """The tune half's contracts: key, split, paragraph texts, and per category the paragraphs
    overlapping one of its marked clauses."""
    from lexkb import Index

    names = categories(data)
    marked = marked_by_contract(data)
    index = Index.open(root)
    found = []
    for document in index.documents():
        key = contract_key(document["document_key"])
        split = split_of(key)
        if split is None:
            continue
        _, frame = index.document_paragraphs(document["document_key"])
        texts = [t for t in frame["content"].to_list() if len(t.split()) >= 5]
        squeezed = [squeeze(t) for t in texts]
        holds = {}
        for name in names:
            spans = [squeeze(s) for s in marked.get(key, {}).get(name, [])]
            spans = [s for s in spans if len(s) >= 10]
            holds[name] = sorted(
                {j for s in spans for j, p in enumerate(squeezed) if overlaps(s, p)}
            )
        found.append({"key": key, "split": split, "texts": texts, "holds": holds})
    return found


def cuad_examples(data: Path, root: Path, example, bm25) -> list[dict]:
    """Relevance pairs and clause rows (see the module's docstring). `example(task, split,
    first, second, label, group, **extra)` makes a row; `bm25(texts)` an index with
    `.top(queries, k)`."""
    rng = random.Random(SEED)
    names = categories(data)
    asked = descriptions(data)
    out = [example("clause", "names", "", "", 0, "", names=names)]
    for contract in contracts(root, data):
        texts, split, key = contract["texts"], contract["split"], contract["key"]
        if not texts:
            continue
        for j, text in enumerate(texts):
            labels = [n for n, name in enumerate(names) if j in contract["holds"][name]]
            out.append(example("clause", split, text, "", labels, key))
        questions = [name for name in names if name in asked]
        ranked = bm25(texts).top([asked[name] for name in questions], RANKED)
        long_ones = [j for j, t in enumerate(texts) if len(t.split()) >= MIN_WORDS]
        for name, order in zip(questions, ranked, strict=True):
            answers = set(contract["holds"][name])
            group = f"{key}|{name}"
            order = [int(j) for j in order]
            if split == "valid":
                if answers:
                    for rank, j in enumerate(order):
                        out.append(
                            example(
                                "rel",
                                "cuad_valid",
                                asked[name],
                                texts[j],
                                int(j in answers),
                                group,
                                rank=rank,
                                gold=len(answers),
                            )
                        )
                continue
            if not answers:
                for j in order[:ABSENT]:
                    out.append(example("rel", "train", asked[name], texts[j], 0, group))
                continue
            chosen = sorted(answers)
            for j in rng.sample(chosen, min(POSITIVES, len(chosen))):
                out.append(example("rel", "train", asked[name], texts[j], 1, group))
            near = [j for j in order if j not in answers][:NEAR]
            spare = [j for j in long_ones if j not in answers and j not in near]
            near += rng.sample(spare, min(1, len(spare)))
            for j in near:
                out.append(example("rel", "train", asked[name], texts[j], 0, group))
    return out


def tune_clause_spans(data: Path, n: int) -> list[str]:
    """Marked clauses of 40-300 characters from the tune half's contracts: questions no
    regulator's rulebook answers."""
    spans = [
        c.text
        for c in clauses(data, min_chars=40)
        if len(c.text) <= 300 and split_of(c.contract) is not None
    ]
    return random.Random(SEED).sample(spans, min(n, len(spans)))
