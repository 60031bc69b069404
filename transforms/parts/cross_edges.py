"""Citation edges of a partitioned build: resolved within each part, and across parts by a merge
that reads a table of references rather than the parts' chunks, one part at a time.

A part reads its paragraphs' citations and resolves each one whose candidate documents are all
in the part, exactly as a one-process build would (the same resolver over the same rows, row
numbers shifted by the same amount). A citation that may mean a document of another part is
kept PENDING with everything resolving it needs. The merge then goes through the parts in row
order. For a part's pending citations it joins a resolver over the units (id, document, level,
reference, global row) of the citing documents and of the documents the citations may mean,
read from the parts that hold them: Resolver.resolve looks up a citation in those documents'
own units alone (the citing one's numbering depth included), so it resolves as one over every
part's units would. It then turns the part's citations into edges; a chunk's citations are all
in its part, so the edges, part after part, are the table a one-process build writes.

What the merge holds for citations is set by a part, not by the corpus: one part's citations,
the units of the documents they may mean, and the resolvers of the documents used last
(KEPT_UNITS), so that documents every part cites are read and indexed once. The edges table
itself grows with the corpus (docs/scaling.md, 100x).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import polars as pl

from lexkb.core.text.citations import Citation, Parsed
from transforms.edges import resolve
from transforms.parts.plan import MAX_CHUNKS

CITATIONS_FILE = "citations.parquet"
UNITS_FILE = "units.parquet"
RESOLVED, DROPPED, PENDING = "resolved", "dropped", "pending"
# Units whose documents' resolvers the merge keeps between parts (_References): two parts'
# worth, tens of MB.
KEPT_UNITS = 2 * MAX_CHUNKS

_CITATION_COLUMNS: dict[str, pl.DataType | type[pl.DataType]] = {
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
CITATIONS = pl.Schema(_CITATION_COLUMNS)
UNITS = pl.Schema(
    {
        "row": pl.Int64,
        "chunk_id": pl.String,
        "document_id": pl.String,
        "chunk_level": pl.String,
        "ref": pl.String,
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
    names = resolve.name_table(resolve.document_name_pairs(documents, aliases))
    present = set(chunks["document_id"].unique())
    resolver = resolve.Resolver(chunks)
    rows = []
    for item in resolve.citations_in(chunks, documents, aliases, readings):
        candidates = resolve.candidate_documents(item.citation, item.doc_id, names, item.fallbacks)
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
        pl.int_range(pl.len(), dtype=pl.Int64).alias("row"), *UNITS.names()[1:]
    ).cast(UNITS)


def merged_edges(
    parts: Sequence[tuple[Path, int]],
    documents: pl.DataFrame,
    aliases: Mapping[str, str],
    kept_units: int = KEPT_UNITS,
) -> tuple[pl.DataFrame, int]:
    """The edges table of the whole build from its parts (each a directory holding
    CITATIONS_FILE and UNITS_FILE, and the global row of its first chunk), and how many
    citations crossed parts. Goes one part at a time, in row order, holding that part's
    citations, a resolver over the documents its pending ones may mean, the resolvers of
    single documents kept for the next parts (at most `kept_units` units) and the edges;
    never another part's citations or every part's units."""
    names = resolve.name_table(resolve.document_name_pairs(documents, aliases))
    references = _References(parts, kept_units)
    frames: list[pl.DataFrame] = []
    crossing = 0
    for directory, offset in parts:
        frame = pl.read_parquet(directory / CITATIONS_FILE).with_columns(pl.col("row") + offset)
        outcomes = frame.select("status", "target_chunk_id", "target_document_id", "match").rows()
        cited = list(zip(_cited(frame), outcomes, strict=True))
        pending = [item for item, (status, *_) in cited if status == PENDING]
        crossing += len(pending)
        resolver = references.resolver(_meant(pending, names))
        frames.append(resolve.edge_frame(_resolved(cited, resolver, names)))
    return (pl.concat(frames) if frames else resolve.edge_frame([])), crossing


def _resolved(
    cited: Sequence[tuple[resolve.CitedIn, tuple]],
    resolver: resolve.Resolver,
    names: Mapping[str, list[str]],
) -> Iterator[tuple[resolve.CitedIn, resolve.Resolution]]:
    """A part's citations with their resolutions, in row order: the part's own, and the
    resolver's for the pending ones. Its edges alone are what one pass over every part's
    citations makes of them, since edge_frame's duplicates are a chunk's, and a chunk's
    citations are all in its part."""
    for item, (status, target_id, target_doc, match) in cited:
        if status == PENDING:
            resolution = resolver.resolve(
                item.citation, item.row, item.doc_id, item.ref, names, item.fallbacks
            )
            yield item, resolution
        elif status == RESOLVED:
            yield item, (target_id, target_doc, match)


def _meant(pending: Iterable[resolve.CitedIn], names: Mapping[str, list[str]]) -> set[str]:
    """Every document whose units resolving `pending` may look at: the candidates of each
    citation (Resolver.resolve looks up units, and numbering depth, of no other document) and
    the citing one."""
    meant: set[str] = set()
    for item in pending:
        meant.add(item.doc_id)
        meant.update(
            resolve.candidate_documents(item.citation, item.doc_id, names, item.fallbacks) or ()
        )
    return meant


class _References:
    """The merge's table of references, a document at a time: a resolver over each document's
    units (UNITS_FILE, global rows), read from the part that holds it (a document is in one
    part). The last used are kept while they hold at most `kept` units in all, since every
    part's citations tend to mean the same few documents, whose units would otherwise be read
    and indexed once per citing part."""

    def __init__(self, parts: Sequence[tuple[Path, int]], kept: int) -> None:
        self._parts, self._kept_units = parts, kept
        self._holder = {
            document: n
            for n, (directory, _) in enumerate(parts)
            for document in pl.read_parquet(directory / UNITS_FILE, columns=["document_id"])[
                "document_id"
            ].unique()
        }
        self._kept: OrderedDict[str, tuple[resolve.Resolver, int]] = OrderedDict()
        self._held = 0

    def resolver(self, documents: Iterable[str]) -> resolve.Resolver:
        """One resolver over the units of `documents`: for citations that may mean none but
        these, the same as one over every part's units."""
        wanted = sorted(d for d in documents if d in self._holder)
        fresh = self._read([d for d in wanted if d not in self._kept])
        for document, (single, size) in fresh.items():
            self._kept[document] = (single, size)
            self._held += size
        joined = resolve.Resolver(pl.DataFrame(schema=UNITS))
        for document in wanted:
            joined.add(self._kept[document][0])
            if document not in fresh:
                # Used again: kept longer than those read for this part alone.
                self._kept.move_to_end(document)
        while self._held > self._kept_units:
            _, (_, size) = self._kept.popitem(last=False)
            self._held -= size
        return joined

    def _read(self, documents: Iterable[str]) -> dict[str, tuple[resolve.Resolver, int]]:
        """A resolver over each document's units and their number, one read of each part."""
        by_part: dict[int, list[str]] = {}
        for document in documents:
            by_part.setdefault(self._holder[document], []).append(document)
        singles: dict[str, tuple[resolve.Resolver, int]] = {}
        for n, wanted in by_part.items():
            directory, offset = self._parts[n]
            units = (
                pl.scan_parquet(directory / UNITS_FILE)
                .filter(pl.col("document_id").is_in(wanted))
                .with_columns(pl.col("row") + offset)
                .collect()
            )
            for (document,), rows in units.partition_by(
                "document_id", as_dict=True, maintain_order=True
            ).items():
                singles[document] = (resolve.Resolver(rows), rows.height)
        return singles


def _row(item: resolve.CitedIn, status: str, resolution: resolve.Resolution) -> tuple:
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


def _cited(frame: pl.DataFrame) -> Iterator[resolve.CitedIn]:
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
        yield resolve.CitedIn(
            row["row"],
            row["chunk_id"],
            row["doc_id"],
            row["ref"],
            citation,
            list(row["fallbacks"]),
            row["relation"],
        )
