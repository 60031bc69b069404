"""Per-source parts -> the snapshot's tables, in a fixed order so rebuilds are identical."""

from __future__ import annotations

import polars as pl

from lexkb.core.store.schema import CHUNKS, DOCUMENTS, SECTIONS, empty_frame
from transforms import metadata
from transforms.bm25 import BM25Params, build_bm25, terms_by_hash, tokens_of


def assemble(
    parts: list[tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]],
    catalog: metadata.Catalog | None = None,
    params: BM25Params | None = None,
    kept: pl.DataFrame | None = None,
) -> tuple[dict[str, pl.DataFrame], dict, pl.DataFrame]:
    """Concatenate (documents, sections, chunks) parts in the given order, apply the catalog's
    document metadata and score BM25: the tables, their settings, and the chunks' terms by
    content hash (pass them as `kept` next time, and unchanged chunks are not tokenized again).

    The row order of chunks.parquet is the `chunk_row` that BM25 postings point at.
    """
    params = params or BM25Params()
    catalog = catalog or metadata.Catalog()
    documents = pl.concat([p[0] for p in parts]) if parts else empty_frame(DOCUMENTS)
    documents = metadata.apply(documents, catalog)
    sections = pl.concat([p[1] for p in parts]) if parts else empty_frame(SECTIONS)
    chunks = pl.concat([p[2] for p in parts]) if parts else empty_frame(CHUNKS)
    texts, hashes = chunks["content"].to_list(), chunks["content_hash"].to_list()
    terms_of_rows = tokens_of(texts, hashes, kept)
    terms, postings = build_bm25(
        texts, params, groups=chunks["chunk_level"].to_list(), terms_of_rows=terms_of_rows
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
    return tables, settings, terms_by_hash(hashes, terms_of_rows)
