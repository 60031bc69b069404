"""Chunk rows made into Hits: what every search, lookup and walk returns.

A search of ten hits makes ten of them, so a hit must cost little: what it reads of its chunk
is kept once per row as a tuple in Hit's field order, where reading a frame row costs about
10 µs.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import polars as pl

from lexkb.core.text.citing import cited_ref
from lexkb.core.vocabulary import ChunkLevel
from lexkb.results import SCORE_DIGITS, Hit

# What a Hit reads of its chunk (Hits.rows), in this order.
HIT_COLUMNS = (
    "chunk_id",
    "document_id",
    "document_key",
    "document_title",
    "chunk_level",
    "ref",
    "section_path",
    "page",
    "content",
    "content_hash",
    "parent_chunk_id",
)


# What a hit reads of one chunk row, in Hit's field order (score, relevance and the fields a
# search sets aside): see Hits.rows.
_Row = tuple[
    str, str, str, ChunkLevel, str | None, tuple[str, ...], int | None, str,
    str | None, dict[str, Any], str | None, str | None, str | None,
]  # fmt: skip


class Hits:
    """Makes the Hit of a chunk row, citing the snapshot `version`."""

    def __init__(
        self,
        chunks: pl.DataFrame,
        source_urls: dict[str, str | None],
        metadata: dict[str, dict[str, Any]],
        version: str,
        unit_words: dict[str, str | None] | None = None,
    ) -> None:
        self.chunks = chunks
        self.source_urls = source_urls
        self.metadata = metadata
        self.version = version
        # Document id -> the word its units are cited by ("section"; lexkb.core.text.citing).
        self.unit_words = unit_words or {}

    @cached_property
    def rows(self) -> list[_Row]:
        """What a hit reads of each chunk, one tuple per row in Hit's field order (score and
        relevance aside): a hit then costs one list lookup. Built on the first hit, so opening
        stays fast. A level outside ChunkLevel breaks the snapshot's contract: ValueError."""
        levels = {level.value: level for level in ChunkLevel}
        return [
            (
                chunk_id,
                document_key,
                document_title,
                levels.get(chunk_level) or ChunkLevel(chunk_level),
                ref,
                tuple(section_path or ()),
                page,
                content,
                self.source_urls.get(document_id),
                self.metadata.get(document_id, {}),
                content_hash,
                parent_chunk_id,
                _cited(ref, self.unit_words.get(document_id), chunk_level),
            )
            for (
                chunk_id,
                document_id,
                document_key,
                document_title,
                chunk_level,
                ref,
                section_path,
                page,
                content,
                content_hash,
                parent_chunk_id,
            ) in self.chunks.select(HIT_COLUMNS).iter_rows()
        ]

    def text(self, row: int) -> str:
        return self.rows[row][7]

    def hit(self, row: int, score: float | None, relevance: float | None = None) -> Hit:
        """The chunk at `row` as a citation, with its score and relevance rounded (or None)."""
        chunk = self.rows[row]
        # Positional, in Hit's field order (see rows): keywords cost a tenth of a hit more.
        return Hit(
            *chunk[:5],
            list(chunk[5]),
            chunk[6],
            None if score is None else round(float(score), SCORE_DIGITS),
            chunk[7],
            None,
            *chunk[8:11],
            self.version,
            None if relevance is None else round(float(relevance), 4),
            chunk[11],
            None,
            chunk[12],
        )


def _cited(ref: str | None, word: str | None, level: str) -> str | None:
    """The ref as its family cites it; a note's marked as one ("§ 504 note", as the US Code's
    notes are cited), so that a note is never cited as the provision it follows."""
    cited = cited_ref(ref, word)
    if level != ChunkLevel.NOTE:
        return cited
    return f"{cited} note" if cited else "note"
