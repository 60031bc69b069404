"""Locating and verifying published snapshots (the read side of the snapshot contract).

Layout: ROOT/snapshots/<version>/{manifest.json, *.parquet, index.duckdb} and ROOT/CURRENT, a
one-line file naming the version services should load. A snapshot directory never changes once
published, so a reader that verified it once can keep using it while newer ones appear.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from lexkb.schema import SNAPSHOT_FORMAT

MANIFEST = "manifest.json"
CURRENT = "CURRENT"
SNAPSHOTS = "snapshots"


class SnapshotError(Exception):
    """The snapshot is missing, of an unknown format, or does not match its manifest."""


@dataclass(frozen=True)
class Snapshot:
    path: Path
    manifest: dict

    @property
    def version(self) -> str:
        return self.manifest["snapshot_version"]

    def table_path(self, name: str) -> Path:
        return self.path / self.manifest["tables"][name]["file"]


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def resolve(location: str | Path) -> Path:
    """A snapshot directory, or an index root whose CURRENT names one."""
    path = Path(location)
    if (path / MANIFEST).is_file():
        return path
    pointer = path / CURRENT
    if not pointer.is_file():
        raise SnapshotError(f"{path} is neither a snapshot nor an index root with a {CURRENT} file")
    version = pointer.read_text(encoding="utf-8").strip()
    snapshot = path / SNAPSHOTS / version
    if not (snapshot / MANIFEST).is_file():
        raise SnapshotError(f"{pointer} names {version!r}, which has no manifest")
    return snapshot


def load(location: str | Path, verify: bool = False) -> Snapshot:
    """Read the manifest and check every file: sizes always, SHA-256 too when `verify`."""
    path = resolve(location)
    manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    if manifest.get("format_version") != SNAPSHOT_FORMAT:
        raise SnapshotError(
            f"snapshot format {manifest.get('format_version')!r} is not {SNAPSHOT_FORMAT}; "
            "rebuild it with this version of lexkb"
        )
    for name, entry in manifest["files"].items():
        file = path / name
        if not file.is_file():
            raise SnapshotError(f"{file} is missing")
        if file.stat().st_size != entry["bytes"]:
            raise SnapshotError(
                f"{file} has {file.stat().st_size} bytes, manifest says {entry['bytes']}"
            )
        if verify and file_sha256(file) != entry["sha256"]:
            raise SnapshotError(f"{file} does not match its SHA-256 in the manifest")
    return Snapshot(path, manifest)
