"""Chunk and line embeddings, cached by (model, text hash) so unchanged text is never embedded
twice.

The cache is one Parquet file per model under ROOT/work/embeddings, keyed by the SHA-256 of the
text embedded (a chunk's `content_hash`, or a line's own hash). Only new or changed text goes to
the embedder.

Paragraphs with several lines of substance (a list's items, a definition's limbs) also get one
vector per line: a question usually asks about one item, and a single mean-pooled vector of the
whole list dilutes it. On ObliQA the best line or whole-paragraph similarity raised hybrid MAP@10
on the held-out questions from 0.662 to 0.674 (BENCHMARKS.md). With the local model a line's
vector is pooled from its tokens in the paragraph's own pass rather than embedded again: the
same retrieval for none of the model time (benchmarks/line_vectors.py).

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
    return [text[a:b] for a, b in line_spans(text)]


def line_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each line `paragraph_lines` gives, in the paragraph's characters."""
    spans, position = [], 0
    for raw in text.splitlines(keepends=True):
        line = raw.strip()
        if len(line) >= MIN_LINE_CHARS:
            start = position + raw.index(line)
            spans.append((start, start + len(line)))
        position += len(raw)
    return spans if len(spans) > 1 else []


def late_key(content_hash: str, number: int) -> str:
    """Cache key of a line's vector pooled inside its paragraph: it depends on the whole
    paragraph, so it is keyed by the paragraph's hash and the line's number, never by the line's
    own text (which keys the vector of the line embedded alone)."""
    return sha256_text(f"late line {number} of {content_hash}")


def embed_chunks(
    chunks: pl.DataFrame,
    embedder: Embedder,
    cache_dir: Path,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, int]]:
    """The embeddings table (chunk_id, model, vector) for `chunks`, the line embeddings table
    (chunk_id, line, vector) for their multi-line paragraphs, and counts of texts embedded now
    and reused from the cache. `progress(done, total)` hears after each slice of texts.

    An embedder that can pool spans (`embed_with_spans`, the local model) gives a paragraph's
    lines their vectors in the paragraph's own pass; a line its window cuts, and every line
    under other embedders, is embedded alone."""
    cache_path = cache_file(cache_dir, embedder.name)
    cached: dict[str, list[float]] = {}
    if cache_path.is_file():
        cached = dict(pl.read_parquet(cache_path).rows())
    before = len(cached)
    pooling = getattr(embedder, "embed_with_spans", None)
    embedded = chunks.filter(pl.col("chunk_level") != "section")
    wanted = dict(zip(embedded["content_hash"], embedded["content"], strict=True))
    # (chunk_id, line number, the line's own hash, its pooled key or None)
    lines: list[tuple[str, int, str, str | None]] = []
    line_texts: dict[str, str] = {}
    pooled_paragraphs: dict[str, tuple[str, list[tuple[int, int]]]] = {}
    paragraphs = chunks.filter(pl.col("chunk_level") == "paragraph")
    for chunk_id, content, digest in paragraphs.select(
        "chunk_id", "content", "content_hash"
    ).iter_rows():
        spans = line_spans(content)
        stale = digest not in cached
        for number, (a, b) in enumerate(spans, start=1):
            own = sha256_text(content[a:b])
            key = late_key(digest, number) if pooling else None
            line_texts[own] = content[a:b]
            lines.append((chunk_id, number, own, key))
            stale = stale or (key not in cached and own not in cached)
        if pooling and spans and stale:
            pooled_paragraphs[digest] = (content, spans)
    done = 0
    total = len(pooled_paragraphs) + sum(
        1 for d in wanted if d not in cached and d not in pooled_paragraphs
    )
    if pooled_paragraphs:
        digests = list(pooled_paragraphs)
        for start in range(0, len(digests), PROGRESS_SLICE):
            part = digests[start : start + PROGRESS_SLICE]
            texts = [pooled_paragraphs[d][0] for d in part]
            vectors, pooled = pooling(texts, [pooled_paragraphs[d][1] for d in part])
            for digest, vector, line_vectors in zip(part, vectors, pooled, strict=True):
                cached[digest] = np.asarray(vector, dtype=np.float32).tolist()
                for number, line_vector in enumerate(line_vectors, start=1):
                    if line_vector is not None:
                        cached[late_key(digest, number)] = line_vector.tolist()
            done += len(part)
            if progress is not None:
                progress(done, total)
    # Lines without a pooled vector are embedded alone.
    for _, _, own, key in lines:
        if key not in cached:
            wanted.setdefault(own, line_texts[own])
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
            progress(done + start + len(part), max(total, done + len(missing)))
    if len(cached) != before:
        cache_dir.mkdir(parents=True, exist_ok=True)
        staging = cache_path.with_suffix(".tmp")
        pl.DataFrame(
            {"content_hash": list(cached), "vector": list(cached.values())},
            schema={"content_hash": pl.String, "vector": pl.List(pl.Float32)},
        ).write_parquet(staging)
        staging.replace(cache_path)
    own_vectors = {
        c: cached[h] for c, h in zip(embedded["chunk_id"], embedded["content_hash"], strict=True)
    }
    pooled = section_means(chunks, own_vectors)
    table = pl.DataFrame(
        {
            "chunk_id": chunks["chunk_id"],
            "model": [embedder.name] * chunks.height,
            "vector": [own_vectors.get(c) or pooled[c] for c in chunks["chunk_id"]],
        },
        schema=CHUNK_VECTORS,
    )
    line_table = pl.DataFrame(
        {
            "chunk_id": [chunk_id for chunk_id, _, _, _ in lines],
            "line": [number for _, number, _, _ in lines],
            "vector": [cached[key] if key in cached else cached[own] for _, _, own, key in lines],
        },
        schema=LINE_VECTORS,
    )
    dimension = len(table["vector"][0]) if table.height else 0
    return (
        table,
        line_table,
        {
            "embedded": len(missing) + len(pooled_paragraphs),
            "reused": len(wanted) - len(missing),
            "dimension": dimension,
            "lines": line_table.height,
            "lines_pooled": sum(1 for *_, key in lines if key in cached),
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
