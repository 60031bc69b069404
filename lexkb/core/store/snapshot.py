"""Locating and verifying published snapshots (the read side of the snapshot contract).

Layout: ROOT/snapshots/<version>/{manifest.json, *.parquet, index.duckdb, source-*.pdf} and
ROOT/CURRENT, a
one-line file naming the version services should load. A snapshot directory never changes once
published, so a reader that verified it once can keep using it while newer ones appear.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from lexkb.core.store.schema import SNAPSHOT_FORMAT

MANIFEST = "manifest.json"
CURRENT = "CURRENT"
SNAPSHOTS = "snapshots"
# Source files a snapshot keeps beside its tables, so that a reader can show a cited page as
# printed from the snapshot alone: PDFs, named by their SHA-256 (the documents table's
# `source_sha256`) and listed among the manifest's files like any other.
SOURCE_FORMATS = ("pdf",)
SHA256 = re.compile(r"^[0-9a-f]{64}$")


def source_name(sha256: str, fmt: str) -> str:
    """The file name of a kept source: "source-<sha256>.pdf"."""
    return f"source-{sha256}.{fmt}"


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

    def source_path(self, sha256: str, fmt: str) -> Path | None:
        """The copy of a source file this snapshot keeps (`source_name`), or None: a format
        whose files are not kept, or a snapshot published before they were."""
        if fmt not in SOURCE_FORMATS or not SHA256.match(sha256 or ""):
            return None
        name = source_name(sha256, fmt)
        return self.path / name if name in self.manifest["files"] else None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# A published version: the UTC time of publishing, then the content fingerprint's first digits.
VERSION = re.compile(r"^\d{8}T\d{12}Z-[0-9a-f]{12}$")


def check_version(version: str, where: str = "version") -> str:
    """A snapshot version name, or SnapshotError: no path separator, dot or other text gets
    through to be joined to a path."""
    if not isinstance(version, str) or not VERSION.match(version):
        raise SnapshotError(f"{where} {version!r} is not a snapshot version (such as {EXAMPLE})")
    return version


EXAMPLE = "20260101T120000000000Z-0123456789ab"


def snapshot_dir(root: Path, version: str) -> Path:
    """ROOT/snapshots/<version>, refused unless it is a real folder inside ROOT/snapshots."""
    check_version(version)
    base = (Path(root) / SNAPSHOTS).resolve()
    path = Path(root) / SNAPSHOTS / version
    if path.is_symlink():
        raise SnapshotError(f"{path} is a symbolic link; snapshots must be real folders")
    if path.resolve().parent != base:
        raise SnapshotError(f"{path} resolves outside {base}")
    return path


def resolve(location: str | Path) -> Path:
    """A snapshot directory, or an index root whose CURRENT names one."""
    path = Path(location)
    if (path / MANIFEST).is_file():
        return path
    pointer = path / CURRENT
    if not pointer.is_file():
        raise SnapshotError(f"{path} is neither a snapshot nor an index root with a {CURRENT} file")
    version = check_version(pointer.read_text(encoding="utf-8").strip(), f"{pointer} names")
    snapshot = snapshot_dir(path, version)
    if not (snapshot / MANIFEST).is_file():
        raise SnapshotError(f"{pointer} names {version!r}, which has no manifest")
    return snapshot


def plain_name(name: object, where: str) -> str:
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name in (".", ".."):
        raise SnapshotError(f"{where} {name!r} is not a file name inside the snapshot")
    return name


def load(location: str | Path, verify: bool = False) -> Snapshot:
    """Read the manifest and check every file: sizes always, SHA-256 too when `verify`. Every
    file the manifest names must be a plain name inside the snapshot folder, and the manifest's
    version must be the folder's name."""
    path = resolve(location)
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SnapshotError(f"{path / MANIFEST} cannot be read: {exc}") from exc
    if not isinstance(manifest, dict):
        raise SnapshotError(f"{path / MANIFEST} is not a JSON object")
    if manifest.get("format_version") != SNAPSHOT_FORMAT:
        raise SnapshotError(
            f"snapshot format {manifest.get('format_version')!r} is not {SNAPSHOT_FORMAT}; "
            "rebuild it with this version of lexkb"
        )
    for field in ("snapshot_version", "files", "tables"):
        if not isinstance(manifest.get(field), dict if field != "snapshot_version" else str):
            raise SnapshotError(f"{path / MANIFEST} has no valid {field!r}")
    folder = path.resolve().name
    version = manifest["snapshot_version"]
    # A snapshot being published is read back in its staging folder, ".tmp-<version>-<random>".
    if folder != version and not folder.startswith(f".tmp-{version}-"):
        raise SnapshotError(
            f"{path / MANIFEST} says version {version!r}, but its folder is {folder!r}"
        )
    for name, entry in manifest["tables"].items():
        file = plain_name(entry.get("file") if isinstance(entry, dict) else None, f"table {name}")
        if file not in manifest["files"]:
            raise SnapshotError(f"table {name}'s file {file!r} is not among the manifest's files")
    for name, entry in manifest["files"].items():
        file = path / plain_name(name, "file")
        if file.is_symlink() or not file.is_file():
            raise SnapshotError(f"{file} is missing (or not a regular file)")
        if not isinstance(entry, dict) or file.stat().st_size != entry.get("bytes"):
            raise SnapshotError(
                f"{file} has {file.stat().st_size} bytes, manifest says "
                f"{entry.get('bytes') if isinstance(entry, dict) else entry!r}"
            )
        if verify and file_sha256(file) != entry.get("sha256"):
            raise SnapshotError(f"{file} does not match its SHA-256 in the manifest")
    return Snapshot(path, manifest)
