"""One document's structure: (documents, sections, chunks) from its element frame.

Raw elements -> section tree and paragraph chunks that keep the document's own numbering.
unstructured gives a flat list of titles, list items and text in reading order. Citations need the
document's own units back ("Article 6(1)", "18.8.2", "A12", "§ 512(c)"), so structure comes from
numbering patterns, not from font sizes or element categories (which an offline run without a
tagger cannot trust). A paragraph chunk is one numbered unit with its points and subparagraphs.
Passage files and label-exported outlines keep the labels they carry (transforms.labelled); every
other document loses its page furniture and is walked line by line by the builder.
"""

from __future__ import annotations

import polars as pl

from transforms import contracts as contract
from transforms.chunks import Paragraph, chunk_rows, split_notes
from transforms.ids import document_id
from transforms.labelled import outline_units, structure_labelled, structure_passages
from transforms.pdf_text import MARGIN_NUMBER
from transforms.source_files import SourceFile
from transforms.structure.builder import Builder
from transforms.structure.designations import printed_designations
from transforms.structure.document_control import control_metadata
from transforms.structure.furniture import clean, drop_running_text
from transforms.structure.numbering.regulation import article_heading
from transforms.structure.numbering.standard import DESIGNATION
from transforms.tree import document_row, section_row, tables


def document_profile(
    texts: list[str], document_type: str | None = None, margin_numbers: bool = False
) -> str:
    """contract, eu (an act with articles and recitals) or plain. A document that numbers its
    paragraphs in the margin is a standard, however much it speaks of leases and parties."""
    if (document_type or "").casefold() == "contract" or (
        not margin_numbers and contract.is_contract(texts)
    ):
        return "contract"
    articles = {match.group(1) for t in texts if (match := article_heading(t))}
    # an act built of articles numbers them from 1; one "Article 14." line is a quotation
    if "1" in articles and len(articles) >= 2:
        return "eu"
    return "plain"


def structure_document(
    source: SourceFile, elements: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(documents, sections, chunks) for one source file."""
    if source.format == "passages":
        return structure_passages(source, elements)
    document_key = source.document_key
    if (outline := outline_units(elements["text"].to_list())) is not None:
        title, labelled = outline
        return structure_labelled(source, document_key, labelled, title)
    doc_id = document_id(source.key, document_key)
    body = drop_running_text(elements)
    texts = [clean(t) for t in body["text"].to_list()]
    profile = document_profile(texts, margin_numbers=MARGIN_NUMBER in body["category"].to_list())
    paged = body["page"].drop_nulls().n_unique() > 0
    builder = Builder(doc_id, profile, paged)
    blocks = body["block"].to_list() if "block" in body.columns else [None] * body.height
    for text, category, page, block in zip(
        texts, body["category"].to_list(), body["page"].to_list(), blocks, strict=True
    ):
        for line in _split_lines(text):
            builder.feed(line, category, page, block)
    builder.close_unit()
    if profile == "contract":
        builder.number_headings()

    paragraphs = []
    for unit in builder.units:
        text, notes = split_notes("\n".join(unit.lines))
        paragraphs.append(Paragraph(unit.ref, unit.section, unit.page, text, unit.notes + notes))
    chunks = chunk_rows(doc_id, document_key, paragraphs)
    sections = [section_row(s, doc_id) for s in builder.sections]
    pages = elements.select(pl.col("page").max()).item()
    control = control_metadata(elements)
    title = (
        control.pop("title", None)
        or _designated(builder.title, elements)
        or builder.title
        or document_key
    )
    extra: dict = {"aliases": printed_designations(elements["text"].to_list()), **control}
    if profile == "contract":
        title = contract.contract_title(texts) or title
        found = contract.preamble(texts)
        extra |= {
            "document_type": "contract",
            "parties": found["parties"],
            "published": found["agreement_date"],
            "effective": found["effective_date"],
        }
    documents = [
        {
            **document_row(doc_id, document_key, title, source, pages, len(sections), chunks),
            **extra,
        }
    ]
    return tables(documents, sections, chunks)


def _designated(title: str | None, elements: pl.DataFrame) -> str | None:
    """A standard's title with its designation ("IFRS 16 Leases"): the document's first line,
    when it is a designation the title lacks (dropped as the running head that repeats it)."""
    if not title or elements.height == 0:
        return None
    first = clean(elements["text"][0] or "")
    if DESIGNATION.match(first) and not title.startswith(first):
        return f"{first} {title}"
    return None


def _split_lines(text: str) -> list[str]:
    """Lines of an element; wrapped lines are joined again by the builder's sentence logic."""
    return [line.strip() for line in text.split("\n") if line.strip()]
