"""Finding source files and fingerprinting them.

A source file is the unit of work: one dynamic partition in Dagster, one cache entry for parsing.
Its key is the path relative to the folder it was found in, so the key (and every id derived from
it) does not depend on where the corpus is checked out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from lexkb.snapshot import file_sha256
from transforms.metadata import is_metadata_file

FORMATS: dict[str, str] = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".html": "html",
    ".htm": "html",
    ".json": "passages",
    ".jsonl": "passages",
}


@dataclass(frozen=True)
class SourceFile:
    key: str
    path: Path
    format: str
    sha256: str
    size: int

    @property
    def document_key(self) -> str:
        """The file name without folder or extension: the default name of its document."""
        return self.key.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def discover(paths: list[str | Path]) -> list[SourceFile]:
    """Every supported file under the given files or folders, sorted by key.

    Raises ValueError for a path that does not exist or two files that would share a key, since
    either would silently drop a document from the index.
    """
    found: dict[str, SourceFile] = {}
    for raw in paths:
        root = Path(raw)
        if not root.exists():
            raise ValueError(f"source path does not exist: {root}")
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            fmt = FORMATS.get(path.suffix.lower())
            if fmt is None or path.name.startswith(".") or is_metadata_file(path):
                continue
            key = path.name if root.is_file() else path.relative_to(root).as_posix()
            if key in found:
                raise ValueError(f"two sources share the key {key!r}: {found[key].path} and {path}")
            found[key] = SourceFile(
                key, path.resolve(), fmt, file_sha256(path), path.stat().st_size
            )
    return [found[key] for key in sorted(found)]


def to_frame(sources: list[SourceFile]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "key": [s.key for s in sources],
            "path": [str(s.path) for s in sources],
            "format": [s.format for s in sources],
            "sha256": [s.sha256 for s in sources],
            "size": [s.size for s in sources],
        },
        schema={
            "key": pl.String,
            "path": pl.String,
            "format": pl.String,
            "sha256": pl.String,
            "size": pl.Int64,
        },
    )


def from_frame(frame: pl.DataFrame) -> list[SourceFile]:
    return [
        SourceFile(row["key"], Path(row["path"]), row["format"], row["sha256"], row["size"])
        for row in frame.iter_rows(named=True)
    ]
