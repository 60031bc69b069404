"""Topic clusters of a partitioned build, fitted on a bounded sample of paragraphs.

The one-process build clusters every paragraph's vector at once (transforms.indexing.topics). Over parts,
that would hold every vector in the merge. Here the projection, the k-means centres and the
clusters' names are fitted on at most SAMPLE paragraphs taken evenly across the parts, and
then each part's paragraphs are assigned to their nearest centre, one part at a time. A build
with no more paragraphs than SAMPLE clusters them all at once, exactly as transforms.indexing.topics
does, so small builds get the same topics either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from lexkb.core.store.schema import TOPICS, empty_frame
from lexkb.core.store.vector_files import matrix
from transforms.indexing import topics

# Paragraphs the clusters are fitted on: 20,000 at 384 dimensions is 61 MB as float64.
SAMPLE = 20_000
EMBEDDINGS_FILE = "embeddings.parquet"
CHUNKS_FILE = "chunks.parquet"


def _paragraphs(directory: Path, every: int = 1) -> pl.DataFrame:
    """(chunk_id, content, vector) of a part's paragraphs that have a vector, every `every`-th."""
    paragraphs = (
        pl.scan_parquet(directory / CHUNKS_FILE)
        .filter(pl.col("chunk_level") == "paragraph")
        .select("chunk_id", "content")
    )
    vectors = pl.scan_parquet(directory / EMBEDDINGS_FILE).select("chunk_id", "vector")
    joined = paragraphs.join(vectors, on="chunk_id", how="inner", maintain_order="left")
    return joined.gather_every(every).collect() if every > 1 else joined.collect()


def topic_table(parts: Sequence[Path]) -> pl.DataFrame:
    """(chunk_id, cluster_id, label) for every paragraph with a vector, over the parts' folders
    in row order (each holding chunks and embeddings)."""
    counts = [
        pl.scan_parquet(d / EMBEDDINGS_FILE)
        .join(
            pl.scan_parquet(d / CHUNKS_FILE).filter(pl.col("chunk_level") == "paragraph"),
            on="chunk_id",
        )
        .select(pl.len())
        .collect()
        .item()
        for d in parts
    ]
    total = sum(counts)
    if total <= SAMPLE:
        together = [_paragraphs(d) for d in parts]
        frame = pl.concat(together) if together else pl.DataFrame()
        if frame.is_empty():
            return empty_frame(TOPICS)
        return topics.topic_table(
            frame.select("chunk_id", "content").with_columns(chunk_level=pl.lit("paragraph")),
            frame.select("chunk_id", "vector"),
        )
    every = -(-total // SAMPLE)
    sample = pl.concat([_paragraphs(d, every) for d in parts])
    dimension = len(sample["vector"][0])
    vectors = matrix(sample["vector"], dimension).astype(np.float64)
    mean, axes = topics.principal_axes(vectors)
    points = (vectors - mean) @ axes
    k = topics.cluster_count(total)
    from scipy.cluster.vq import kmeans2, vq  # on use, as transforms.indexing.topics

    seeds = topics.plus_plus_seeds(points, k, np.random.default_rng(topics.SEED))
    centres, assignment = kmeans2(points, seeds, minit="matrix")
    named = topics.labels(sample["content"].to_list(), assignment)
    frames = []
    for directory in parts:
        paragraphs = _paragraphs(directory)
        if paragraphs.is_empty():
            continue
        own = (matrix(paragraphs["vector"], dimension).astype(np.float64) - mean) @ axes
        nearest, _ = vq(own, centres)
        frames.append(
            pl.DataFrame(
                {
                    "chunk_id": paragraphs["chunk_id"],
                    "cluster_id": nearest.astype(np.int32),
                    "label": [named.get(c, "") for c in nearest.tolist()],
                },
                schema=empty_frame(TOPICS).schema,
            )
        )
    return pl.concat(frames) if frames else empty_frame(TOPICS)
