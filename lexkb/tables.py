"""A snapshot's tables as an open index holds them: documents, chunks, citations and the catalog,
with the row maps and masks every query reads.

Everything is read at open, so that after it the index needs no file of its snapshot: a prune or
rollback can never take one from under a long-lived reader. A chunk is known by its row in the
`chunks` table everywhere in the query module (scores, postings, vectors and the graph are
arrays over rows); `by_id` and the level masks turn ids and levels into rows once, here.
"""

from __future__ import annotations

import re
from datetime import date

import numpy as np
import polars as pl

from lexkb.core.store import snapshot as snap
from lexkb.core.text.citing import unit_word
from lexkb.core.text.keys import file_key
from lexkb.core.text.refs import document_names, short_name, title_code
from lexkb.core.vocabulary import ChunkLevel


class Tables:
    """The snapshot's tables in memory, read once by `Index.open` and shared by its parts."""

    def __init__(self, snapshot: snap.Snapshot) -> None:
        self.documents = snapshot.read_table("documents")
        # A hit names its document as a footnote would: by its short name ("DORA", "IFRS 16",
        # "Bribery Act 2010"; lexkb.core.text.refs.short_name). The documents' listing keeps
        # the full title.
        titles = {
            doc["document_id"]: short_name(
                doc["title"], doc["short_name"], file_key(doc["source_name"] or "")
            )
            for doc in self.documents.iter_rows(named=True)
        }
        self.chunks = snapshot.read_table("chunks").with_columns(
            pl.col("document_id").replace_strict(titles, default=None).alias("document_title")
        )
        self.short_names = titles
        self.unit_words = unit_words(self.documents, self.chunks)
        self.by_id = {cid: row for row, cid in enumerate(self.chunks["chunk_id"])}
        levels = self.chunks["chunk_level"].to_numpy()
        self.level_rows = {level: np.flatnonzero(levels == level) for level in ChunkLevel}
        self.paragraph_mask = levels == ChunkLevel.PARAGRAPH
        self.aliases = document_aliases(self.documents, snapshot.manifest.get("aliases", {}))
        self.document_ids = set(self.documents["document_id"])
        self.source_urls = dict(
            zip(self.documents["document_id"], self.documents["source_url"], strict=True)
        )
        self.metadata = {
            row.pop("document_id"): {
                k: (v.isoformat() if isinstance(v, date) else v) for k, v in row.items()
            }
            for row in self.documents.select(
                "document_id",
                "document_type",
                "authority_level",
                "author",
                "tags",
                "parties",
                "published",
                "effective",
                "version",
                "deprecated",
            ).to_dicts()
        }
        self.edges = snapshot.read_table("edges")
        self.standards = snapshot.read_table(
            "standards", columns=["document_id", "number", "version", "paragraph_count"]
        )

    def vocabulary_texts(self) -> list[str]:
        """Everything the index says in words: its paragraphs, section headings and document
        titles and names, for vocabularies built over the whole index."""
        paragraphs = self.chunks.filter(pl.col("chunk_level") == ChunkLevel.PARAGRAPH)["content"]
        headings = self.chunks["section_path"].explode().drop_nulls().unique(maintain_order=True)
        # Every name a document goes by ("DORA", "17 U.S.C."), so a question naming it is in scope.
        names = [
            name
            for doc in self.documents.iter_rows(named=True)
            for name in document_names(
                doc["document_key"],
                doc["title"],
                doc["short_name"],
                doc["aliases"] or [],
                doc.get("parties") or [],
            )
            if name != doc["document_key"]  # a file name is no word of the index
        ]
        return [*paragraphs.to_list(), *headings.to_list(), *names]


def unit_words(documents: pl.DataFrame, chunks: pl.DataFrame) -> dict[str, str | None]:
    """Document id -> the word its numbered units are cited by (lexkb.core.text.citing): by
    its type, and a contract's by the word its own text uses."""
    kinds = dict(documents.select("document_id", "document_type").rows())
    contracts = [doc_id for doc_id, kind in kinds.items() if (kind or "").casefold() == "contract"]
    texts = dict(
        chunks.filter(
            pl.col("document_id").is_in(contracts) & (pl.col("chunk_level") == ChunkLevel.PARAGRAPH)
        )
        .group_by("document_id")
        .agg(pl.col("content"))
        .rows()
    )
    return {doc_id: unit_word(kind, texts.get(doc_id, ())) for doc_id, kind in kinds.items()}


def document_aliases(documents: pl.DataFrame, catalog: dict[str, str]) -> dict[str, str]:
    """Names a user may put before a reference or use in a filter: the document's names
    (lexkb.core.text.refs.document_names), a title code's parts ("LSA", "230"), its file's
    name (its key before keys were made readable: "CELEX_32022R2554_EN_TXT"), the catalog's
    aliases (`catalog`: alias -> document key, from the manifest)."""
    by_key = {}
    claims: dict[str, set[str]] = {}
    for doc in documents.iter_rows(named=True):
        by_key[doc["document_key"]] = doc["document_id"]
        names = document_names(
            doc["document_key"],
            doc["title"],
            doc["short_name"],
            doc["aliases"] or [],
            doc.get("parties") or [],
        )
        if code := title_code(doc["title"]):
            names += [code[1], code[0]]
        if doc.get("source_name"):
            names.append(file_key(doc["source_name"]))
        for name in names:
            claims.setdefault(alias_key(name), set()).add(doc["document_id"])
    # A name several documents go by ("Agreement", "AML Policy") names none of them: it would
    # send a reference to whichever came first. A document's own key still names it.
    keys = {alias_key(key): doc_id for key, doc_id in by_key.items()}
    aliases = {
        name: next(iter(owners)) if len(owners) == 1 else keys[name]
        for name, owners in claims.items()
        if len(owners) == 1 or name in keys
    }
    for name, key in catalog.items():
        if key in by_key:
            aliases.setdefault(alias_key(name), by_key[key])
    return aliases


def alias_key(name: str) -> str:
    """A document name as aliases are keyed: case, spaces, dots, dashes and underscores aside."""
    return re.sub(r"[\s._-]+", "", name.casefold())
