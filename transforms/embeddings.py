"""Chunk and line embeddings, cached by (model, text hash) so unchanged text is never embedded
twice.

The cache is one Parquet file per model under ROOT/work/embeddings, keyed by the SHA-256 of the
text embedded (a chunk's `content_hash`, or a line's own hash). Only new or changed text goes to
the embedder.

Paragraphs with several lines of substance (a list's items, a definition's limbs) also get one
vector per line: a question usually asks about one item, and a single mean-pooled vector of the
whole list dilutes it. On ObliQA the best line or whole-paragraph similarity raised hybrid MAP@10
on the held-out questions from 0.662 to 0.674 (BENCHMARKS.md).

A section chunk is not embedded: its vector is the normalised mean of its paragraphs' vectors.
The embedder reads 256 tokens, so a section's own vector saw only its start; the mean finds the
right ObliQA section more often (held-out Recall@10 0.734 against 0.642,
`benchmarks/section_vectors.py`) and saves the embedder 42% of the text it was given.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

from lexkb.embedders import Embedder
from transforms.ids import sha256_text

# Shorter lines are numbering or connectives ("(a)", "and"), not statements worth a vector.
MIN_LINE_CHARS = 20
# Texts embedded between two progress reports.
PROGRESS_SLICE = 512

CHUNK_VECTORS = {"chunk_id": pl.String, "model": pl.String, "vector": pl.List(pl.Float32)}
LINE_VECTORS = {"chunk_id": pl.String, "line": pl.Int32, "vector": pl.List(pl.Float32)}


def cache_file(directory: Path, model: str) -> Path:
    return directory / f"{re.sub(r'[^A-Za-z0-9._-]+', '_', model)}.parquet"


def paragraph_lines(text: str) -> list[str]:
    """The lines of a paragraph embedded on their own; none when it has only one."""
    lines = [line.strip() for line in text.splitlines() if len(line.strip()) >= MIN_LINE_CHARS]
    return lines if len(lines) > 1 else []


def embed_chunks(
    chunks: pl.DataFrame,
    embedder: Embedder,
    cache_dir: Path,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, int]]:
    """The embeddings table (chunk_id, model, vector) for `chunks`, the line embeddings table
    (chunk_id, line, vector) for their multi-line paragraphs, and counts of texts embedded now
    and reused from the cache. `progress(done, total)` hears after each slice of texts."""
    cache_path = cache_file(cache_dir, embedder.name)
    cached: dict[str, list[float]] = {}
    if cache_path.is_file():
        cached = dict(pl.read_parquet(cache_path).rows())
    embedded = chunks.filter(pl.col("chunk_level") != "section")
    wanted = dict(zip(embedded["content_hash"], embedded["content"], strict=True))
    lines: list[tuple[str, int, str]] = []
    paragraphs = chunks.filter(pl.col("chunk_level") == "paragraph")
    for chunk_id, content in paragraphs.select("chunk_id", "content").iter_rows():
        for number, line in enumerate(paragraph_lines(content), start=1):
            digest = sha256_text(line)
            wanted.setdefault(digest, line)
            lines.append((chunk_id, number, digest))
    missing = [digest for digest in wanted if digest not in cached]
    # Longest first, in slices, so a progress report can come between them and each slice
    # still batches texts of like length.
    missing.sort(key=lambda d: len(wanted[d]), reverse=True)
    for start in range(0, len(missing), PROGRESS_SLICE):
        part = missing[start : start + PROGRESS_SLICE]
        vectors = embedder.embed_documents([wanted[d] for d in part])
        for digest, vector in zip(part, vectors, strict=True):
            cached[digest] = np.asarray(vector, dtype=np.float32).tolist()
        if progress is not None:
            progress(start + len(part), len(missing))
    if missing:
        cache_dir.mkdir(parents=True, exist_ok=True)
        staging = cache_path.with_suffix(".tmp")
        pl.DataFrame(
            {"content_hash": list(cached), "vector": list(cached.values())},
            schema={"content_hash": pl.String, "vector": pl.List(pl.Float32)},
        ).write_parquet(staging)
        staging.replace(cache_path)
    own = {
        c: cached[h] for c, h in zip(embedded["chunk_id"], embedded["content_hash"], strict=True)
    }
    pooled = section_means(chunks, own)
    table = pl.DataFrame(
        {
            "chunk_id": chunks["chunk_id"],
            "model": [embedder.name] * chunks.height,
            "vector": [own.get(c) or pooled[c] for c in chunks["chunk_id"]],
        },
        schema=CHUNK_VECTORS,
    )
    line_table = pl.DataFrame(
        {
            "chunk_id": [chunk_id for chunk_id, _, _ in lines],
            "line": [number for _, number, _ in lines],
            "vector": [cached[digest] for _, _, digest in lines],
        },
        schema=LINE_VECTORS,
    )
    dimension = len(table["vector"][0]) if table.height else 0
    return (
        table,
        line_table,
        {
            "embedded": len(missing),
            "reused": len(wanted) - len(missing),
            "dimension": dimension,
            "lines": line_table.height,
        },
    )


def section_means(chunks: pl.DataFrame, vectors: dict[str, list[float]]) -> dict[str, list[float]]:
    """Each section chunk's vector: the normalised mean of its paragraphs' vectors."""
    members: dict[str, list[list[float]]] = {}
    paragraphs = chunks.filter(
        (pl.col("chunk_level") == "paragraph") & pl.col("parent_chunk_id").is_not_null()
    )
    for chunk_id, parent in paragraphs.select("chunk_id", "parent_chunk_id").iter_rows():
        members.setdefault(parent, []).append(vectors[chunk_id])
    means = {}
    for section, rows in members.items():
        mean = np.mean(np.asarray(rows, dtype=np.float32), axis=0)
        means[section] = (mean / max(float(np.linalg.norm(mean)), 1e-12)).tolist()
    return means
