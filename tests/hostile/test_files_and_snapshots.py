"""Pruning never deletes what CURRENT names, and `export --out` never writes through a file it
was not meant to.

Prune: on a local root when CURRENT cannot be read or moves while prune runs, and on an s3://
root (a real S3-compatible server, moto's, on 127.0.0.1) when a rollback from another machine
lands at each point of a prune: object stores offer no lock, so each step checks the other's.
The races are placed exactly by running the other machine's step (a real rollback through its
own ObjectRoot) from inside the store call that prune or rollback makes at that point.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from lexkb.cli.main import main
from lexkb.core.store import index_root
from lexkb.core.store import snapshot as snap
from lexkb.core.store.object_store import ObjectRoot
from tests.support.local_s3 import local_s3
from transforms.publishing.publish import publish


def _publish(built_root: Path, root: Path, count: int) -> list[str]:
    """`count` real snapshots of the sample's tables under `root`, oldest first."""
    tables_dir = built_root / "work" / "tables"
    settings = json.loads((tables_dir / "settings.json").read_text(encoding="utf-8"))
    sources = settings.pop("sources")
    tables = {p.stem: pl.read_parquet(p) for p in tables_dir.glob("*.parquet")}
    return [
        publish(root, tables, {**settings, "run": n}, sources, keep=10).version
        for n in range(count)
    ]


@pytest.fixture(scope="module")
def two_versions(built_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A local root with two snapshots; tests copy it."""
    root = tmp_path_factory.mktemp("two") / "root"
    _publish(built_root, root, 2)
    return root


@pytest.fixture()
def root(two_versions: Path, tmp_path: Path) -> Path:
    import shutil

    target = tmp_path / "root"
    shutil.copytree(two_versions, target, symlinks=True)
    return target


# Local roots ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pointer",
    [b"{old}/\n", b"../snapshots/{old}\n", b"20990101T000000000000Z-0123456789ab\n", b"\xff{old}"],
)
def test_prune_refuses_when_current_does_not_name_a_published_snapshot(root, pointer, capsys):
    old, new = index_root.versions(root)
    (root / "CURRENT").write_bytes(pointer.replace(b"{old}", old.encode()))
    assert main(["snapshots", "prune", "--keep", "1", "--index", str(root)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("lexkb: error:") and "CURRENT" in error and error.count("\n") == 1
    assert index_root.versions(root) == [old, new]  # nothing deleted: a person can repair it
    with pytest.raises(snap.SnapshotError):
        index_root.prune(root, keep=1)
    (root / "CURRENT").write_text(old + "\n")
    assert index_root.prune(root, keep=1).kept == {old: "CURRENT", new: "among the newest 1"}


def test_prune_reads_current_again_before_it_deletes(root, monkeypatch):
    """A person (or an older lexkb, without the root's lock) points CURRENT at the old snapshot
    after prune read it: prune must see that before deleting."""
    old, new = index_root.versions(root)
    decide = index_root.keep_reason

    def moved(version, *args):
        if version == old:
            index_root.switch_current(root, old)
        return decide(version, *args)

    monkeypatch.setattr(index_root, "keep_reason", moved)
    pruned = index_root.prune(root, keep=1, lease_minutes=0)
    assert pruned.deleted == [] and pruned.kept[old] == "CURRENT"
    assert snap.load(root, verify=True).version == old


# Object-store roots -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory):
    with local_s3("prune-races", tmp_path_factory.mktemp("cache")):
        yield


@pytest.fixture()
def remote(s3, two_versions: Path, request: pytest.FixtureRequest) -> tuple[str, str, str]:
    """(url, old, new): both snapshots pushed to a prefix of this test's own; CURRENT is new."""
    url = f"s3://prune-races/{request.node.name.replace('[', '-').rstrip(']')}"
    pushed = ObjectRoot(url)
    old, new = index_root.versions(two_versions)
    for version in (old, new):
        pushed.push(two_versions / "snapshots" / version)
    assert pushed.current_version() == new
    return url, old, new


class _Store:
    """The prune's filesystem, with the other machine's step run just before one call."""

    def __init__(self, real, name: str, matches, step) -> None:
        self._real, self._name, self._matches, self._step = real, name, matches, step

    def __getattr__(self, name: str):
        call = getattr(self._real, name)
        if name != self._name:
            return call

        def before(*args, **kwargs):
            if self._step and self._matches(*args):
                step, self._step = self._step, None
                step()
            return call(*args, **kwargs)

        return before


def _readable(url: str, version: str) -> None:
    """A cold reader can fetch and verify what CURRENT names."""
    assert ObjectRoot(url).current_version() == version
    assert snap.load(ObjectRoot(url).fetch(), verify=True).version == version


def test_a_rollback_after_prune_read_current_keeps_its_snapshot(remote, monkeypatch):
    """The issue's reproduction: rollback between prune reading CURRENT and listing versions."""
    url, old, new = remote
    pruning = ObjectRoot(url)
    listing = pruning.versions

    def rolled_back_first() -> list[str]:
        assert ObjectRoot(url).rollback(old) == old  # another machine
        return listing()

    monkeypatch.setattr(pruning, "versions", rolled_back_first)
    deleted, kept = pruning.prune(keep=1, lease_minutes=0)
    assert deleted == [] and kept[old] == "CURRENT"
    _readable(url, old)


def test_a_rollback_just_before_the_manifest_goes_is_undone_by_prune(remote):
    """Rollback lands between prune's last read of CURRENT and its deletion of the manifest:
    prune reads CURRENT again after deleting it, and writes it back."""
    url, old, new = remote
    pruning = ObjectRoot(url)
    pruning.fs = _Store(
        pruning.fs,
        "delete_file",
        lambda key: key.endswith(f"{old}/{snap.MANIFEST}"),
        lambda: ObjectRoot(url).switch_current(old),
    )
    deleted, kept = pruning.prune(keep=1, lease_minutes=0)
    assert deleted == [] and kept[old] == "CURRENT"
    assert ObjectRoot(url).versions() == [old, new]
    _readable(url, old)


def test_a_rollback_whose_snapshot_is_pruned_meanwhile_puts_current_back(remote):
    """Prune runs whole between rollback's check of the manifest and its write of CURRENT:
    rollback reads the manifest again after writing, finds it gone, and restores CURRENT."""
    url, old, new = remote
    rolling = ObjectRoot(url)
    pruned: list = []
    rolling.fs = _Store(
        rolling.fs,
        "open_output_stream",
        lambda key, *rest: key.endswith("/CURRENT"),
        lambda: pruned.append(ObjectRoot(url).prune(keep=1, lease_minutes=0)),
    )
    with pytest.raises(snap.SnapshotError, match=f"{old} was pruned"):
        rolling.rollback(old)
    assert pruned == [([old], {new: "CURRENT"})]
    _readable(url, new)


def test_remote_prune_refuses_a_current_that_names_no_version(remote):
    url, old, new = remote
    store = ObjectRoot(url)
    store._write(store._key("CURRENT"), f"{old}/\n".encode())
    with pytest.raises(snap.SnapshotError, match="not a snapshot version"):
        store.prune(keep=1, lease_minutes=0)
    assert store.versions() == [old, new]


# export --out ----------------------------------------------------------------------------------

DOCUMENT = "records-retention-act"


def _export(root: Path, out: Path, *flags: str) -> int:
    return main(["export", DOCUMENT, "--index", str(root), "--out", str(out), *flags])


def _leftovers(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_export_refuses_to_overwrite_current_or_any_existing_file(root, tmp_path, capsys):
    version = (root / "CURRENT").read_text()
    assert _export(root, root / "CURRENT") == 2
    assert "exists; pass --force" in capsys.readouterr().err
    assert (root / "CURRENT").read_text() == version
    assert snap.load(root, verify=True).version == version.strip()
    kept = tmp_path / "notes.md"
    kept.write_text("my notes\n")
    assert _export(root, kept) == 2
    assert kept.read_text() == "my notes\n"
    assert _export(root, kept, "--force") == 0  # asked for: replaced whole
    assert kept.read_text().startswith("# ") and DOCUMENT.split("-")[0] in kept.read_text().lower()
    assert _leftovers(root) == _leftovers(tmp_path) == []


@pytest.mark.parametrize("target_exists", [True, False])
def test_export_never_writes_through_a_symbolic_link(root, tmp_path, target_exists, capsys):
    target = tmp_path / "elsewhere.txt"
    if target_exists:
        target.write_text("not yours\n")
    link = tmp_path / "export.md"
    link.symlink_to(target)
    for flags in ((), ("--force",)):
        assert _export(root, link, *flags) == 2
        assert "symbolic link" in capsys.readouterr().err
        assert link.is_symlink()
        if target_exists:
            assert target.read_text() == "not yours\n"
        else:
            assert not target.exists()  # a dangling link is not a way to create its target
    assert _leftovers(tmp_path) == []


def test_export_writes_a_new_file_and_refuses_a_folder(root, tmp_path, capsys):
    out = tmp_path / "new.md"
    assert _export(root, out) == 0
    assert out.read_text().startswith("# ")
    assert _export(root, tmp_path, "--force") == 2
    assert "not a regular file" in capsys.readouterr().err
    assert _leftovers(tmp_path) == []
