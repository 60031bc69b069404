"""A sharded snapshot (lexkb.core.store.shards) answers exactly as the classic snapshot of the same
build: the session's sample build split into three parts (transforms.parts.shard_files.split), published
sharded (transforms.publishing.publish.publish_sharded) into a fresh root, and both opened."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from lexkb import Index, dense_scan
from lexkb.core.store import index_root, shards
from lexkb.core.store import snapshot as snap
from lexkb.core.store.diff import diff
from tests.support.same_answers import QUESTIONS, assert_same_rankings, unversioned
from transforms.parts.shard_files import split
from transforms.publishing import publish, staging
from transforms.publishing.publish import publish_sharded

PARTS = 3


@pytest.fixture(scope="module")
def parts(built_root: Path, tmp_path_factory: pytest.TempPathFactory):
    """The sample build's staged tables split into PARTS runs of whole documents: (part
    directories, global tables, settings, sources)."""
    tables, settings, sources = staging.for_publishing(built_root / "work" / staging.TABLE_DIR)
    documents = tables["chunks"]["document_id"].unique(maintain_order=True).to_list()
    assert len(documents) >= PARTS
    runs = [list(run) for run in np.array_split(np.array(documents, dtype=object), PARTS)]
    runs[-1] += [d for d in tables["documents"]["document_id"] if d not in documents]
    directory = tmp_path_factory.mktemp("parts")
    part_dirs, global_tables, sharded_settings = split(tables, settings, runs, directory)
    return part_dirs, global_tables, sharded_settings, sources


@pytest.fixture(scope="module")
def sharded_root(parts, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sharded")
    assert publish_sharded(root, *parts).created
    return root


@pytest.fixture(scope="module")
def sharded(sharded_root: Path) -> Index:
    return Index.open(sharded_root)


def test_the_snapshot_is_sharded(index: Index, sharded: Index) -> None:
    assert sharded.snapshot.sharded and not index.snapshot.sharded
    listed = sharded.snapshot.shards
    assert [s["name"] for s in listed] == ["s0000", "s0001", "s0002"]
    assert sum(s["rows"] for s in listed) == len(index) == len(sharded)
    assert sharded.snapshot.table_paths("chunks")[1].name == "s0001.chunks.parquet"
    with pytest.raises(snap.SnapshotError, match="shard files"):
        sharded.snapshot.table_path("chunks")
    assert sharded.snapshot.read_table("chunks").equals(index.snapshot.read_table("chunks"))
    assert index.snapshot.table_paths("chunks") == [index.snapshot.table_path("chunks")]


def test_searches_rank_and_score_the_same(index: Index, sharded: Index) -> None:
    assert index.embedder_name and sharded.embedder_name == index.embedder_name
    assert_same_rankings(index, sharded)
    for question in QUESTIONS:
        document = index.tables.documents["document_id"][1]
        for filters in ({"document": document}, {"chunk_level": "section"}):
            a = index.search(question, k=10, filters=filters)
            b = sharded.search(question, k=10, filters=filters)
            assert unversioned(a.to_dict()) == unversioned(b.to_dict()), (question, filters)


def test_bm25_postings_and_vectors_are_the_same_arrays(index: Index, sharded: Index) -> None:
    a, b = index._keyword, sharded._keyword
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.rows, b.rows)
    assert a.weights.tobytes() == b.weights.tobytes()
    for mine, theirs in zip(a.paragraph_postings, b.paragraph_postings, strict=True):
        assert np.array_equal(mine, theirs)
    rows = np.arange(0, len(index), 3)
    for question in QUESTIONS:
        scores = index.dense_scores(question)
        assert scores.tobytes() == sharded.dense_scores(question).tobytes()
        assert sharded.cosines(question, rows).tobytes() == scores[rows].tobytes()


def test_the_int8_scan_is_the_same(
    built_root: Path, sharded_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan the snapshot would use past its crossover, made from the shards' mapped files."""
    monkeypatch.setattr(dense_scan, "MIN_VECTORS", 0)
    a, b = Index.open(built_root).dense, Index.open(sharded_root).dense
    rows = np.arange(0, a.n_rows, 2)
    for question in QUESTIONS:
        vector = a.query_vector(question)
        one, other = a.int8_scan().scan(vector), b.int8_scan().scan(vector)
        assert one.keys.tobytes() == other.keys.tobytes()
        assert one.exact(rows).tobytes() == other.exact(rows).tobytes()
        keep = np.ones(a.n_rows, dtype=bool)
        mine = a.search_cosine(a.nominate(question, keep), None)
        theirs = b.search_cosine(b.nominate(question, keep), None)
        assert mine[0].tobytes() == theirs[0].tobytes()
        assert mine[1].tobytes() == theirs[1].tobytes()


def test_lookups_are_the_same(index: Index, sharded: Index) -> None:
    for ref in ("section 7", "Rule 4.2"):
        assert unversioned(index.get(ref).to_dict()) == unversioned(sharded.get(ref).to_dict())
    start = index.tables.edges["source_chunk_id"][0]
    assert index.hop(start, max_hops=2)
    assert unversioned([h.to_dict() for h in index.hop(start, max_hops=2)]) == unversioned(
        [h.to_dict() for h in sharded.hop(start, max_hops=2)]
    )
    assert sharded.documents() == index.documents()


def test_publishing_the_same_parts_again_writes_nothing(sharded_root: Path, parts) -> None:
    again = publish_sharded(sharded_root, *parts)
    assert not again.created
    assert again.version == snap.load(sharded_root).version


def test_global_tables_read_from_their_files_publish_the_same_files(
    sharded_root: Path, parts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a partitioned build publishes them (pipelines.partitioned): each global table scanned
    from its file and read when it is used, the fingerprint's JSON made a few rows at a time."""
    part_dirs, global_tables, settings, sources = parts
    for name, frame in global_tables.items():
        frame.write_parquet(tmp_path / f"{name}.parquet")
    scans = {name: pl.scan_parquet(tmp_path / f"{name}.parquet") for name in global_tables}
    monkeypatch.setattr(publish, "JSON_ROWS", 7)
    assert not publish_sharded(sharded_root, part_dirs, scans, settings, sources).created
    again = publish_sharded(tmp_path / "root", part_dirs, scans, settings, sources)

    def hashes(path: Path) -> dict[str, str]:
        files = snap.load(path).manifest["files"]
        return {name: f["sha256"] for name, f in files.items() if name != "index.duckdb"}

    assert hashes(again.path) == hashes(snap.resolve(sharded_root))


def test_verify_passes_and_a_tampered_shard_is_refused(sharded_root: Path, tmp_path: Path) -> None:
    verified = index_root.verify(sharded_root)
    assert verified.tables["chunks"] == snap.load(sharded_root).manifest["tables"]["chunks"]["rows"]
    copy = tmp_path / "root"
    shutil.copytree(sharded_root, copy)  # copies: the original's files are links to the parts'
    shard_file = snap.resolve(copy) / shards.shard_file("s0001", "bm25_postings.parquet")
    data = bytearray(shard_file.read_bytes())
    data[len(data) // 2] ^= 0xFF
    shard_file.write_bytes(bytes(data))
    with pytest.raises(snap.SnapshotError, match="s0001.bm25_postings.parquet"):
        index_root.verify(copy)


def test_a_manifest_whose_shard_files_are_out_of_order_is_refused(
    sharded_root: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "root"
    shutil.copytree(sharded_root, copy)
    manifest_path = snap.resolve(copy) / snap.MANIFEST
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["tables"]["chunks"]["files"].reverse()
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(snap.SnapshotError, match="table chunks's files"):
        snap.load(copy)


def test_diff_between_a_classic_and_a_sharded_version(
    built_root: Path, parts, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    shutil.copytree(built_root, root, ignore=shutil.ignore_patterns("work", "leases"))
    classic = snap.load(root).version
    sharded = publish_sharded(root, *parts).version
    assert sharded != classic
    changes = diff(root, classic, sharded)
    assert not (changes.documents_added or changes.documents_removed or changes.chunks_changed)
    assert not (changes.chunks_added or changes.chunks_removed or changes.documents_changed)
    assert not (changes.edges_added or changes.edges_removed or changes.metadata_changed)


def test_a_sharded_snapshot_goes_through_an_object_store(
    index: Index, parts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pushed to an s3:// root (a local moto server), fetched cold, verified and searched."""
    from lexkb.core.store.object_store import ObjectRoot, mirror_path
    from tests.support.local_s3 import local_s3

    url = "s3://lexkb-test/indexes/sharded"
    with local_s3("lexkb-test", tmp_path / "builder-cache"):
        published = publish_sharded(mirror_path(url), *parts, remote=url)
        assert published.created and ObjectRoot(url).current_version() == published.version
        monkeypatch.setenv("LEXKB_CACHE", str(tmp_path / "reader-cache"))
        remote = Index.open(url)
        assert remote.snapshot.sharded and remote.snapshot.path.is_relative_to(tmp_path)
        for question in QUESTIONS[:2]:
            a, b = index.search(question, k=10), remote.search(question, k=10)
            assert [(h.chunk_id, h.score) for h in a.hits] == [
                (h.chunk_id, h.score) for h in b.hits
            ]
