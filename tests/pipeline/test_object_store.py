"""An s3:// index root against a real S3-compatible server (moto's) on 127.0.0.1: the build
publishes through the Dagster job, services open and search it from a cold cache, CURRENT moves
and rolls back, pruning deletes, and a corrupted object is caught rather than served."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lexkb.cli.main import main
from lexkb.core.store import snapshot as snap
from lexkb.core.store.object_store import ObjectRoot, mirror_path
from lexkb.current import CurrentIndex
from lexkb.index import Index
from tests.conftest import CORPUS
from tests.support.local_s3 import local_s3

# Module fixtures that build: the tests taking them are in the build tier (tests/conftest.py).
BUILDING_FIXTURES = {"first"}

URL = "s3://lexkb-test/indexes/sample"
QUESTION = "how long must client money reconciliation records be kept"


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory):
    with local_s3("lexkb-test", tmp_path_factory.mktemp("builder-cache")) as patch:
        yield patch


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("s3-sources")
    for name in ("records-retention-act.txt", "data-handling-regulation.md"):
        shutil.copy(CORPUS / name, folder / name)
    return folder


@pytest.fixture(scope="module")
def first(s3, sources: Path):
    from pipelines.in_process import run_build

    return run_build([sources], URL, embedder="local")


def test_a_build_publishes_to_the_bucket(first) -> None:
    remote = ObjectRoot(URL)
    assert first.published_new
    assert remote.current_version() == first.version
    listed = remote.list_snapshots()
    assert [s.version for s in listed] == [first.version]
    assert listed[0].current and listed[0].chunks == first.chunks
    # The build worked in the URL's local mirror, not in a folder named after the URL.
    assert first.path.is_relative_to(mirror_path(URL))
    assert not Path("s3:").exists()


def test_a_cold_reader_downloads_verifies_and_searches(
    first, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    local = Index.open(first.path).search(QUESTION, k=3)
    monkeypatch.setenv("LEXKB_CACHE", str(tmp_path / "reader-cache"))
    index = Index.open(URL)
    assert index.version == first.version
    assert index.snapshot.path.is_relative_to(tmp_path / "reader-cache")
    assert index.dense.vectors is not None  # the vector arrays came down and were mapped
    found = index.search(QUESTION, k=3)
    assert [h.chunk_id for h in found.hits] == [h.chunk_id for h in local.hits]
    assert ObjectRoot(URL).verify("CURRENT") == len(index.snapshot.manifest["files"])


def test_unchanged_content_uploads_nothing(first, sources: Path) -> None:
    from pipelines.in_process import run_build

    again = run_build([sources], URL, embedder="local")
    assert not again.published_new
    assert ObjectRoot(URL).versions() == [first.version]


def test_current_moves_rolls_back_and_prunes(first, sources: Path, capsys) -> None:
    from pipelines.in_process import run_build

    service = CurrentIndex(URL)
    assert service.get().version == first.version
    with (sources / "records-retention-act.txt").open("a", encoding="utf-8") as handle:
        handle.write("\n\nSection 99. Archived ledgers shall be destroyed after forty years.\n")
    second = run_build([sources], URL, embedder="local")
    remote = ObjectRoot(URL)
    assert second.published_new and remote.current_version() == second.version
    service._polled = 0.0  # skip the poll interval rather than sleep through it
    assert service.get().version == second.version
    assert service.get().search("archived ledgers forty years", k=1).hits

    assert main(["snapshots", "rollback", "previous", "--index", URL, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["current"] == first.version
    assert remote.current_version() == first.version
    assert main(["snapshots", "rollback", second.version[:20], "--index", URL]) == 0
    assert remote.current_version() == second.version
    capsys.readouterr()

    # The first was opened by a reader within the lease window: pruning spares it, says why.
    assert main(["snapshots", "prune", "--keep", "1", "--index", URL, "--json"]) == 0
    pruned = json.loads(capsys.readouterr().out)
    assert pruned["deleted"] == []
    assert pruned["kept"][second.version] == "CURRENT"
    assert "in use by a reader" in pruned["kept"][first.version]
    remote.fs.delete_file(remote._key("leases", first.version))
    assert main(["snapshots", "prune", "--keep", "1", "--index", URL, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["deleted"] == [first.version]
    assert remote.versions() == [second.version]


def test_a_corrupted_object_is_refused(
    first, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    remote = ObjectRoot(URL)
    version = remote.current_version()
    key = remote._key(snap.SNAPSHOTS, version, "chunks.parquet")
    with remote.fs.open_input_stream(key) as handle:
        original = handle.read()
    try:
        remote._write(key, original[:-8] + b"tampered")
        with pytest.raises(snap.SnapshotError, match="does not match"):
            remote.verify(version)
        monkeypatch.setenv("LEXKB_CACHE", str(tmp_path / "fresh"))
        with pytest.raises(snap.SnapshotError, match="SHA-256"):
            Index.open(URL)
        # Nothing half-verified is left in the cache to be opened later.
        assert not list((tmp_path / "fresh").rglob("chunks.parquet"))
    finally:
        remote._write(key, original)


def test_urls_that_escape_their_prefix_are_refused() -> None:
    for url in ("s3://bucket/../other", "s3:///no-bucket", "s3://bucket/a/./b"):
        with pytest.raises(snap.SnapshotError):
            ObjectRoot(url)
