"""Locating and verifying published snapshots (the read side of the snapshot contract).

Layout: ROOT/snapshots/<version>/{manifest.json, *.parquet, index.duckdb, source-*.pdf} and
ROOT/CURRENT, a one-line file naming the version services should load. A sharded snapshot keeps
some tables as one file per shard (lexkb.core.store.shards); `read_table` reads either layout. A snapshot directory never changes once
published, so a reader that verified it once can keep using it while newer ones appear.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from lexkb.core.store import shards
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
    manifest: dict[str, Any]

    @property
    def version(self) -> str:
        version: str = self.manifest["snapshot_version"]
        return version

    @property
    def sharded(self) -> bool:
        """Whether some tables are kept one file per shard (lexkb.core.store.shards)."""
        return self.manifest.get("layout") == shards.LAYOUT

    @property
    def shards(self) -> list[dict[str, Any]]:
        """The shards in row order ({"name", "rows", "part"}); none in a classic snapshot."""
        return self.manifest.get("shards", []) if self.sharded else []

    def table_path(self, name: str) -> Path:
        """The one file of a table; SnapshotError for a table kept per shard (`table_paths`)."""
        entry = self.manifest["tables"][name]
        if "file" not in entry:
            raise SnapshotError(
                f"table {name} of {self.version} is kept in {len(entry['files'])} shard files; "
                "read it with read_table or table_paths"
            )
        return self.path / str(entry["file"])

    def table_paths(self, name: str) -> list[Path]:
        """A table's files in row order: one for a classic table, one per shard otherwise."""
        entry = self.manifest["tables"][name]
        return (
            [self.path / f for f in entry["files"]]
            if "files" in entry
            else [self.path / entry["file"]]
        )

    def shard_paths(self, file: str) -> list[Path]:
        """Each shard's copy of a part file that is no table (`vector_files.CHUNK_VECTORS`)."""
        return [self.path / shards.shard_file(s["name"], file) for s in self.shards]

    def table_rows(self, name: str) -> int:
        """A table's rows as its files hold them (read from their footers)."""
        return sum(parquet_rows(path) for path in self.table_paths(name))

    def read_table(self, name: str, columns: list[str] | None = None) -> pl.DataFrame:
        """A table whole, its shards concatenated in row order."""
        frames = [pl.read_parquet(path, columns=columns) for path in self.table_paths(name)]
        return frames[0] if len(frames) == 1 else pl.concat(frames, rechunk=False)

    def source_path(self, sha256: str, fmt: str) -> Path | None:
        """The copy of a source file this snapshot keeps (`source_name`), or None: a format
        whose files are not kept, or a snapshot published before they were."""
        if fmt not in SOURCE_FORMATS or not SHA256.match(sha256 or ""):
            return None
        name = source_name(sha256, fmt)
        return self.path / name if name in self.manifest["files"] else None


def parquet_rows(path: Path) -> int:
    """A Parquet file's row count, from its footer."""
    rows: int = pl.scan_parquet(path).select(pl.len()).collect().item()
    return rows


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
    for name, file in _table_files(manifest, path / MANIFEST):
        if file not in manifest["files"]:
            raise SnapshotError(f"table {name}'s file {file!r} is not among the manifest's files")
    for name, entry in manifest["files"].items():
        stored = path / plain_name(name, "file")
        if stored.is_symlink() or not stored.is_file():
            raise SnapshotError(f"{stored} is missing (or not a regular file)")
        if not isinstance(entry, dict) or stored.stat().st_size != entry.get("bytes"):
            raise SnapshotError(
                f"{stored} has {stored.stat().st_size} bytes, manifest says "
                f"{entry.get('bytes') if isinstance(entry, dict) else entry!r}"
            )
        if verify and file_sha256(stored) != entry.get("sha256"):
            raise SnapshotError(f"{stored} does not match its SHA-256 in the manifest")
    return Snapshot(path, manifest)


def _table_files(manifest: dict[str, Any], where: Path) -> list[tuple[str, str]]:
    """(table, file) for every file of every table, each a plain name; a sharded table's files
    must be its shards' (`shards.shard_file`), in the shards' order, for rows to line up."""
    layout = manifest.get("layout")
    if layout not in (*shards.CLASSIC_LAYOUTS, shards.LAYOUT):
        raise SnapshotError(f"{where} has an unknown layout {layout!r}")
    names = []
    if layout == shards.LAYOUT:
        listed = manifest.get("shards")
        if not isinstance(listed, list) or not listed:
            raise SnapshotError(f"{where} is sharded but lists no shards")
        for position, shard in enumerate(listed):
            if (
                not isinstance(shard, dict)
                or shard.get("name") != shards.shard_name(position)
                or not isinstance(shard.get("rows"), int)
                or shard["rows"] < 0
            ):
                raise SnapshotError(f"{where}: shard {position} is {shard!r}")
        names = [shard["name"] for shard in listed]
    found = []
    for name, entry in manifest["tables"].items():
        if layout == shards.LAYOUT and name in shards.SHARDED_TABLES:
            files = entry.get("files") if isinstance(entry, dict) else None
            wanted = [shards.shard_file(s, shards.table_file(name)) for s in names]
            if files != wanted:
                raise SnapshotError(f"table {name}'s files {files!r} are not {wanted!r}")
            found += [(name, plain_name(file, f"table {name}")) for file in files]
        else:
            file = entry.get("file") if isinstance(entry, dict) else None
            found.append((name, plain_name(file, f"table {name}")))
    return found
