"""The document listing: which documents an index holds, each found by any of its names.

People name a document as they know it ("LSA 230", "DHR", its key or title), so every surface
that takes a document (a filter, an export, the listing) resolves the name through the same
aliases (lexkb.tables.document_aliases), and an unknown name is an error listing the known ones.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import polars as pl

from lexkb.core.text.citing import cited_ref
from lexkb.core.vocabulary import ChunkLevel
from lexkb.tables import Tables, alias_key


class Catalog:
    """The documents of `tables` with their catalog entries (the dbt model `standards`)."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables

    def documents(self) -> list[dict[str, Any]]:
        """Every indexed document with its catalog entry from the dbt model `standards`: number
        ("LSA 230", a short name, or the key), title, version, paragraph count."""
        rows = (
            self.tables.documents.drop("version")
            .join(self.tables.standards, on="document_id", how="left")
            .sort("document_key")
            .to_dicts()
        )
        return [
            {k: (v.isoformat() if isinstance(v, date) else v) for k, v in r.items()} for r in rows
        ]

    def document_id(self, name: str) -> str:
        """The id of the document called `name` (key, title, code, alias or id itself)."""
        doc_id = self.tables.aliases.get(alias_key(name))
        if doc_id is None and name in self.tables.document_ids:
            doc_id = name
        if doc_id is None:
            known = ", ".join(sorted(self.tables.documents["document_key"]))
            raise ValueError(f"no document called {name!r}; documents are: {known}")
        return doc_id

    def paragraphs(
        self, name: str, levels: tuple[str, ...] = (ChunkLevel.PARAGRAPH,)
    ) -> tuple[dict[str, Any], pl.DataFrame]:
        """A document (by key, title or code) and its chunks of `levels` in reading order, each
        with its ref as cited (`cited_ref`: "section 7(1)"; lexkb.core.text.citing)."""
        doc_id = self.document_id(name)
        document = next(d for d in self.documents() if d["document_id"] == doc_id)
        paragraphs = self.tables.chunks.filter(
            (pl.col("document_id") == doc_id) & pl.col("chunk_level").is_in(list(levels))
        ).sort("chunk_index")
        word = self.tables.unit_words.get(doc_id)
        cited = [cited_ref(ref, word) for ref in paragraphs["ref"]]
        return document, paragraphs.with_columns(pl.Series("cited_ref", cited, dtype=pl.String))
