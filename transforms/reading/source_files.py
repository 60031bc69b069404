"""Finding source files and fingerprinting them.

A source file is the unit of work: one dynamic partition in Dagster, one cache entry for parsing.
Its key is the path relative to the folder it was found in, so the key (and every id derived from
it) does not depend on where the corpus is checked out.

The scan is careful about what it lets in. A symbolic link that leaves the source folder is not
followed unless asked (a link to /proc/self/environ would otherwise index the environment), a
link loop is reported, a file over the size limit is refused, byte-identical copies are indexed
once with every name recorded, and files of unsupported types are listed rather than skipped
in silence.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from lexkb.core.store.snapshot import file_sha256
from lexkb.core.text.keys import file_key
from transforms.reading.metadata import is_metadata_file

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
    # Legal XML (USLM, CLML, Formex, Akoma Ntoso): the root element tells the dialect
    # (transforms.reading.legal_xml).
    ".xml": "xml",
}
MAX_FILE_MB = 200


@dataclass(frozen=True)
class SourceFile:
    key: str
    path: Path
    format: str
    sha256: str
    size: int
    # Other names under which the same bytes were found; indexed once, under `key`.
    duplicates: tuple[str, ...] = ()

    @property
    def document_key(self) -> str:
        """The file name without folder or extension: its document's first name (made
        readable once the build has read its title: transforms.structure.document_keys)."""
        return file_key(self.key)


@dataclass(frozen=True)
class Refused:
    """A file the scan would not let in, and why (it goes to the quarantine table)."""

    key: str
    path: str
    kind: str
    reason: str


@dataclass
class Scan:
    sources: list[SourceFile] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    # Files of types lexkb does not read (".png", ".zip"): listed, not quarantined.
    ignored: dict[str, str] = field(default_factory=dict)


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def _walk(root: Path) -> list[Path]:
    """Every entry under `root` without following linked folders (a loop cannot trap the walk)."""
    found: list[Path] = []
    for folder, folders, files in os.walk(root, followlinks=False):
        base = Path(folder)
        found.extend(base / name for name in folders if (base / name).is_symlink())
        found.extend(base / name for name in files)
    return sorted(found)


def formats_in(paths: list[str | Path]) -> set[str]:
    """The formats the supported files under `paths` have, by name alone: what `lexkb build`
    tells the parse workers' server to preload before the scan has run. A linked folder
    counts as holding every format (the scan decides whether it is followed)."""
    formats: set[str] = set()
    for raw in paths:
        root = Path(raw)
        entries = _walk(root) if root.is_dir() else [root]
        for path in entries:
            if path.is_symlink() and path.is_dir():
                return set(FORMATS.values())
            formats.add(FORMATS.get(path.suffix.lower(), ""))
    return formats - {""}


def scan(
    paths: Sequence[str | Path], follow_symlinks: bool = False, max_file_mb: float = MAX_FILE_MB
) -> Scan:
    """Supported files under the given files or folders, sorted by key, with what was refused.

    Raises ValueError for a path that does not exist or two files that would share a key, since
    either would silently drop a document from the index.
    """
    result = Scan()
    found: dict[str, tuple[Path, str, int, str]] = {}
    for raw in paths:
        root = Path(raw)
        if not root.exists() and not root.is_symlink():
            raise ValueError(f"source path does not exist: {root}")
        resolved_root = root.resolve()
        entries = [root] if not root.is_dir() else _walk(root)
        for path in entries:
            key = path.name if not root.is_dir() else path.relative_to(root).as_posix()
            if path.name.startswith(".") or is_metadata_file(path):
                continue
            if path.is_symlink():
                problem = _link_problem(path, resolved_root, follow_symlinks)
                if problem is not None:
                    result.refused.append(Refused(key, str(path), *problem))
                    continue
            if path.is_dir():
                continue
            fmt = FORMATS.get(path.suffix.lower())
            if fmt is None:
                result.ignored[key] = f"unsupported type {path.suffix.lower() or '(none)'}"
                continue
            if fmt == "xml" and (unread := _other_xml(path)) is not None:
                result.ignored[key] = unread
                continue
            try:
                size = path.stat().st_size
                if size == 0:
                    result.refused.append(Refused(key, str(path), "empty", "empty file (0 bytes)"))
                    continue
                if size > max_file_mb * 1_000_000:
                    result.refused.append(
                        Refused(
                            key,
                            str(path),
                            "too_large",
                            f"file is {size / 1e6:.0f} MB, over the limit of {max_file_mb:g} MB",
                        )
                    )
                    continue
                sha = file_sha256(path)
            except OSError as exc:
                result.refused.append(
                    Refused(key, str(path), "unreadable", f"cannot read the file: {exc.strerror}")
                )
                continue
            if key in found:
                raise ValueError(f"two sources share the key {key!r}: {found[key][0]} and {path}")
            found[key] = (path.resolve(), fmt, size, sha)
    # Copies are indexed once, under the shortest name (the original, as a rule: "x.pdf" rather
    # than "copy of x.pdf"), then the first in order.
    by_sha: dict[str, list[str]] = {}
    for key in sorted(found, key=lambda k: (len(k), k)):
        by_sha.setdefault(found[key][3], []).append(key)
    for sha, keys in by_sha.items():
        path, fmt, size, _ = found[keys[0]]
        result.sources.append(SourceFile(keys[0], path, fmt, sha, size, tuple(keys[1:])))
    result.sources.sort(key=lambda s: s.key)
    return result


def _other_xml(path: Path) -> str | None:
    """Why an XML file is not legal XML lexkb reads (a sitemap, a configuration file), from its
    root element alone; None for USLM, CLML, Formex or Akoma Ntoso, which the parse step reads
    safely."""
    from transforms.reading.legal_xml.read import sniff

    try:
        dialect, root = sniff(path)
    except OSError:
        return None  # the scan's own read below reports an unreadable file
    return None if dialect else f"XML of a kind lexkb does not read (root <{root}>)"


def _link_problem(path: Path, root: Path, follow: bool) -> tuple[str, str] | None:
    try:
        target = path.resolve(strict=True)
    except RuntimeError:
        return "symlink_loop", "symbolic link loop: it never reaches a file"
    except OSError as exc:
        if "loop" in str(exc).casefold():
            return "symlink_loop", "symbolic link loop: it never reaches a file"
        return "broken_symlink", f"symbolic link to a missing file ({os.readlink(path)})"
    if target.is_dir():
        return "symlink_folder", "symbolic link to a folder: not followed"
    if not follow and not _inside(target, root):
        return (
            "symlink_outside",
            f"symbolic link to {target}, outside the source folder: not followed "
            "(allow with follow_symlinks)",
        )
    return None


def discover(paths: Sequence[str | Path], follow_symlinks: bool = False) -> list[SourceFile]:
    """The files a build would parse (see `scan` for what is refused and why)."""
    return scan(paths, follow_symlinks).sources


_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "key": pl.String,
    "path": pl.String,
    "format": pl.String,
    "sha256": pl.String,
    "size": pl.Int64,
    "duplicates": pl.List(pl.String),
}


def to_frame(sources: list[SourceFile]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "key": [s.key for s in sources],
            "path": [str(s.path) for s in sources],
            "format": [s.format for s in sources],
            "sha256": [s.sha256 for s in sources],
            "size": [s.size for s in sources],
            "duplicates": [list(s.duplicates) for s in sources],
        },
        schema=_SCHEMA,
    )


def from_frame(frame: pl.DataFrame) -> list[SourceFile]:
    has_duplicates = "duplicates" in frame.columns
    return [
        SourceFile(
            row["key"],
            Path(row["path"]),
            row["format"],
            row["sha256"],
            row["size"],
            tuple(row["duplicates"] or ()) if has_duplicates else (),
        )
        for row in frame.iter_rows(named=True)
    ]
