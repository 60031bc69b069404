"""Chunk embeddings, cached by (model, content hash) so unchanged text is never embedded twice.

The cache is one Parquet file per model under ROOT/work/embeddings. A chunk whose text is
unchanged keeps its vector across builds; only new or changed text goes to the embedder.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import polars as pl

from lexkb.embedders import Embedder


def cache_file(directory: Path, model: str) -> Path:
    return directory / f"{re.sub(r'[^A-Za-z0-9._-]+', '_', model)}.parquet"


def embed_chunks(
    chunks: pl.DataFrame, embedder: Embedder, cache_dir: Path
) -> tuple[pl.DataFrame, dict[str, int]]:
    """The embeddings table (chunk_id, model, vector) for `chunks`, and counts of vectors
    computed now and reused from the cache."""
    cache_path = cache_file(cache_dir, embedder.name)
    cached: dict[str, list[float]] = {}
    if cache_path.is_file():
        cached = dict(pl.read_parquet(cache_path).rows())
    unique = chunks.unique("content_hash", keep="first", maintain_order=True)
    missing = unique.filter(~pl.col("content_hash").is_in(list(cached)))
    if missing.height:
        vectors = embedder.embed_documents(missing["content"].to_list())
        for content_hash, vector in zip(missing["content_hash"], vectors, strict=True):
            cached[content_hash] = np.asarray(vector, dtype=np.float32).tolist()
        cache_dir.mkdir(parents=True, exist_ok=True)
        staging = cache_path.with_suffix(".tmp")
        pl.DataFrame(
            {"content_hash": list(cached), "vector": list(cached.values())},
            schema={"content_hash": pl.String, "vector": pl.List(pl.Float32)},
        ).write_parquet(staging)
        staging.replace(cache_path)
    table = pl.DataFrame(
        {
            "chunk_id": chunks["chunk_id"],
            "model": [embedder.name] * chunks.height,
            "vector": [cached[h] for h in chunks["content_hash"]],
        },
        schema={"chunk_id": pl.String, "model": pl.String, "vector": pl.List(pl.Float32)},
    )
    dimension = len(table["vector"][0]) if table.height else 0
    return table, {
        "embedded": missing.height,
        "reused": unique.height - missing.height,
        "dimension": dimension,
    }
