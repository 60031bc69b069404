"""A legal outline's element rows -> its (documents, sections, chunks) tables.

Legal markup (a legal XML dialect, the US Code's XHTML) has already said what every row is
(transforms.reading.legal_xml.xml_rows), so, unlike the text-line builder, nothing is guessed here: a
heading opens a section at its depth (closing those at the same depth or deeper), a unit is a
paragraph chunk of the innermost open section, a footnote goes with the unit before it, and a
section's notes become note chunks under the section's own chunk, never paragraphs.
"""

from __future__ import annotations

import polars as pl

from lexkb.core.vocabulary import ChunkLevel
from transforms.reading.legal_xml.xml_rows import DIVISION, FOOTNOTE, HEADING, NOTE, TITLE, UNIT
from transforms.reading.source_files import SourceFile
from transforms.structure.chunks import Paragraph, chunk_rows
from transforms.structure.ids import chunk_id, document_id, section_id, sha256_text
from transforms.structure.tree import Section, document_row, section_row, tables


def _open(
    doc_id: str, sections: list[Section], stack: list[Section], row: dict, citable: bool
) -> None:
    """Open the section a heading row names, closing those at its depth or deeper."""
    depth = int(row["depth"] or 1)
    while stack and stack[-1].level >= depth:
        stack.pop()
    parent = stack[-1] if stack else None
    path = [*(parent.path if parent else []), row["text"]]
    section = Section(
        section_id(doc_id, len(sections)),
        parent,
        row["ref"],
        row["title"] or "",
        float(depth),
        depth,
        len(sections),
        path,
        row["ref"] if citable else "",
        None,
        None,
    )
    sections.append(section)
    stack.append(section)


def _note_rows(
    doc_id: str, document_key: str, chunks: list[dict], notes: list[tuple[Section | None, str]]
) -> list[dict]:
    """Note chunks after the paragraphs, each under its section's chunk where it has one."""
    section_chunks = {
        c["section_id"]: c["chunk_id"] for c in chunks if c["chunk_level"] == ChunkLevel.SECTION
    }
    rows = []
    for number, (section, text) in enumerate(notes):
        ref = (section.label or None) if section is not None else None
        rows.append(
            {
                "chunk_id": chunk_id(doc_id, f"#note{number}", 1),
                "document_id": doc_id,
                "document_key": document_key,
                "section_id": section.section_id if section else None,
                "chunk_level": ChunkLevel.NOTE.value,
                "chunk_index": len(chunks) + number,
                "ref": ref,
                "content": text,
                "content_hash": sha256_text(text),
                "page": None,
                "section_path": list(section.path) if section else [],
                "heading": section.path[-1] if section else None,
                "parent_chunk_id": section_chunks.get(section.section_id) if section else None,
            }
        )
    return rows


def structure_legal_xml(
    source: SourceFile, elements: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(documents, sections, chunks) of `source` from its outline rows."""
    document_key = source.document_key
    doc_id = document_id(source.key, document_key)
    title = None
    sections: list[Section] = []
    stack: list[Section] = []
    paragraphs: list[Paragraph] = []
    notes: list[tuple[Section | None, str]] = []
    for row in elements.iter_rows(named=True):
        category = row["category"]
        if category == TITLE:
            title = title or row["text"]
        elif category in (HEADING, DIVISION):
            _open(doc_id, sections, stack, row, citable=category == HEADING)
        elif category == UNIT:
            paragraphs.append(
                Paragraph(row["ref"], stack[-1] if stack else None, None, row["text"])
            )
        elif category == FOOTNOTE and paragraphs:
            paragraphs[-1].notes.append(row["text"])
        elif category == NOTE:
            heading = (
                f"{row['title']}\n"
                if row["title"] and not row["text"].startswith(row["title"])
                else ""
            )
            notes.append((stack[-1] if stack else None, f"{heading}{row['text']}"))
    chunks = chunk_rows(doc_id, document_key, paragraphs)
    chunks += _note_rows(doc_id, document_key, chunks, notes)
    documents = [
        document_row(
            doc_id, document_key, title or document_key, source, None, len(sections), chunks
        )
    ]
    return tables(documents, [section_row(s, doc_id) for s in sections], chunks)
