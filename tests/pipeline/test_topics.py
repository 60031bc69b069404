"""Topic clusters from a real build: every paragraph with a vector in one cluster, labels from
the cluster's own words, the `cluster_id` filter, and the same clusters from the same vectors."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from lexkb.limits import QueryError
from transforms.indexing.topics import plus_plus_seeds, topic_table


def test_clusters_cover_the_paragraphs_and_name_them_by_their_words(index):
    clusters = index.clusters()
    assert len(clusters) >= 2
    sizes = [c["paragraphs"] for c in clusters]
    assert sizes == sorted(sizes, reverse=True)
    paragraphs = [d["paragraph_count"] for d in index.documents()]
    assert sum(sizes) == sum(paragraphs)
    for cluster in clusters:
        members = index.search(
            cluster["label"].replace(",", ""), k=100, mode="keyword",
            filters={"cluster_id": cluster["cluster_id"]},
        ).hits  # fmt: skip
        text = " ".join(h.text.casefold() for h in members)
        assert members and all(word in text for word in cluster["label"].split(", "))
        assert sum(cluster["documents"].values()) <= cluster["paragraphs"]


def test_cluster_filter_refuses_unknown_ids(index):
    with pytest.raises(QueryError, match="unknown cluster_id"):
        index.search("records", filters={"cluster_id": 9999})
    with pytest.raises(ValueError, match="cluster number"):
        index.search("records", filters={"cluster_id": "one"})


def test_same_vectors_same_clusters(index):
    snapshot = index.snapshot
    chunks = pl.read_parquet(snapshot.table_path("chunks"))
    vectors = pl.read_parquet(snapshot.table_path("embeddings"))
    first, second = topic_table(chunks, vectors), topic_table(chunks, vectors)
    assert first.equals(second)
    assert first.equals(pl.read_parquet(snapshot.table_path("topics")))


def test_plus_plus_seeds_are_data_points_spread_over_distant_groups():
    rng = np.random.default_rng(7)
    centres = np.array([[0.0, 0.0], [100.0, 0.0], [0.0, 100.0]])
    points = np.concatenate([c + rng.normal(size=(50, 2)) for c in centres])
    seeds = plus_plus_seeds(points, 3, np.random.default_rng(1))
    assert all(any(np.array_equal(s, p) for p in points) for s in seeds)
    # One seed per group: each group's nearest seed is within its own spread.
    assert sorted(int(np.argmin(((centres - s) ** 2).sum(axis=1))) for s in seeds) == [0, 1, 2]
    again = plus_plus_seeds(points, 3, np.random.default_rng(1))
    assert np.array_equal(seeds, again)
    # Fewer distinct points than seeds: no failure, seeds repeat.
    assert plus_plus_seeds(np.zeros((4, 2)), 3, np.random.default_rng(1)).shape == (3, 2)
