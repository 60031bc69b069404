"""One document's structure: (documents, sections, chunks) from its element frame.

Raw elements -> section tree and paragraph chunks that keep the document's own numbering.
unstructured gives a flat list of titles, list items and text in reading order. Citations need the
document's own units back ("Article 6(1)", "18.8.2", "A12", "§ 512(c)"), so structure comes from
numbering patterns, not from font sizes or element categories (which an offline run without a
tagger cannot trust). A paragraph chunk is one numbered unit with its points and subparagraphs.
Passage files and label-exported outlines keep the labels they carry (transforms.reading.labelled); every
other document loses its page furniture and is walked line by line by the builder.
"""

from __future__ import annotations

import re

import polars as pl

from lexkb.core.text.governing_law import governing_law
from transforms.reading.labelled import outline_units, structure_labelled, structure_passages
from transforms.reading.pdf_text import MARGIN_NUMBER
from transforms.reading.source_files import SourceFile
from transforms.structure import contracts as contract
from transforms.structure.builder import Builder
from transforms.structure.chunks import Paragraph, chunk_rows, split_notes
from transforms.structure.designations import printed_designations
from transforms.structure.document_control import control_metadata
from transforms.structure.furniture import clean, drop_running_text
from transforms.structure.ids import document_id
from transforms.structure.numbering.regulation import ENACTING_FORMULA, article_heading
from transforms.structure.numbering.standard import DESIGNATION
from transforms.structure.titles import named
from transforms.structure.tree import document_row, is_title_like, section_row, tables

# How many of a document's first elements its cover is looked for in.
COVER_LINES = 12
# Lines of a standard's cover that are not its name: a date ("June 2023"), the series
# ("IFRS Sustainability Disclosure Standard") and its board.
_NOT_A_NAME = re.compile(
    r"^(?:(?:issued\s+)?(?:[a-z]+\s+)?\d{4}|.*\bstandards?|.*\bboard)$", re.IGNORECASE
)


def document_profile(
    texts: list[str], document_type: str | None = None, margin_numbers: bool = False
) -> str:
    """contract, eu (an act with articles and recitals) or plain. A document that numbers its
    paragraphs in the margin is a standard, however much it speaks of leases and parties."""
    if (document_type or "").casefold() == "contract":
        return "contract"
    articles = {match.group(1) for t in texts if (match := article_heading(t))}
    # an act built of articles numbers them from 1; one "Article 14." line is a quotation
    built_of_articles = "1" in articles and len(articles) >= 2
    if built_of_articles and any(ENACTING_FORMULA.match(t) for t in texts):
        return "eu"
    if not margin_numbers and contract.is_contract(texts):
        return "contract"
    return "eu" if built_of_articles else "plain"


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
    # a DOCX's Word list numbers: each numbered row's ref in its list and its level
    listed = [
        (ref, depth) if ref is not None and depth is not None else None
        for ref, depth in zip(body["ref"].to_list(), body["depth"].to_list(), strict=True)
    ]
    for text, category, page, block, number in zip(
        texts, body["category"].to_list(), body["page"].to_list(), blocks, listed, strict=True
    ):
        for line in _split_lines(text):
            builder.feed(line, category, page, block, number)
            number = None  # the number is the element's first line's
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
        named(control.pop("title", None))
        or _designated(named(builder.title), elements)
        or named(builder.title)
        or document_key
    )
    extra: dict = {"aliases": printed_designations(elements["text"].to_list()), **control}
    if profile == "contract":
        title = contract.contract_title(texts) or title
        found = contract.preamble(texts)
        extra |= {
            "document_type": "contract",
            "parties": found["parties"],
            "governing_law": governing_law(texts),
            "renewal_term": contract.renewal_term(texts),
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
    """A standard's title as its family cites it, designation first ("IFRS 16 Leases", "IFRS S2
    Climate-related Disclosures"): the designation its cover prints on a line of its own (often
    dropped as the running head that repeats it), then its name. The name is the builder's
    title, unless that is the designation itself or a line printed above it (a date, the
    series' name); then it is the first title-like line under the designation, its layout
    paragraph whole, that is not a date or the series' name."""
    cover = _cover(elements)
    at = next((i for i, (line, _) in enumerate(cover) if DESIGNATION.match(line)), None)
    if at is None:
        return None
    designation = cover[at][0]
    if title and title.startswith(designation) and title != designation:
        return None
    if title and title != designation and not any(title.startswith(c) for c, _ in cover[:at]):
        return f"{designation} {title}"
    for index, (line, block) in enumerate(cover[at + 1 :], start=at + 1):
        if is_title_like(line) and not _NOT_A_NAME.match(line):
            lines = [line]
            for more, more_block in cover[index + 1 :]:
                if block is None or more_block != block:
                    break
                lines.append(more)
            return f"{designation} {' '.join(lines)}"
    return None


def _cover(elements: pl.DataFrame) -> list[tuple[str, int | None]]:
    """The lines of the document's first page, as far as a cover goes, with their layout
    paragraph; trade marks ("IFRS®") are no part of a name."""
    rows = elements.head(COVER_LINES)
    pages = rows["page"].to_list()
    blocks = rows["block"].to_list() if "block" in rows.columns else [None] * rows.height
    cover = []
    for text, page, block in zip(rows["text"].to_list(), pages, blocks, strict=True):
        if page != pages[0]:
            break
        for line in _split_lines(clean(text or "").replace("®", " ").replace("™", " ")):
            cover.append((" ".join(line.split()), block))
    return cover


def _split_lines(text: str) -> list[str]:
    """Lines of an element; wrapped lines are joined again by the builder's sentence logic."""
    return [line.strip() for line in text.split("\n") if line.strip()]
