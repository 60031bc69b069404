"""Reads stay inside the index root, versions are names not paths, and prune spares what is used."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from lexkb import Index
from lexkb.cli.main import main
from lexkb.core.store import index_root
from lexkb.core.store import snapshot as snap
from lexkb.core.store.diff import diff


@pytest.fixture()
def root(built_root, tmp_path) -> Path:
    """A copy of the sample index root with its one snapshot."""
    target = tmp_path / "root"
    target.mkdir()
    shutil.copytree(built_root / "snapshots", target / "snapshots")
    shutil.copy(built_root / "CURRENT", target / "CURRENT")
    return target


def _version(root: Path) -> str:
    return (root / "CURRENT").read_text().strip()


def test_current_must_name_a_version_inside_the_root(root, tmp_path):
    version = _version(root)
    (root / "CURRENT").write_text(version + "/\n")
    with pytest.raises(snap.SnapshotError, match="not a snapshot version"):
        Index.open(root)
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(root / "snapshots" / version, elsewhere)
    (root / "CURRENT").write_text("../../elsewhere\n")
    with pytest.raises(snap.SnapshotError, match="not a snapshot version"):
        Index.open(root)


def test_prune_never_deletes_current_and_refuses_a_negative_keep(root):
    version = _version(root)
    (root / "CURRENT").write_text(version + "/")  # opened fine once; prune must not trust it
    with pytest.raises(ValueError, match="at least 1"):
        index_root.prune(root, keep=-1)
    (root / "CURRENT").write_text(version)
    pruned = index_root.prune(root, keep=1)
    assert pruned.deleted == [] and pruned.kept == {version: "CURRENT"}
    assert snap.load(root).version == version


def test_manifest_paths_must_stay_in_the_snapshot(root):
    version = _version(root)
    manifest_path = root / "snapshots" / version / snap.MANIFEST
    manifest = json.loads(manifest_path.read_text())
    manifest["tables"]["chunks"]["file"] = "/etc/hostname"
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(snap.SnapshotError, match="not a file name inside the snapshot"):
        snap.load(root, verify=True)


def test_manifest_version_must_match_its_folder(root):
    version = _version(root)
    manifest_path = root / "snapshots" / version / snap.MANIFEST
    manifest = json.loads(manifest_path.read_text())
    manifest["snapshot_version"] = "20200101T000000000000Z-aaaaaaaaaaaa"
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(snap.SnapshotError, match="but its folder is"):
        snap.load(root)


def test_versions_are_names_never_paths(root, tmp_path, capsys):
    with pytest.raises(snap.SnapshotError):
        diff(root, "../../elsewhere", "CURRENT")
    assert main(["snapshots", "diff", "../../x", "CURRENT", "--index", str(root)]) == 2
    assert "no snapshot" in capsys.readouterr().err
    # A symbolic link that looks like a snapshot is refused, and prune removes it.
    version = _version(root)
    fake = "20991231T000000000000Z-bbbbbbbbbbbb"
    os.symlink(root / "snapshots" / version, root / "snapshots" / fake)
    assert fake not in index_root.versions(root)
    with pytest.raises(snap.SnapshotError):
        index_root.rollback(root, fake)
    index_root.prune(root, keep=1)
    assert not (root / "snapshots" / fake).is_symlink()


def test_versions_by_prefix_previous_and_current(root):
    version = _version(root)
    assert index_root.resolve_version(root, "CURRENT") == version
    assert index_root.resolve_version(root, version[:10]) == version
    with pytest.raises(snap.SnapshotError, match="no snapshot before CURRENT"):
        index_root.resolve_version(root, "previous")


def test_a_long_lived_reader_survives_rollback_and_prune(built_root, tmp_path):
    from tests.pipeline.test_publishing import _publish_versions

    root = tmp_path / "root"
    published = _publish_versions(built_root, root, 2, keep=5)
    reader = Index.open(root / "snapshots" / published[0])
    index_root.rollback(root, published[1])
    lease = root / "leases" / published[0]
    old = time.time() - 3600
    os.utime(lease, (old, old))  # the lease expired: prune deletes the snapshot's folder
    assert published[0] in index_root.prune(root, keep=1).deleted
    # Everything the reader needs was read at open.
    assert reader.documents() and reader.search("client money", k=1).hits
    assert reader.get("LSA 230 8") is not None


def test_verify_checks_hashes_and_rows(root, capsys):
    assert main(["snapshots", "verify", "--index", str(root)]) == 0
    assert "match their SHA-256" in capsys.readouterr().out
    version = _version(root)
    chunks = root / "snapshots" / version / "chunks.parquet"
    data = bytearray(chunks.read_bytes())
    data[100] ^= 0xFF
    chunks.write_bytes(bytes(data))
    assert main(["snapshots", "verify", "CURRENT", "--index", str(root)]) == 2
    assert "SHA-256" in capsys.readouterr().err


def test_a_manifest_without_files_is_a_clear_error(root):
    version = _version(root)
    manifest_path = root / "snapshots" / version / snap.MANIFEST
    manifest = json.loads(manifest_path.read_text())
    del manifest["files"]
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(snap.SnapshotError, match="has no valid 'files'"):
        Index.open(root)


def test_a_deeply_nested_source_keeps_short_work_file_names(tmp_path):
    from transforms.publishing.workdir import WorkDir

    key = "/".join(["a-rather-long-folder-name"] * 40) + "/rules.txt"
    work = WorkDir(tmp_path)
    assert len(work.part_dir(key).name) < 100 and len(work.error_file(key).name) < 110
    assert work.part_dir(key) != work.part_dir(key.replace("rules", "other"))
