"""Citations read from each paragraph, kept between builds (ROOT/work/citations.json).

Reading citations scans every word of every paragraph with a grammar that holds the names of all
the index's documents: about 5 s of a rebuild of ObliQA, where the rest of resolving its edges
takes under 1 s. What a paragraph cites depends only on its text and that grammar, so the
readings are kept by the paragraph's content hash under a stamp of the grammar (the document
names and lexkb's code). A rebuild after one document changed reads that document's changed
paragraphs again; a new or renamed document changes the grammar and every paragraph is read again.
Only the readings of the current paragraphs are written back, so the file never outgrows the index.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

import polars as pl

from lexkb.core.text.citations import Citation, Parsed
from transforms.edges import resolve
from transforms.publishing.workdir import code_version, write_atomically

FILE = "citations.json"


def grammar_stamp(document_names: Iterable[str]) -> str:
    names = "\0".join(sorted(set(document_names)))
    return hashlib.sha256(f"{code_version()}\0{names}".encode()).hexdigest()


def load(work: Path, stamp: str) -> dict[str, Parsed]:
    """The readings kept under `stamp`; none when the file is missing, unreadable or stamped
    for another grammar."""
    try:
        kept = json.loads((work / FILE).read_text(encoding="utf-8"))
        if kept.get("stamp") != stamp:
            return {}
        return {key: _parsed(value) for key, value in kept["parsed"].items()}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def save(work: Path, stamp: str, parsed: dict[str, Parsed]) -> None:
    """Write the readings atomically: a build that dies half-way leaves the old file whole."""
    body = {"stamp": stamp, "parsed": {key: _plain(value) for key, value in parsed.items()}}
    text = json.dumps(body, separators=(",", ":"))
    write_atomically(work / FILE, lambda staged: staged.write_text(text, encoding="utf-8"))


def build_edges(
    work: Path, chunks: pl.DataFrame, documents: pl.DataFrame, aliases: dict[str, str]
) -> tuple[pl.DataFrame, int, int]:
    """transforms.edges.resolve.build_edges, reading only the paragraphs whose readings under this
    grammar are not kept in `work`, then keeping the current paragraphs' readings: the edges,
    how many paragraph texts were read, and how many there are."""
    stamp = grammar_stamp(resolve.grammar_names(documents, aliases))
    readings = load(work, stamp)
    kept = set(readings)
    edges = resolve.build_edges(chunks, documents, aliases, readings)
    save(work, stamp, readings)
    return edges, len(readings.keys() - kept), len(readings)


def _plain(parsed: Parsed) -> list:
    citations = [
        [
            c.text,
            c.start,
            c.end,
            c.kind,
            list(c.address),
            c.document,
            c.relative,
            c.anchor,
            c.outside,
        ]
        for c in parsed.citations
    ]
    return [citations, [list(named) for named in parsed.documents]]


def _parsed(value: list) -> Parsed:
    citations, documents = value
    return Parsed(
        [
            Citation(text, start, end, kind, tuple(address), document, relative, anchor, outside)
            for text, start, end, kind, address, document, relative, anchor, outside in citations
        ],
        [(start, name) for start, name in documents],
    )
