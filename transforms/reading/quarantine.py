"""Why a source file is left out of the index, in words a person can act on.

A file that cannot be read, or reads as something no index should hold, is quarantined: the rest
of the build goes on and publishes, and the snapshot's `quarantine` table says which file, at
which stage, and why ("encrypted PDF: a password is needed", "not a PDF (starts with PK: a ZIP
or Office file)"). `kind` is a short stable name for the fault, for counting and filtering.
"""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from lexkb.core.store.schema import QUARANTINE, polars_schema


class SourceError(Exception):
    """A source file left out of the index; the message is the reason shown to the user."""

    def __init__(self, reason: str, stage: str = "parse", kind: str = "unreadable") -> None:
        super().__init__(reason)
        self.reason = reason
        self.stage = stage
        self.kind = kind


def quarantine_frame(records: list[dict]) -> pl.DataFrame:
    """Rows of the snapshot's `quarantine` table, sorted by source name."""
    rows = [
        {
            "source_name": r["source"],
            "sha256": r.get("sha256"),
            "stage": r.get("stage", "parse"),
            "kind": r.get("kind", "unreadable"),
            "reason": r["error"],
        }
        for r in sorted(records, key=lambda r: r["source"])
    ]
    return pl.from_dicts(rows, schema=polars_schema(QUARANTINE))


def with_copies(record: dict, key: str, copies: Iterable[str]) -> list[dict]:
    """`record` of the source `key`, and one for each of its byte-identical copies: the copies
    were never parsed, and fail for the same reason."""
    return [record] + [
        {**record, "source": copy, "error": f"{record['error']} (same bytes as {key})"}
        for copy in copies
    ]


def refused_records(refused: list[dict]) -> list[dict]:
    """Records for the files the scan refused (see transforms.reading.source_files.scan): they never
    reached parsing, so they are quarantined at the scan stage with its reason."""
    return [
        {
            "source": r["key"],
            "sha256": None,
            "stage": "scan",
            "kind": r["kind"],
            "error": r["reason"],
        }
        for r in refused
    ]
