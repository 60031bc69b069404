"""Per-source parts -> the snapshot's tables, in a fixed order so rebuilds are identical."""

from __future__ import annotations

import polars as pl

from lexkb.core.store.schema import CHUNKS, DOCUMENTS, SECTIONS, empty_frame
from transforms.indexing.bm25 import BM25Params, build_bm25, terms_by_hash, tokens_of
from transforms.publishing.workdir import Part, WorkDir
from transforms.reading import metadata
from transforms.reading.source_files import SourceFile
from transforms.structure import document_keys, inferred


def assemble(
    parts: list[tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]],
    catalog: metadata.Catalog | None = None,
    params: BM25Params | None = None,
    kept: pl.DataFrame | None = None,
) -> tuple[dict[str, pl.DataFrame], dict, pl.DataFrame]:
    """Concatenate (documents, sections, chunks) parts in the given order, fill in what the
    documents state of themselves and the catalog's metadata, make their keys readable, and
    score BM25: the tables, their settings, and the chunks' terms by
    content hash (pass them as `kept` next time, and unchanged chunks are not tokenized again).

    The row order of chunks.parquet is the `chunk_row` that BM25 postings point at.
    """
    params = params or BM25Params()
    catalog = catalog or metadata.Catalog()
    documents = pl.concat([p[0] for p in parts]) if parts else empty_frame(DOCUMENTS)
    sections = pl.concat([p[1] for p in parts]) if parts else empty_frame(SECTIONS)
    chunks = pl.concat([p[2] for p in parts]) if parts else empty_frame(CHUNKS)
    # The catalog's metadata, what the documents state of themselves where it says nothing
    # (read with the catalog's titles), then readable keys.
    documents = inferred.infer(metadata.apply(documents, catalog), chunks)
    documents, chunks, aliases = document_keys.readable(documents, chunks, catalog.aliases)
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
        "aliases": dict(sorted(aliases.items())),
    }
    return tables, settings, terms_by_hash(hashes, terms_of_rows)


def assemble_reusing_tokens(
    work: WorkDir,
    parts: list[Part],
    catalog: metadata.Catalog,
) -> tuple[dict[str, pl.DataFrame], dict, int]:
    """`assemble`, tokenizing only the texts whose terms the last build did not keep in `work`,
    then keeping this build's terms for the next: the tables, their settings, and how many
    texts were tokenized."""
    kept = work.kept_tokens()
    tables, settings, tokens = assemble(parts, catalog, kept=kept)
    work.keep_tokens(tokens)
    tokenized = (
        tokens.height if kept is None else tokens.join(kept, on="content_hash", how="anti").height
    )
    return tables, settings, tokenized


def with_duplicate_sources(documents: pl.DataFrame, sources: list[SourceFile]) -> pl.DataFrame:
    """`documents` with `duplicate_sources`, the other names under which each source's bytes
    were found, as this scan found them: a source's part is reused while its own bytes are
    unchanged (transforms.publishing.workdir), even as copies of it come and go."""
    duplicates = {s.key: list(s.duplicates) for s in sources}
    return documents.with_columns(
        pl.col("source_name")
        .replace_strict(duplicates, default=[], return_dtype=pl.List(pl.String))
        .alias("duplicate_sources")
    )
