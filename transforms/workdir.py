"""Where intermediate tables live between pipeline steps (ROOT/work).

Parsed elements are cached by the source file's SHA-256, so an unchanged file is never parsed
twice, whichever partition or run asks for it. Per-source parts are stored by source key.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import polars as pl

PART_TABLES = ("documents", "sections", "chunks")


class WorkDir:
    def __init__(self, root: str | Path) -> None:
        self.path = Path(root) / "work"

    @property
    def sources(self) -> Path:
        return self.path / "sources.parquet"

    def elements(self, sha256: str) -> Path:
        return self.path / "elements" / f"{sha256}.parquet"

    def part_dir(self, key: str) -> Path:
        return self.path / "parts" / quote(key, safe="")

    def error_file(self, key: str) -> Path:
        return self.path / "errors" / f"{quote(key, safe='')}.json"

    def write_part(self, key: str, frames: tuple[pl.DataFrame, ...]) -> None:
        directory = self.part_dir(key)
        directory.mkdir(parents=True, exist_ok=True)
        for name, frame in zip(PART_TABLES, frames, strict=True):
            frame.write_parquet(directory / f"{name}.parquet")

    def read_part(self, key: str) -> tuple[pl.DataFrame, ...] | None:
        directory = self.part_dir(key)
        if not all((directory / f"{name}.parquet").is_file() for name in PART_TABLES):
            return None
        return tuple(pl.read_parquet(directory / f"{name}.parquet") for name in PART_TABLES)

    def record_error(self, key: str, reason: str) -> None:
        file = self.error_file(key)
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(json.dumps({"source": key, "error": reason}), encoding="utf-8")

    def clear_error(self, key: str) -> None:
        self.error_file(key).unlink(missing_ok=True)

    def error(self, key: str) -> str | None:
        file = self.error_file(key)
        return json.loads(file.read_text(encoding="utf-8"))["error"] if file.is_file() else None
