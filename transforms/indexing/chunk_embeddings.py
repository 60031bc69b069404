"""Chunk and line embeddings, cached by (model, text hash) so unchanged text is never embedded
twice.

The cache (transforms.indexing.vector_cache) holds each model's vectors under ROOT/work/embeddings, keyed
by the SHA-256 of the text embedded (a chunk's `content_hash`, or a line's own hash). Only new or
changed text goes to the embedder.

Paragraphs with several lines of substance (a list's items, a definition's limbs) also get one
vector per line: a question usually asks about one item, and a single mean-pooled vector of the
whole list dilutes it. On ObliQA the best line or whole-paragraph similarity raised hybrid MAP@10
on the held-out questions from 0.662 to 0.674 (BENCHMARKS.md). With the local model a paragraph
with lines or parts is read once, whole, in windows of the model's 256 tokens, and its lines
and parts take the pooled states of their own tokens instead of being embedded again: the same
retrieval, and the model reads each token once (benchmarks/line_vectors.py).

A paragraph under a heading also gets a vector of itself read below its heading path
(lexkb.core.text.heading_path), kept as line HEADING_LINE: a paragraph rarely says what it is about
and its heading does ("11 Penalties"), so a question in a person's words finds it by either
vector, the best of which scores it. Read into the paragraph's own vector instead, the heading
cost ObliQA hybrid Recall@10 0.803 -> 0.761 (sibling paragraphs under one heading became alike);
as a vector beside it, BENCHMARKS.md "People's questions" has the figures.

A section chunk is not embedded: its vector is the normalised mean of its paragraphs' vectors.
The embedder reads 256 tokens, so a section's own vector saw only its start; the mean finds the
right ObliQA section more often (held-out Recall@10 0.734 against 0.642,
`benchmarks/section_vectors.py`) and saves the embedder 42% of the text it was given.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

from lexkb.core.embed.embedders import Embedder
from lexkb.core.text.heading_path import CONTEXT_VERSION, indexed_text
from transforms.indexing.vector_cache import VectorCache
from transforms.structure.ids import sha256_text

# Shorter lines are numbering or connectives ("(a)", "and"), not statements worth a vector.
MIN_LINE_CHARS = 20
# Texts embedded between two progress reports.
PROGRESS_SLICE = 512
# The line number of a paragraph's vector read below its heading path (lines count from 1).
HEADING_LINE = 0

CHUNK_VECTORS: dict[str, pl.DataType | type[pl.DataType]] = {
    "chunk_id": pl.String,
    "model": pl.String,
    "vector": pl.List(pl.Float32),
}
LINE_VECTORS: dict[str, pl.DataType | type[pl.DataType]] = {
    "chunk_id": pl.String,
    "line": pl.Int32,
    "vector": pl.List(pl.Float32),
}


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


def late_key(content_hash: str, label: str) -> str:
    """Cache key of a span's vector pooled inside its paragraph ("line 2", "part 1"): it
    depends on the whole paragraph, so it is keyed by the paragraph's hash and the span's label,
    never by the span's own text (which keys the vector of that text embedded alone)."""
    return sha256_text(f"late {label} of {content_hash}")


def part_spans(text: str, parts: list[str]) -> list[tuple[int, int] | None]:
    """Where each part (transforms.structure.chunks.split_parts: sentences rejoined with single spaces)
    lies in its paragraph, matching with whitespace runs collapsed; None where it is not found."""
    flat, where, previous_space = [], [], False
    for i, char in enumerate(text):
        space = char.isspace()
        if not (space and previous_space):
            flat.append(" " if space else char)
            where.append(i)
        previous_space = space
    haystack, position = "".join(flat), 0
    spans: list[tuple[int, int] | None] = []
    for part in parts:
        needle = " ".join(part.split())
        at = haystack.find(needle, position) if needle else -1
        if at < 0:
            spans.append(None)
            continue
        position = at + len(needle)
        spans.append((where[at], where[position - 1] + 1))
    return spans


def embed_chunks(
    chunks: pl.DataFrame,
    embedder: Embedder,
    cache_dir: Path,
    progress: Callable[[int, int], None] | None = None,
    seed_dir: Path | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, int]]:
    """The embeddings table (chunk_id, model, vector) for `chunks`, the line embeddings table
    (chunk_id, line, vector) for their multi-line paragraphs, and counts of texts given to the
    model now and reused from the cache. `progress(done, total)` hears after each slice.
    `seed_dir`: a cache read only, whose vectors are taken into `cache_dir` as they are needed
    (transforms.indexing.vector_cache), where a partitioned build's part starts from the root's cache.

    An embedder that can pool spans (`embed_with_spans`, the local model) reads a paragraph
    with lines or parts once, all of it, and gives its lines and parts the pooled states of
    their tokens; anything it cannot place, and every line and part under other embedders, is
    embedded alone."""
    cached = VectorCache(cache_dir, embedder.name, fallback=seed_dir)
    pooling = getattr(embedder, "embed_with_spans", None)
    # Each vector's cache keys, best first: a pooled key, then the hash of its text alone.
    keys_of: dict[str, list[str]] = {}
    text_of: dict[str, str] = {}
    lines: list[tuple[str, int, list[str]]] = []
    to_pool: dict[str, tuple[str, list[tuple[int, int]], list[str]]] = {}
    embedded = chunks.filter(pl.col("chunk_level") != "section")
    for chunk_id, content, digest in embedded.select(
        "chunk_id", "content", "content_hash"
    ).iter_rows():
        keys_of[chunk_id] = [digest]
        text_of[digest] = content
    parts_of: dict[str, list[tuple[str, str]]] = {}
    parts = chunks.filter(pl.col("chunk_level") == "part")
    for chunk_id, content, parent in parts.select(
        "chunk_id", "content", "parent_chunk_id"
    ).iter_rows():
        parts_of.setdefault(parent, []).append((chunk_id, content))
    paragraphs = chunks.filter(pl.col("chunk_level") == "paragraph")
    if "section_path" not in paragraphs.columns:
        paragraphs = paragraphs.with_columns(pl.lit(None, pl.List(pl.String)).alias("section_path"))
    for chunk_id, content, digest, path in paragraphs.select(
        "chunk_id", "content", "content_hash", "section_path"
    ).iter_rows():
        # The paragraph read below its heading path, as a vector of its own (HEADING_LINE).
        headed = indexed_text(content, path, "paragraph")
        if headed != content:
            own = sha256_text(headed)
            text_of[own] = headed
            lines.append((chunk_id, HEADING_LINE, [own]))
        spans, keys = [], []
        for number, (a, b) in enumerate(line_spans(content), start=1):
            own = sha256_text(content[a:b])
            text_of[own] = content[a:b]
            key = late_key(digest, f"line {number}")
            lines.append((chunk_id, number, [key, own] if pooling else [own]))
            spans.append((a, b))
            keys.append(key)
        own_parts = parts_of.get(chunk_id, []) if pooling else []
        located = part_spans(content, [text for _, text in own_parts]) if own_parts else []
        for number, ((part_id, _), span) in enumerate(zip(own_parts, located, strict=True), 1):
            if span is not None:
                key = late_key(digest, f"part {number}")
                keys_of[part_id] = [key, *keys_of[part_id]]
                spans.append(span)
                keys.append(key)
        stale = digest not in cached or any(k not in cached for k in keys)
        if pooling and spans and stale:
            to_pool[digest] = (content, spans, keys)

    done, total = 0, len(to_pool)
    pooled_digests = list(to_pool)
    for start in range(0, len(pooled_digests), PROGRESS_SLICE):
        part = pooled_digests[start : start + PROGRESS_SLICE]
        assert pooling is not None  # paragraphs are put to pool only with it
        vectors, pooled = pooling([to_pool[d][0] for d in part], [to_pool[d][1] for d in part])
        for digest, vector, span_vectors in zip(part, vectors, pooled, strict=True):
            cached.put(digest, vector)
            for key, span_vector in zip(to_pool[digest][2], span_vectors, strict=True):
                if span_vector is not None:
                    cached.put(key, span_vector)
        done += len(part)
        if progress is not None:
            progress(done, total)
    # Whatever has no vector yet is embedded alone, by the last of its keys (its own text).
    chains = [*keys_of.values(), *(keys for *_, keys in lines)]
    missing = list(dict.fromkeys(c[-1] for c in chains if not any(k in cached for k in c)))
    # Longest first, in slices, so a progress report can come between them and each slice
    # still batches texts of like length.
    missing.sort(key=lambda d: len(text_of[d]), reverse=True)
    total += len(missing)
    for start in range(0, len(missing), PROGRESS_SLICE):
        part = missing[start : start + PROGRESS_SLICE]
        vectors = embedder.embed_documents([text_of[d] for d in part])
        for digest, vector in zip(part, vectors, strict=True):
            cached.put(digest, vector)
        if progress is not None:
            progress(done + start + len(part), total)
    cached.save()

    def first(keys: list[str]) -> str:
        return next(k for k in keys if k in cached)

    own_ids = list(keys_of)
    own_vectors = dict(
        zip(own_ids, cached.vectors([first(keys_of[c]) for c in own_ids]), strict=True)
    )
    means = section_means(chunks, own_vectors)
    table = pl.DataFrame(
        {
            "chunk_id": chunks["chunk_id"],
            "model": [embedder.name] * chunks.height,
            "vector": _vector_column(
                [own_vectors[c] if c in own_vectors else means[c] for c in chunks["chunk_id"]]
            ),
        },
        schema=CHUNK_VECTORS,
    )
    line_table = pl.DataFrame(
        {
            "chunk_id": [chunk_id for chunk_id, _, _ in lines],
            "line": [number for _, number, _ in lines],
            "vector": _vector_column(list(cached.vectors([first(keys) for *_, keys in lines]))),
        },
        schema=LINE_VECTORS,
    )
    dimension = len(table["vector"][0]) if table.height else 0
    return (
        table,
        line_table,
        {
            "embedded": len(to_pool) + len(missing),
            "reused": len(set(c[-1] for c in chains)) - len(missing) - len(to_pool),
            "dimension": dimension,
            "lines": line_table.height,
            "lines_pooled": sum(1 for *_, keys in lines if len(keys) > 1 and keys[0] in cached),
            "parts_pooled": sum(
                1 for c in parts["chunk_id"] if len(keys_of[c]) > 1 and keys_of[c][0] in cached
            ),
        },
    )


def _vector_column(rows: list[np.ndarray]) -> pl.Series:
    if not rows:
        return pl.Series("vector", [], dtype=pl.List(pl.Float32))
    return pl.Series("vector", np.vstack(rows)).cast(pl.List(pl.Float32))


def section_means(chunks: pl.DataFrame, vectors: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each section chunk's vector: the normalised mean of its paragraphs' vectors."""
    members: dict[str, list[np.ndarray]] = {}
    paragraphs = chunks.filter(
        (pl.col("chunk_level") == "paragraph") & pl.col("parent_chunk_id").is_not_null()
    )
    for chunk_id, parent in paragraphs.select("chunk_id", "parent_chunk_id").iter_rows():
        members.setdefault(parent, []).append(vectors[chunk_id])
    means = {}
    for section, rows in members.items():
        mean = np.mean(np.asarray(rows, dtype=np.float32), axis=0)
        means[section] = (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)
    return means


def embedder_record(model: Embedder, dimension: int) -> dict:
    """How these vectors were made, recorded with the snapshot so that a change in it (another
    model, lines pooled or embedded alone) changes the content fingerprint."""
    spans = "pooled" if hasattr(model, "embed_with_spans") else "alone"
    return {
        "name": model.name,
        "dimension": dimension,
        "normalized": True,
        "line_vectors": spans,
        "part_vectors": spans,
        "heading_vectors": CONTEXT_VERSION,
    }
