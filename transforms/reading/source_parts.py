"""Each source's part of the index (its documents, sections and chunks), or why it is left out.

A source's part is recovered from its parsed elements one partition at a time (`recover`), and
the index is built from every source's part at once (`gather`). Either way a bad file is
quarantined with its reason, never a failure of the build: its part is replaced by a record in
ROOT/work (transforms.publishing.workdir) that the snapshot's quarantine table reports.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import polars as pl

from transforms.publishing.workdir import Part, WorkDir
from transforms.reading.legal_xml.xml_rows import is_outline
from transforms.reading.quarantine import SourceError, with_copies
from transforms.reading.source_files import SourceFile
from transforms.structure import structure_document, structure_legal_xml


class PartMissing(LookupError):
    """A source that is neither quarantined nor structured: its `documents` partition has not
    been through the structure step yet."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def recover(source: SourceFile, elements: Path) -> Part:
    """(documents, sections, chunks) of `source` from its parsed elements. A file whose structure
    cannot be recovered, or that holds no paragraph, raises SourceError: a structure bug on one
    odd file must not stop the others, and a file that parses to nothing is a bad file, reported
    like one, not an empty document in the index."""
    try:
        # Legal markup (XML, the US Code's XHTML) arrives structured; the rest goes to the builder.
        frame = pl.read_parquet(elements)
        structure = structure_legal_xml if is_outline(frame) else structure_document
        parts = structure(source, frame)
    except Exception as exc:
        raise SourceError(
            f"{type(exc).__name__} while recovering its structure: {exc}"[:400],
            stage="structure",
            kind=type(exc).__name__,
        ) from exc
    if not (parts[2]["chunk_level"] == "paragraph").any():
        raise SourceError(
            "no paragraph of text could be read from this file",
            stage="structure",
            kind="no_text",
        )
    return parts


def each_part(
    work: WorkDir, sources: list[SourceFile]
) -> Iterator[tuple[SourceFile, Part | list[dict]]]:
    """Each source in order with its part, read one at a time, or with the quarantine records
    of a source that was quarantined (one for each byte-identical copy as well). Raises
    PartMissing for a source with neither."""
    for source in sources:
        record = work.error_record(source.key)
        if record is not None:
            yield source, with_copies(record, source.key, source.duplicates)
            continue
        part = work.read_part(source.key)
        if part is None:
            raise PartMissing(source.key)
        yield source, part


def gather(work: WorkDir, sources: list[SourceFile]) -> tuple[list[Part], list[dict]]:
    """The parts of the sources that were not quarantined, in the sources' order, and the
    quarantine records of those that were (`each_part`)."""
    parts, quarantined = [], []
    for _, found in each_part(work, sources):
        if isinstance(found, list):
            quarantined += found
        else:
            parts.append(found)
    return parts, quarantined
