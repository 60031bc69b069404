"""Managing the snapshots of an index root: list, switch CURRENT, diff, prune.

Services read snapshots while builds publish new ones, so nothing here may pull a snapshot from
under a reader: CURRENT is replaced atomically, and pruning never deletes the snapshot CURRENT
names or one a reader opened recently. Readers say so by touching `ROOT/leases/<version>` when
they open it (`Index.open` does); a root they cannot write to simply has no leases.
"""

from __future__ import annotations

import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from lexkb.core.store import root_lock
from lexkb.core.store import snapshot as snap

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
    """Published versions, oldest first (versions sort by their UTC timestamp). Only real
    folders with a version's name and a manifest count."""
    directory = Path(root) / snap.SNAPSHOTS
    if not directory.is_dir():
        return []
    return sorted(
        p.name
        for p in directory.iterdir()
        if snap.VERSION.match(p.name)
        and not p.is_symlink()
        and p.is_dir()
        and (p / snap.MANIFEST).is_file()
    )


def current_version(root: Path) -> str | None:
    """The version CURRENT names, or None when there is no CURRENT (or it names no version)."""
    pointer = Path(root) / snap.CURRENT
    if not pointer.is_file():
        return None
    version = pointer.read_text(encoding="utf-8").strip()
    return version if snap.VERSION.match(version) else None


def named_version(text: str | None, where: str) -> str | None:
    """The version a CURRENT pointer's text names, for a step that deletes: None only when
    there is no pointer at all (`text` None), SnapshotError when the text names no version.
    Readers treat such a pointer as no CURRENT; pruning must not, or it deletes the snapshot a
    pointer like "V/" was meant to name (local and object-store roots share it)."""
    if text is None:
        return None
    version = text.strip()
    if not snap.VERSION.match(version):
        raise snap.SnapshotError(
            f"{where} holds {text[:80]!r}, not a snapshot version: fix it (lexkb snapshots "
            "rollback VERSION) before pruning, so that nothing it meant is deleted"
        )
    return version


def read_current(root: Path) -> str | None:
    """What ROOT/CURRENT names, strictly (see named_version): None when there is no CURRENT;
    SnapshotError when it exists but cannot be read or names no version."""
    pointer = Path(root) / snap.CURRENT
    if not os.path.lexists(pointer):
        return None
    try:
        text = pointer.read_text(encoding="utf-8")
    except (OSError, ValueError) as exc:
        raise snap.SnapshotError(f"{pointer} cannot be read: {exc}") from exc
    return named_version(text, str(pointer))


def published_current(current: str | None, published: list[str], where: str) -> str | None:
    """`current` when it is one of the `published` versions (or there is no CURRENT), else
    SnapshotError: a CURRENT naming a missing snapshot is a broken root, and pruning it would
    delete what a person needs to repair it."""
    if current is not None and current not in published:
        raise snap.SnapshotError(
            f"{where} names {current}, which is not a published snapshot there; pruning nothing"
        )
    return current


def resolve_version(root: Path, name: str) -> str:
    """A version from what a person types: "CURRENT", "previous" (the one before CURRENT), a
    full version, or a prefix of exactly one version."""
    return pick_version(name, versions(root), current_version(root), str(root))


def pick_version(name: str, known: list[str], current: str | None, where: str) -> str:
    """resolve_version over a listing (local or object-store roots share the rules)."""
    if not isinstance(name, str) or not name.strip():
        raise snap.SnapshotError("a version is needed (CURRENT, previous, or a version prefix)")
    name = name.strip()
    if name.upper() == "CURRENT":
        if current is None:
            raise snap.SnapshotError(f"{where} has no CURRENT snapshot")
        return current
    if name.casefold() == "previous":
        older = [v for v in known if current is None or v < current]
        if not older:
            raise snap.SnapshotError(f"{where} has no snapshot before CURRENT")
        return older[-1]
    if name in known:
        return name
    matches = (
        [v for v in known if v.startswith(name)] if re.fullmatch(r"[0-9TZa-f-]+", name) else []
    )
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise snap.SnapshotError(f"{name!r} matches {len(matches)} snapshots: {', '.join(matches)}")
    listed = ", ".join(known[-5:]) or "none"
    raise snap.SnapshotError(f"no snapshot {name!r} under {where}; newest: {listed}")


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
    snap.check_version(version)
    root = Path(root)
    pointer = root / f"{snap.CURRENT}.tmp-{uuid.uuid4().hex[:8]}"
    pointer.write_text(version + "\n", encoding="utf-8")
    fsync(pointer)
    os.replace(pointer, root / snap.CURRENT)
    fsync(root)


def rollback(root: Path, version: str) -> snap.Snapshot:
    """Make an older snapshot current again, after verifying every file's SHA-256. `version`
    may be "previous" or a prefix (see resolve_version); the folder must be a real snapshot."""
    with root_lock.hold(root, wait_seconds=60, purpose="rollback"):
        version = resolve_version(root, version)
        path = snap.snapshot_dir(root, version)
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


@dataclass(frozen=True)
class Pruned:
    """What prune did: the versions deleted, and each kept one with its reason."""

    deleted: list[str]
    kept: dict[str, str]


def prune(root: Path, keep: int = KEEP, lease_minutes: float = LEASE_MINUTES) -> Pruned:
    """Delete all but the newest `keep` snapshots (at least one), sparing CURRENT's and any a
    reader opened or used within `lease_minutes`; also clear what crashed publishes left
    behind and symbolic links that are no snapshots. Holds the root's writer lock.

    Refuses (SnapshotError, deleting nothing) when CURRENT cannot be read or names no published
    snapshot, and reads CURRENT again right before each deletion: rollback takes the same lock,
    but a person or an older lexkb may move CURRENT without it."""
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
        raise ValueError(f"keep must be a whole number of at least 1, not {keep!r}")
    root = Path(root)
    with root_lock.hold(root, wait_seconds=60, purpose="prune"):
        directory = root / snap.SNAPSHOTS
        current = read_current(root)
        now = time.time()
        deleted, kept = [], {}
        published = versions(root)
        published_current(current, published, str(root / snap.CURRENT))
        newest = set(published[-keep:])
        for version in published:
            lease = root / LEASES / version
            leased_until = lease.stat().st_mtime + lease_minutes * 60 if lease.is_file() else 0
            reason = keep_reason(version, current, newest, keep, leased_until, now)
            if not reason and read_current(root) == version:
                reason = "CURRENT"  # moved to it since prune began
            if reason:
                kept[version] = reason
            else:
                # Rename first so a half-deleted snapshot is never listed as one.
                doomed = directory / f".deleting-{version}-{uuid.uuid4().hex[:8]}"
                os.rename(directory / version, doomed)
                shutil.rmtree(doomed, ignore_errors=True)
                lease.unlink(missing_ok=True)
                deleted.append(version)
        clear_leftovers(root)
    return Pruned(deleted, kept)


def keep_reason(
    version: str, current: str | None, newest: set[str], keep: int, leased_until: float, now: float
) -> str | None:
    """Why pruning keeps `version` (CURRENT's, among the newest `keep`, or leased by a reader
    until `leased_until`), or None when it may go. Local and object-store roots share it."""
    if version == current:
        return "CURRENT"
    if version in newest:
        return f"among the newest {keep}"
    if leased_until > now:
        until = datetime.fromtimestamp(leased_until, UTC).isoformat(timespec="seconds")
        return f"in use by a reader (leased until {until})"
    return None


def clear_leftovers(root: Path) -> None:
    """Staging directories and pointer files of publishes that were killed, deletions that did
    not finish, and symbolic links in the snapshots folder (removed, never followed). Call it
    holding the root's writer lock: another publish's staging folder looks the same."""
    directory = Path(root) / snap.SNAPSHOTS
    if directory.is_dir():
        for path in directory.iterdir():
            if path.is_symlink():
                path.unlink()
            elif path.name.startswith((".tmp-", ".deleting-")):
                shutil.rmtree(path, ignore_errors=True)
    for pointer in Path(root).glob(f"{snap.CURRENT}.tmp-*"):
        pointer.unlink(missing_ok=True)


@dataclass(frozen=True)
class Verified:
    version: str
    files: int
    tables: dict[str, int]


def verify(root: Path, version: str = "CURRENT") -> Verified:
    """Check a snapshot whole: every file's size and SHA-256 against the manifest, and every
    table's row count read back. Raises SnapshotError naming the first thing that differs."""
    version = resolve_version(root, version)
    loaded = snap.load(snap.snapshot_dir(root, version), verify=True)
    rows = {}
    for name, entry in loaded.manifest["tables"].items():
        found = loaded.table_rows(name)
        if found != entry["rows"]:
            raise snap.SnapshotError(
                f"table {name} of {version} has {found} rows, the manifest says {entry['rows']}"
            )
        rows[name] = found
    return Verified(version, len(loaded.manifest["files"]), rows)
