"""The merge's citation edges (transforms.parts.cross_edges): parts written to disk as the part step
writes them, merged one part at a time, give the edges of one resolver over every chunk
(transforms.edges.resolve.build_edges), for citations that land in earlier and later parts, on a
document a name shares with another, on the nearest of two units of the same number, and on
an enclosing unit."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from transforms.edges.resolve import build_edges
from transforms.parts import cross_edges
from transforms.reading import metadata

# (chunk id, document, level, ref, text) by part, in row order.
PARTS = [
    [  # the rulebook, with two paragraphs numbered 3.1.1
        ("b0", "book", "section", "4", "Chapter 4"),
        ("b1", "book", "paragraph", "3.1.1", "A firm must reconcile client money daily."),
        ("b2", "book", "paragraph", "3.1.2", "A firm must report differences under Rule 3.1.1."),
        ("b3", "book", "paragraph", "3.1.1", "A firm must reconcile again."),
        ("b4", "book", "paragraph", "4.1", "Records are kept."),
    ],
    [  # a note numbered 3.1, 3.2, ... that refers to the rulebook
        ("g0", "note", "paragraph", "3.1", "Client money must be reconciled under Rule 3.1.1."),
        ("g1", "note", "paragraph", "3.2", "See Rule 4.1.5 of the Lexkb Rulebook and LRB 9.9."),
        (
            "g2",
            "note",
            "paragraph",
            "3.3",
            "Under Rule 2.2 of the Rules, and Rule 3.1.2 of the Rules.",
        ),
    ],
    [  # a second book that goes by "the Rules" too, and an FAQ
        ("s0", "second", "paragraph", "2.2", "The second book's 2.2."),
        ("s1", "second", "paragraph", "2.3", "See Rule 3.1.1 of the Rules and GN-7 3.2."),
        ("f0", "faq", "paragraph", "Q1", "Rule 3.1.2 of the Lexkb Rulebook and GN-7 3.1 apply."),
    ],
]


def _documents() -> pl.DataFrame:
    return metadata.apply(
        pl.DataFrame(
            {
                "document_id": ["book", "note", "second", "faq"],
                "document_key": ["rulebook", "gn-7", "second-book", "faq"],
                "source_name": ["rulebook.txt", "gn-7.html", "second.txt", "faq.md"],
                "title": ["Lexkb Rulebook", "Guidance Note GN-7", "Second Book", "FAQ"],
            }
        ),
        metadata.Catalog(
            documents={
                "gn-7": metadata.DocumentMetadata(refers_to=("rulebook",)),
                "rulebook": metadata.DocumentMetadata(short_name="LRB", aliases=("the Rules",)),
                "second-book": metadata.DocumentMetadata(aliases=("the Rules",)),
            }
        ),
    )


def _chunks(rows: list[tuple[str, ...]]) -> pl.DataFrame:
    return pl.DataFrame(
        rows, schema=["chunk_id", "document_id", "chunk_level", "ref", "content"], orient="row"
    )


@pytest.mark.parametrize("kept", [0, cross_edges.KEPT_UNITS])
def test_merged_edges_are_one_resolver_over_every_chunk(tmp_path: Path, kept: int) -> None:
    documents = _documents()
    one = build_edges(_chunks([row for part in PARTS for row in part]), documents)
    parts, start, pending = [], 0, 0
    for n, rows in enumerate(PARTS):
        chunks, folder = _chunks(rows), tmp_path / f"p{n}"
        folder.mkdir()
        citations = cross_edges.part_citations(chunks, documents, {})
        citations.write_parquet(folder / cross_edges.CITATIONS_FILE)
        cross_edges.units(chunks).write_parquet(folder / cross_edges.UNITS_FILE)
        parts.append((folder, start))
        start += chunks.height
        pending += int((citations["status"] == cross_edges.PENDING).sum())

    edges, crossing = cross_edges.merged_edges(parts, documents, {}, kept)

    assert edges.equals(one)
    assert crossing == pending > 0
    # What the parts are for: an unqualified rule found through refers_to in an earlier part,
    # on the nearer of two 3.1.1s (from a later part too); an enclosing unit; a shared name's
    # second document, in a later part; a document in a middle part.
    found = set(edges.select("source_chunk_id", "target_chunk_id", "match").rows())
    assert {
        ("g0", "b3", "exact"),
        ("g1", "b4", "enclosing"),
        ("g2", "s0", "exact"),
        ("s1", "b3", "exact"),
        ("f0", "g0", "exact"),
    } <= found
