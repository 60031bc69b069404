"""Embeddings through the build and hybrid search, with Voyage AI's API served on 127.0.0.1."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from lexkb import Index
from lexkb.core.embed.embedders import VoyageEmbedder
from lexkb.core.store import snapshot as snap
from lexkb.core.text.heading_path import CONTEXT_VERSION, indexed_text
from pipelines.in_process import run_build
from tests.support.voyage_fake import DIMENSION, KEY, FakeVoyage
from transforms.indexing.chunk_embeddings import paragraph_lines
from transforms.structure.ids import sha256_text

pytestmark = pytest.mark.build


@pytest.fixture()
def voyage(monkeypatch):
    with FakeVoyage() as server:
        monkeypatch.setenv("VOYAGE_API_KEY", KEY)
        monkeypatch.setenv("VOYAGE_BASE_URL", server.base_url)
        yield server


def test_build_embeds_every_chunk_once_and_search_fuses(voyage, corpus_copy, tmp_path, monkeypatch):
    root = tmp_path / "root"
    first = run_build([corpus_copy], root)
    loaded = snap.load(root, verify=True)
    assert loaded.manifest["embedder"] == {
        "name": "voyage:voyage-law-2",
        "dimension": DIMENSION,
        "normalized": True,
        "line_vectors": "alone",
        "part_vectors": "alone",
        "heading_vectors": CONTEXT_VERSION,
    }
    table = pl.read_parquet(loaded.table_path("embeddings"))
    assert table.height == first.chunks
    assert table.schema["vector"] == pl.Array(pl.Float32, DIMENSION)
    # Every distinct text once: chunks, the lines of multi-line paragraphs, and each paragraph
    # under a heading read below its heading path (line 0).
    chunks = pl.read_parquet(loaded.table_path("chunks"))
    paragraphs = chunks.filter(pl.col("chunk_level") == "paragraph")
    lines = [line for text in paragraphs["content"] for line in paragraph_lines(text)]
    headed = [
        indexed_text(text, path, "paragraph")
        for text, path in paragraphs.select("content", "section_path").iter_rows()
    ]
    headed = [h for h, text in zip(headed, paragraphs["content"], strict=True) if h != text]
    lines_table = pl.read_parquet(loaded.table_path("line_embeddings"))
    assert lines and headed and lines_table.height == len(lines) + len(headed)
    assert lines_table.schema["vector"] == pl.Array(pl.Float32, DIMENSION)
    embedded = sum(len(r["input"]) for r in voyage.requests)
    own = chunks.filter(pl.col("chunk_level") != "section")["content_hash"]
    texts = {sha256_text(line) for line in lines} | {sha256_text(h) for h in headed}
    assert embedded == len(set(own) | texts)
    # A section is not embedded: its vector is the normalised mean of its paragraphs'.
    vectors = dict(zip(table["chunk_id"], table["vector"].to_numpy(), strict=True))
    section = chunks.filter(pl.col("chunk_level") == "section")["chunk_id"][0]
    members = chunks.filter(pl.col("parent_chunk_id") == section)["chunk_id"]
    mean = np.mean([vectors[m] for m in members], axis=0)
    assert np.allclose(vectors[section], mean / np.linalg.norm(mean), atol=1e-6)

    index = Index.open(root)
    results = index.search("how long are client money reconciliation records kept", k=5)
    assert results.mode == "hybrid" and not results.warnings and len(results) == 5
    assert voyage.requests[-1]["input_type"] == "query"
    keyword = index.search(
        "how long are client money reconciliation records kept", k=5, mode="keyword"
    )
    vector = index.search(
        "how long are client money reconciliation records kept", k=5, mode="vector"
    )
    assert vector.mode == "vector" and all(-1.0 <= h.score <= 1.0 for h in vector)
    # Every fused hit comes from one of the two rankings.
    assert {h.chunk_id for h in results} <= {
        h.chunk_id for h in index.search(results.query, k=100, mode="keyword")
    } | {h.chunk_id for h in index.search(results.query, k=100, mode="vector")}
    assert [h.chunk_id for h in keyword] != [h.chunk_id for h in vector]

    # A rebuild after one change embeds only the changed text.
    before = len(voyage.requests)
    text = corpus_copy / "records-retention-act.txt"
    text.write_text(text.read_text().replace("seven years", "eight years"), encoding="utf-8")
    run_build([corpus_copy], root)
    again = sum(len(r["input"]) for r in voyage.requests[before:] if r["input_type"] == "document")
    assert again == 2  # § 103(b) and it read below its heading; its section takes the new mean

    # Without a key the snapshot's vectors cannot be queried: keyword results and a warning.
    monkeypatch.delenv("VOYAGE_API_KEY")
    fallback = Index.open(root).search("client money", k=3)
    assert fallback.mode == "keyword" and "VOYAGE_API_KEY" in fallback.warnings[0]


def test_a_query_embedder_of_another_model_is_refused(voyage, corpus_copy, tmp_path):
    root = tmp_path / "root"
    run_build([corpus_copy], root)
    with pytest.raises(snap.SnapshotError, match="embedded with voyage:voyage-law-2"):
        Index.open(root, embedder=VoyageEmbedder(model="voyage-3-lite"))
    same = Index.open(root, embedder=VoyageEmbedder(model="voyage-law-2"))
    assert np.isclose(np.linalg.norm(same.query_embedder.embed_query("client money")), 1.0)


def test_keyword_only_snapshots_warn_only_when_dense_search_is_asked_for(corpus_copy, tmp_path):
    root = tmp_path / "root"
    run_build([corpus_copy], root, embedder="none")
    assert snap.load(root).manifest["embedder"] is None
    index = Index.open(root)
    assert index.search("client money", k=1).warnings == []
    asked = index.search("client money", k=1, mode="hybrid")
    assert asked.mode == "keyword"
    assert asked.warnings == [
        "hybrid search unavailable: this snapshot has no embeddings; keyword results only"
    ]
