"""Citation edges of a partitioned build: resolved within each part, and across parts by a merge
that reads a table of references rather than the parts' chunks.

A part reads its paragraphs' citations and resolves each one whose candidate documents are all
in the part, exactly as a one-process build would (the same resolver over the same rows, row
numbers shifted by the same amount). A citation that may mean a document of another part is
kept PENDING with everything resolving it needs. The merge then builds a resolver over the
units (id, document, level, reference, global row) of the documents pending citations may mean
and of the citing documents (their own units come first among a citation's candidates),
resolves them, and turns every part's citations into edges in global row order, so the edges
table is the one a one-process build writes. That table of references is what grows with a
corpus whose parts cite each other (docs/scaling.md, 100x).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import polars as pl

from lexkb.core.text.citations import Citation, Parsed
from transforms import edges as graph

CITATIONS_FILE = "citations.parquet"
UNITS_FILE = "units.parquet"
RESOLVED, DROPPED, PENDING = "resolved", "dropped", "pending"

CITATIONS = pl.Schema(
    {
        "row": pl.Int64,
        "chunk_id": pl.String,
        "doc_id": pl.String,
        "ref": pl.String,
        "relation": pl.String,
        "text": pl.String,
        "start": pl.Int64,
        "end": pl.Int64,
        "kind": pl.String,
        "address": pl.List(pl.String),
        "document": pl.String,
        "relative": pl.Boolean,
        "anchor": pl.String,
        "outside": pl.Boolean,
        "fallbacks": pl.List(pl.String),
        "status": pl.String,
        "target_chunk_id": pl.String,
        "target_document_id": pl.String,
        "match": pl.String,
    }
)


def part_citations(
    chunks: pl.DataFrame,
    documents: pl.DataFrame,
    aliases: Mapping[str, str],
    readings: dict[str, Parsed] | None = None,
) -> pl.DataFrame:
    """A part's citations (CITATIONS, rows local to the part) resolved where every document
    they may mean is among the part's own, PENDING otherwise. `documents`: every document of
    the build (its names make the citation grammar); `chunks`: the part's."""
    names = graph.name_table(graph.document_name_pairs(documents, aliases))
    present = set(chunks["document_id"].unique())
    resolver = graph.Resolver(chunks)
    rows = []
    for item in graph.citations_in(chunks, documents, aliases, readings):
        candidates = graph.candidate_documents(item.citation, item.doc_id, names, item.fallbacks)
        if candidates is not None and not present.issuperset(candidates):
            rows.append(_row(item, PENDING, None))
            continue
        resolution = resolver.resolve(
            item.citation, item.row, item.doc_id, item.ref, names, item.fallbacks
        )
        rows.append(_row(item, RESOLVED if resolution else DROPPED, resolution))
    return pl.DataFrame(rows, schema=CITATIONS, orient="row")


def units(chunks: pl.DataFrame) -> pl.DataFrame:
    """What a citation can land on, by local row: the part's side of the table of references."""
    return chunks.select(
        pl.int_range(pl.len(), dtype=pl.Int64).alias("row"),
        "chunk_id",
        "document_id",
        "chunk_level",
        "ref",
    )


def merged_edges(
    parts: Sequence[tuple[Path, int]], documents: pl.DataFrame, aliases: Mapping[str, str]
) -> tuple[pl.DataFrame, int]:
    """The edges table of the whole build from its parts (each a directory holding
    CITATIONS_FILE and UNITS_FILE, and the global row of its first chunk), and how many
    citations crossed parts. Holds the pending citations, the units of the documents they
    may mean, and the edges; never every part's chunks."""
    names = graph.name_table(graph.document_name_pairs(documents, aliases))
    pending = pl.concat(
        [
            pl.scan_parquet(directory / CITATIONS_FILE)
            .filter(pl.col("status") == PENDING)
            .with_columns(pl.col("row") + offset)
            for directory, offset in parts
        ]
    ).collect()
    wanted: set[str] = set(pending["doc_id"])
    for item in _cited(pending):
        wanted.update(
            graph.candidate_documents(item.citation, item.doc_id, names, item.fallbacks) or ()
        )
    resolver = graph.Resolver(
        pl.concat(
            [
                pl.scan_parquet(directory / UNITS_FILE)
                .filter(pl.col("document_id").is_in(sorted(wanted)))
                .with_columns(pl.col("row") + offset)
                for directory, offset in parts
            ]
        ).collect()
    )

    def resolved() -> Iterator[tuple[graph.CitedIn, graph.Resolution]]:
        for directory, offset in parts:
            frame = pl.read_parquet(directory / CITATIONS_FILE).with_columns(pl.col("row") + offset)
            for item, row in zip(_cited(frame), frame.iter_rows(named=True), strict=True):
                if row["status"] == PENDING:
                    yield (
                        item,
                        resolver.resolve(
                            item.citation, item.row, item.doc_id, item.ref, names, item.fallbacks
                        ),
                    )
                elif row["status"] == RESOLVED:
                    yield item, (row["target_chunk_id"], row["target_document_id"], row["match"])

    return graph.edge_frame(resolved()), pending.height


def _row(item: graph.CitedIn, status: str, resolution: graph.Resolution) -> tuple:
    citation = item.citation
    target = resolution or (None, None, None)
    return (
        item.row,
        item.chunk_id,
        item.doc_id,
        item.ref,
        item.relation,
        citation.text,
        citation.start,
        citation.end,
        citation.kind,
        list(citation.address),
        citation.document,
        citation.relative,
        citation.anchor,
        citation.outside,
        item.fallbacks,
        status,
        *target,
    )


def _cited(frame: pl.DataFrame) -> Iterator[graph.CitedIn]:
    for row in frame.iter_rows(named=True):
        citation = Citation(
            row["text"],
            row["start"],
            row["end"],
            row["kind"],
            tuple(row["address"]),
            row["document"],
            row["relative"],
            row["anchor"],
            row["outside"],
        )
        yield graph.CitedIn(
            row["row"],
            row["chunk_id"],
            row["doc_id"],
            row["ref"],
            citation,
            list(row["fallbacks"]),
            row["relation"],
        )
