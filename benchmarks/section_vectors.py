"""Do section chunks need vectors of their own? Section retrieval on ObliQA dev, both ways.

    .venv/bin/python -m benchmarks.section_vectors [--index ROOT]

A section chunk is its heading and the text of all its paragraphs, so the embedder, which reads
at most 256 tokens, sees only the start of a long section. The alternative costs nothing to
compute: the mean of the section's paragraph vectors, normalised (what builds now store,
`transforms.indexing.chunk_embeddings.section_means`); the sections' own vectors are embedded here. For every
dev question, the sections are ranked by cosine with each kind of vector; a section counts as
found when it holds one of the question's gold passages. Recall@10 and MRR@10, on the tune half (sha256 of the
question id even) and the held-out half, and the share of embedder input the sections take.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np
import polars as pl

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data" / "obliqa"
K = 10


def main() -> None:
    from lexkb.index import Index
    from transforms.indexing.chunk_embeddings import section_means

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index", type=Path, default=REPO / "benchmarks/out/obliqa/index")
    args = parser.parse_args()
    index = Index.open(args.index)
    chunks = index.tables.chunks
    levels = chunks["chunk_level"].to_numpy()
    sections = np.flatnonzero(levels == "section")
    section_ids = chunks["chunk_id"].to_numpy()[sections]
    # Builds no longer embed sections, so their own vectors are computed here, by the same model.
    own = index.query_embedder.embed_documents(chunks["content"].to_numpy()[sections].tolist())
    paragraphs = np.flatnonzero(levels == "paragraph")
    paragraph_vectors = dict(
        zip(
            chunks["chunk_id"].to_numpy()[paragraphs],
            np.asarray(index.dense.vectors)[paragraphs],
            strict=True,
        )
    )
    pooled = section_means(chunks, paragraph_vectors)
    kinds = {
        "own vector": own,
        "mean of its paragraphs": np.array([pooled[s] for s in section_ids], dtype=np.float32),
    }
    # A passage's key as benchmarks/obliqa.py reads it: document key and ref without "[n]".
    refs = chunks["ref"].str.replace(r" \[\d+\]$", "")
    section_of = {}
    for key, ref, parent, level in zip(
        chunks["document_key"], refs, chunks["parent_chunk_id"], levels, strict=True
    ):
        if level == "paragraph" and parent is not None:
            section_of.setdefault((key, ref), set()).add(parent)
    questions = json.loads((DATA / "questions-dev.json").read_text())
    results: dict[str, dict[str, list[tuple[float, float]]]] = {}
    for q in questions:
        gold = set()
        for p in q["Passages"]:
            gold |= section_of.get((str(p["DocumentID"]), str(p["PassageID"])), set())
        if not gold:
            continue
        half = (
            "tune"
            if int(hashlib.sha256(q["QuestionID"].encode()).hexdigest(), 16) % 2 == 0
            else "held-out"
        )
        query = index.query_embedder.embed_query(q["Question"])
        for name, matrix in kinds.items():
            scores = matrix @ query
            top = np.argsort(-scores)[:K]
            found = [rank for rank, i in enumerate(top) if section_ids[i] in gold]
            hit = (1.0 if found else 0.0, 1.0 / (found[0] + 1) if found else 0.0)
            results.setdefault(name, {}).setdefault(half, []).append(hit)
    section_chars = int(
        chunks.filter(pl.col("chunk_level") == "section")["content"].str.len_chars().sum()
    )
    all_chars = int(chunks["content"].str.len_chars().sum())
    print("| section vector | tune R@10 | tune MRR@10 | held-out R@10 | held-out MRR@10 |")
    print("| --- | --- | --- | --- | --- |")
    for name, halves in results.items():
        cells = []
        for half in ("tune", "held-out"):
            values = np.array(halves[half])
            cells += [f"{values[:, 0].mean():.3f}", f"{values[:, 1].mean():.3f}"]
        print(f"| {name} | {' | '.join(cells)} |")
    n = {half: len(v) for half, v in next(iter(results.values())).items()}
    print(f"\nquestions with a gold section: {n}; sections: {sections.size}")
    print(f"sections hold {section_chars / all_chars:.1%} of the chunk text the embedder is given")


if __name__ == "__main__":
    main()
