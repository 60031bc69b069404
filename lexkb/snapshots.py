"""Managing the snapshots of an index root: list, switch CURRENT, diff, prune.

Services read snapshots while builds publish new ones, so nothing here may pull a snapshot from
under a reader: CURRENT is replaced atomically, and pruning never deletes the snapshot CURRENT
names or one a reader opened recently. Readers say so by touching `ROOT/leases/<version>` when
they open it (`Index.open` does); a root they cannot write to simply has no leases.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from lexkb import snapshot as snap

LEASES = "leases"
# A snapshot opened within this many minutes is never pruned.
LEASE_MINUTES = 15.0
KEEP = 5


@dataclass(frozen=True)
class SnapshotInfo:
    version: str
    path: Path
    created_at: str
    documents: int
    chunks: int
    bytes: int
    current: bool


def fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def versions(root: Path) -> list[str]:
    """Published versions, oldest first (versions sort by their UTC timestamp)."""
    directory = Path(root) / snap.SNAPSHOTS
    if not directory.is_dir():
        return []
    return sorted(
        p.name
        for p in directory.iterdir()
        if p.is_dir() and not p.name.startswith(".") and (p / snap.MANIFEST).is_file()
    )


def current_version(root: Path) -> str | None:
    pointer = Path(root) / snap.CURRENT
    return pointer.read_text(encoding="utf-8").strip() if pointer.is_file() else None


def list_snapshots(root: Path) -> list[SnapshotInfo]:
    current = current_version(root)
    found = []
    for version in versions(root):
        path = Path(root) / snap.SNAPSHOTS / version
        manifest = snap.load(path).manifest
        found.append(
            SnapshotInfo(
                version=version,
                path=path,
                created_at=manifest["created_at"],
                documents=manifest["tables"]["documents"]["rows"],
                chunks=manifest["tables"]["chunks"]["rows"],
                bytes=sum(entry["bytes"] for entry in manifest["files"].values()),
                current=version == current,
            )
        )
    return found


def switch_current(root: Path, version: str) -> None:
    """Point CURRENT at `version`: write a temporary file, fsync it, rename it over CURRENT."""
    root = Path(root)
    pointer = root / f"{snap.CURRENT}.tmp-{uuid.uuid4().hex[:8]}"
    pointer.write_text(version + "\n", encoding="utf-8")
    fsync(pointer)
    os.replace(pointer, root / snap.CURRENT)
    fsync(root)


def rollback(root: Path, version: str) -> snap.Snapshot:
    """Make an older snapshot current again, after verifying every file's SHA-256."""
    path = Path(root) / snap.SNAPSHOTS / version
    if version not in versions(root):
        known = ", ".join(versions(root)) or "none"
        raise snap.SnapshotError(f"no snapshot {version!r} under {root}; snapshots: {known}")
    loaded = snap.load(path, verify=True)
    switch_current(root, version)
    return loaded


def touch_lease(snapshot_path: Path) -> None:
    """Record that a reader opened this snapshot now (best effort: read-only roots skip it)."""
    root = snapshot_path.parent.parent
    if snapshot_path.parent.name != snap.SNAPSHOTS:
        return
    lease = root / LEASES / snapshot_path.name
    try:
        lease.parent.mkdir(exist_ok=True)
        lease.touch()
    except OSError:
        pass


def prune(root: Path, keep: int = KEEP, lease_minutes: float = LEASE_MINUTES) -> list[str]:
    """Delete all but the newest `keep` snapshots, sparing CURRENT's and any opened within
    `lease_minutes`; also clear what crashed publishes left behind. Returns deleted versions."""
    root = Path(root)
    directory = root / snap.SNAPSHOTS
    current = current_version(root)
    now = time.time()
    deleted = []
    published = versions(root)
    for version in published[: max(len(published) - keep, 0)]:
        lease = root / LEASES / version
        if version == current or (
            lease.is_file() and now - lease.stat().st_mtime < lease_minutes * 60
        ):
            continue
        # Rename first so a half-deleted snapshot is never listed as one.
        doomed = directory / f".deleting-{version}-{uuid.uuid4().hex[:8]}"
        os.rename(directory / version, doomed)
        shutil.rmtree(doomed, ignore_errors=True)
        lease.unlink(missing_ok=True)
        deleted.append(version)
    clear_leftovers(root)
    return deleted


def clear_leftovers(root: Path) -> None:
    """Staging directories and pointer files of publishes that were killed, and deletions that
    did not finish. Only one build publishes into a root at a time."""
    directory = Path(root) / snap.SNAPSHOTS
    if directory.is_dir():
        for path in directory.iterdir():
            if path.name.startswith((".tmp-", ".deleting-")):
                shutil.rmtree(path, ignore_errors=True)
    for pointer in Path(root).glob(f"{snap.CURRENT}.tmp-*"):
        pointer.unlink(missing_ok=True)


@dataclass(frozen=True)
class Diff:
    old: str
    new: str
    documents_added: list[str]
    documents_removed: list[str]
    documents_changed: list[str]
    chunks_added: list[str]
    chunks_removed: list[str]
    chunks_changed: list[str]

    def summary(self) -> dict[str, int]:
        return {
            name: len(getattr(self, name))
            for name in (
                "documents_added",
                "documents_removed",
                "documents_changed",
                "chunks_added",
                "chunks_removed",
                "chunks_changed",
            )
        }


def diff(root: Path, old: str, new: str) -> Diff:
    """Documents and chunks added, removed and changed between two snapshots. A chunk is named
    "document_key ref" (or its id when it has no ref); it changed when its text hash did, and a
    document changed when any of its chunks or its source file did."""

    def tables(version: str) -> tuple[pl.DataFrame, pl.DataFrame]:
        loaded = snap.load(Path(root) / snap.SNAPSHOTS / version)
        documents = pl.read_parquet(
            loaded.table_path("documents"), columns=["document_key", "source_sha256"]
        )
        chunks = pl.read_parquet(
            loaded.table_path("chunks"),
            columns=["chunk_id", "document_key", "chunk_level", "ref", "content_hash"],
        ).with_columns(
            pl.coalesce(
                pl.col("document_key") + " " + pl.col("chunk_level") + " " + pl.col("ref"),
                pl.col("chunk_id"),
            ).alias("name")
        )
        return documents, chunks

    old_docs, old_chunks = tables(old)
    new_docs, new_chunks = tables(new)
    a = dict(zip(old_chunks["chunk_id"], old_chunks["content_hash"], strict=True))
    b = dict(zip(new_chunks["chunk_id"], new_chunks["content_hash"], strict=True))
    names = dict(zip(old_chunks["chunk_id"], old_chunks["name"], strict=True)) | dict(
        zip(new_chunks["chunk_id"], new_chunks["name"], strict=True)
    )
    changed_ids = {cid for cid in a.keys() & b.keys() if a[cid] != b[cid]}
    touched = {
        key
        for key, cid in zip(
            pl.concat([old_chunks, new_chunks])["document_key"],
            pl.concat([old_chunks, new_chunks])["chunk_id"],
            strict=True,
        )
        if cid in changed_ids or (cid in a) != (cid in b)
    }
    old_src = dict(zip(old_docs["document_key"], old_docs["source_sha256"], strict=True))
    new_src = dict(zip(new_docs["document_key"], new_docs["source_sha256"], strict=True))
    both = old_src.keys() & new_src.keys()
    return Diff(
        old=old,
        new=new,
        documents_added=sorted(new_src.keys() - old_src.keys()),
        documents_removed=sorted(old_src.keys() - new_src.keys()),
        documents_changed=sorted(k for k in both if old_src[k] != new_src[k] or k in touched),
        chunks_added=sorted(names[c] for c in b.keys() - a.keys()),
        chunks_removed=sorted(names[c] for c in a.keys() - b.keys()),
        chunks_changed=sorted(names[c] for c in changed_ids),
    )
