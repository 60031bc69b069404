"""Where intermediate tables live between pipeline steps (ROOT/work).

Parsed elements are cached by the source file's SHA-256, so an unchanged file is never parsed
twice, whichever partition or run asks for it. A source's structure (its part: documents,
sections, chunks) is kept with a stamp of the source and of lexkb's code, and reused while both
are unchanged, so a rebuild after one file changed recovers that file's structure only.
Per-source parts and quarantine records are
stored by source key, under a name derived from a hash of the key: a source nested forty folders
deep must not make a file name longer than the file system allows.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

import polars as pl

from transforms.reading.quarantine import SourceError
from transforms.reading.source_files import SourceFile

# The repository: the code a part is built by is read from here (code_files).
REPO = Path(__file__).resolve().parents[2]
PART_TABLES = ("documents", "sections", "chunks")
# One source's tables, in PART_TABLES order.
Part = tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]


def _name(key: str) -> str:
    """A short, safe and unique file name for a source key."""
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", key)[-60:]
    return f"{digest}-{readable}"


class WorkDir:
    def __init__(self, root: str | Path) -> None:
        self.path = Path(root) / "work"

    @property
    def sources(self) -> Path:
        return self.path / "sources.parquet"

    @property
    def scan_report(self) -> Path:
        """What the last scan refused or ignored (scan.json)."""
        return self.path / "scan.json"

    def elements(self, sha256: str) -> Path:
        from transforms.reading.elements import PARSER_VERSION

        return self.path / "elements" / f"v{PARSER_VERSION}" / f"{sha256}.parquet"

    def part_dir(self, key: str) -> Path:
        return self.path / "parts" / _name(key)

    def error_file(self, key: str) -> Path:
        return self.path / "errors" / f"{_name(key)}.json"

    def write_part(self, key: str, frames: Part, source: SourceFile | None = None) -> None:
        """Write a source's part; with `source`, stamp it so `current_part` can reuse it."""
        directory = self.part_dir(key)
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "stamp").unlink(missing_ok=True)
        for name, frame in zip(PART_TABLES, frames, strict=True):
            frame.write_parquet(directory / f"{name}.parquet")
        if source is not None:
            (directory / "stamp").write_text(part_stamp(source), encoding="utf-8")

    def current_part(self, source: SourceFile) -> Part | None:
        """The source's part when it was written from these bytes by this code, else None."""
        stamp = self.part_dir(source.key) / "stamp"
        if not stamp.is_file() or stamp.read_text(encoding="utf-8") != part_stamp(source):
            return None
        return self.read_part(source.key)

    def read_part(self, key: str) -> Part | None:
        directory = self.part_dir(key)
        if not all((directory / f"{name}.parquet").is_file() for name in PART_TABLES):
            return None
        documents, sections, chunks = (
            pl.read_parquet(directory / f"{name}.parquet") for name in PART_TABLES
        )
        return documents, sections, chunks

    @property
    def tokens(self) -> Path:
        """The chunks' BM25 terms by content hash from the last build (transforms.indexing.bm25), named
        for the code that found them."""
        return self.path / f"tokens-{code_version()[:16]}.parquet"

    def kept_tokens(self) -> pl.DataFrame | None:
        """The last build's terms when this code found them and the file reads; else None,
        and every chunk is tokenized again."""
        try:
            return pl.read_parquet(self.tokens) if self.tokens.is_file() else None
        except (OSError, pl.exceptions.PolarsError):
            return None

    def keep_tokens(self, frame: pl.DataFrame) -> None:
        """Replace the kept terms atomically; files left by other code go."""
        write_atomically(self.tokens, frame.write_parquet)
        for old in self.path.glob("tokens-*.parquet"):
            if old != self.tokens:
                old.unlink(missing_ok=True)

    def record_error(self, key: str, error: SourceError, sha256: str | None = None) -> None:
        """Quarantine `key` (until it parses again): why, at which stage, for which bytes."""
        file = self.error_file(key)
        file.parent.mkdir(parents=True, exist_ok=True)
        record = {
            "source": key,
            "sha256": sha256,
            "stage": error.stage,
            "kind": error.kind,
            "error": error.reason,
        }
        file.write_text(json.dumps(record), encoding="utf-8")

    def clear_error(self, key: str) -> None:
        self.error_file(key).unlink(missing_ok=True)

    def error_record(self, key: str) -> dict | None:
        file = self.error_file(key)
        return json.loads(file.read_text(encoding="utf-8")) if file.is_file() else None

    def error(self, key: str) -> str | None:
        record = self.error_record(key)
        return record["error"] if record else None


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """`write` a temporary file beside `path`, then rename it over `path`: a build that dies
    half-way leaves the old file whole, never half of a new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = path.with_name(f".{path.name}.tmp")
    write(staged)
    staged.replace(path)


def part_stamp(source: SourceFile) -> str:
    """What a source's structure depends on: its key, format and bytes, and lexkb's code."""
    described = f"{source.key}\0{source.format}\0{source.sha256}\0{code_version()}"
    return hashlib.sha256(described.encode("utf-8")).hexdigest()


@cache
def code_version() -> str:
    """A digest of the code a part is built by (code_files): a part built by other code is
    never reused."""
    digest = hashlib.sha256()
    for file in code_files():
        digest.update(str(file.relative_to(REPO)).encode("utf-8") + b"\0" + file.read_bytes())
    return digest.hexdigest()


def code_files() -> list[Path]:
    """Every module of the pipeline's transforms and of the ground floor they share with the
    query module (lexkb/core: references, tokenizer, dates, the snapshot's schema), in every
    package below them, and the query module's top level."""
    return sorted(
        [
            *(REPO / "transforms").rglob("*.py"),
            *(REPO / "lexkb" / "core").rglob("*.py"),
            *(REPO / "lexkb").glob("*.py"),
        ]
    )
