"""Per-source parts -> the snapshot's tables, in a fixed order so rebuilds are identical."""

from __future__ import annotations

import polars as pl

from lexkb.schema import CHUNKS, DOCUMENTS, SECTIONS
from transforms import metadata
from transforms.bm25 import BM25Params, build_bm25


def _empty(schema) -> pl.DataFrame:
    return pl.from_arrow(schema.empty_table())


def assemble(
    parts: list[tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]],
    catalog: metadata.Catalog | None = None,
    params: BM25Params | None = None,
) -> tuple[dict[str, pl.DataFrame], dict]:
    """Concatenate (documents, sections, chunks) parts in the given order, apply the catalog's
    document metadata and score BM25.

    The row order of chunks.parquet is the `chunk_row` that BM25 postings point at.
    """
    params = params or BM25Params()
    catalog = catalog or metadata.Catalog()
    documents = pl.concat([p[0] for p in parts]) if parts else _empty(DOCUMENTS)
    documents = metadata.apply(documents, catalog)
    sections = pl.concat([p[1] for p in parts]) if parts else _empty(SECTIONS)
    chunks = pl.concat([p[2] for p in parts]) if parts else _empty(CHUNKS)
    terms, postings = build_bm25(
        chunks["content"].to_list(), params, groups=chunks["chunk_level"].to_list()
    )
    tables = {
        "documents": documents,
        "sections": sections,
        "chunks": chunks,
        "bm25_terms": terms,
        "bm25_postings": postings,
    }
    settings = {
        "bm25": params.settings(),
        "aliases": dict(sorted(catalog.aliases.items())),
    }
    return tables, settings
