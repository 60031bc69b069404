"""The section tree and table rows every structuring path shares."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from lexkb.core.store.schema import CHUNKS, DOCUMENTS, SECTIONS, polars_schema
from transforms.reading.source_files import SourceFile
from transforms.structure.quality import extraction_quality


@dataclass
class Section:
    section_id: str
    parent: Section | None
    number: str | None
    title: str
    rank: float
    level: int
    sequence: int
    path: list[str]
    label: str  # how a paragraph ref is qualified inside it ("Article 6"), or "" when it is not
    start_page: int | None
    end_page: int | None
    awaiting_title: bool = False


def reads_as_sentence_part(text: str) -> bool:
    """Ends as a sentence or clause does, or starts in lower case or with a clause's punctuation
    (", point (2), or"): not a heading or title. A colon may lead one ("PART 6" / ": TRANSFER
    SCHEMES")."""
    return text.rstrip().endswith((".", ";", ",", ":")) or text[:1].islower() or text[:1] in ",;.)]"


def is_title_like(text: str) -> bool:
    return len(text) <= 150 and len(text.split()) <= 18 and not reads_as_sentence_part(text)


def tables(
    documents: list[dict],
    sections: list[dict],
    chunks: list[dict],
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    return (
        pl.from_dicts(documents, schema=polars_schema(DOCUMENTS)),
        pl.from_dicts(sections, schema=polars_schema(SECTIONS)),
        pl.from_dicts(chunks, schema=polars_schema(CHUNKS)),
    )


def section_row(section: Section, doc_id: str) -> dict:
    return {
        "section_id": section.section_id,
        "document_id": doc_id,
        "parent_id": section.parent.section_id if section.parent else None,
        "section_number": section.label or section.number,
        "title": section.title,
        "level": section.level,
        "sequence": section.sequence,
        "path": section.path,
        "start_page": section.start_page,
        "end_page": section.end_page,
    }


def document_row(
    doc_id: str,
    key: str,
    title: str,
    source: SourceFile,
    pages: int | None,
    n_sections: int,
    chunks: list[dict],
) -> dict:
    paragraphs = [(c["ref"], c["content"]) for c in chunks if c["chunk_level"] == "paragraph"]
    starts = [c["page"] for c in chunks if c["chunk_level"] == "paragraph"]
    return {
        "document_id": doc_id,
        "document_key": key,
        "title": title,
        "short_name": None,
        "version": None,
        "document_type": None,
        "authority_level": None,
        "author": None,
        "source_url": None,
        "aliases": [],
        "refers_to": [],
        "tags": [],
        "parties": [],
        "governing_law": None,
        "renewal_term": None,
        "duplicate_sources": list(source.duplicates),
        "published": None,
        "effective": None,
        "deprecated": False,
        "format": source.format,
        "source_name": source.key,
        "source_sha256": source.sha256,
        "page_count": pages,
        "section_count": n_sections,
        "chunk_count": len(paragraphs),
        "extraction_quality": extraction_quality(paragraphs, starts)["score"],
    }
