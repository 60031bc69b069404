"""Raw elements -> section tree and paragraph chunks that keep the document's own numbering.

unstructured gives a flat list of titles, list items and text in reading order. Citations need the
document's own units back ("Article 6(1)", "18.8.2", "A12", "§ 512(c)"), so structure comes from
numbering patterns, not from font sizes or element categories (which an offline run without a
tagger cannot trust). A paragraph chunk is one numbered unit with its points and subparagraphs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import polars as pl

from transforms.chunks import Paragraph, chunk_rows, split_notes
from transforms.ids import document_id, section_id
from transforms.labelled import outline_units, structure_labelled, structure_passages
from transforms.sources import SourceFile
from transforms.tree import Section, document_row, is_title_like, section_row, tables

_DIVISION = re.compile(
    r"^(part|title|chapter|section|subsection|sub-section)\s+([ivxlcdm]+|\d+[a-z]?)\b[.:]?\s*(.*)$",
    re.IGNORECASE,
)
_DIVISION_RANK = {"part": 1, "title": 1, "chapter": 2, "section": 3, "subsection": 4}
_ARTICLE = re.compile(r"^(?:article|art\.)\s+(\d+[a-z]?)\s*[.:-]?\s*(.*)$", re.IGNORECASE)
_SECTION_SIGN = re.compile(r"^§+\s*(\d+[a-z]?(?:\.\d+)*)\.?\s*(.*)$")
_DOTTED = re.compile(r"^(\d+(?:\.\d+)+[A-Z]?)\.?\s+(\S.*)$", re.DOTALL)
_NUMBERED = re.compile(r"^(\d{1,3})\.\s+(\S.*)$", re.DOTALL)
_NUMBERED_HEADING = re.compile(r"^(\d{1,3})\s+([A-Z].*)$")
_APPLICATION = re.compile(r"^(A\d{1,3}[A-Z]?)\.?\s+(\S.*)$", re.DOTALL)
_PAREN_NUMBER = re.compile(r"^\((\d{1,3})\)\s+(\S.*)$", re.DOTALL)
_POINT = re.compile(r"^\(([a-z]{1,3}|\d{1,3})\)\s*")
_PAGE_NUMBER = re.compile(r"^(?:page\s*)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?$", re.IGNORECASE)
_BULLET = re.compile(r"(?<!\S)[•▪◦●](?!\S)")
# A recital run into the element before it ("... (Text with EEA relevance) (1) The protection").
_EMBEDDED_RECITAL = re.compile(r"(?<=[.;:)])\s+(?=\((\d{1,3})\)\s+[A-Z])")
_TERMINAL = (".", ";", ":", "!", "?", ")")

ARTICLE_RANK = 5.0
SECTION_SIGN_RANK = 5.0


@dataclass
class Unit:
    ref: str | None
    section: Section | None
    page: int | None
    lines: list[str] = field(default_factory=list)

    def add(self, text: str, join: bool) -> None:
        if join and self.lines:
            previous = self.lines[-1]
            if previous.endswith("-") and text[:1].islower():
                self.lines[-1] = previous[:-1] + text
            else:
                self.lines[-1] = f"{previous} {text}"
        else:
            self.lines.append(text)

    @property
    def open_sentence(self) -> bool:
        """True when the last line stops mid-sentence, e.g. across a page break."""
        return bool(self.lines) and not self.lines[-1].rstrip().endswith(_TERMINAL)


def _is_awaited_title(text: str) -> bool:
    """The line under "Article 89" is its title even when long, unless it reads as a sentence."""
    return (
        len(text) <= 300
        and not text.rstrip().endswith((".", ";", ",", ":"))
        and not text[:1].islower()
    )


def _article_heading(text: str) -> re.Match[str] | None:
    """ "Article 6" or "Article 6 Lawfulness of processing", not a sentence starting "Article 6 ..."."""
    match = _ARTICLE.match(text)
    if match and (not match.group(2) or is_title_like(match.group(2))):
        return match
    return None


def _clean(text: str) -> str:
    text = _BULLET.sub(" ", text.replace("\r", ""))
    return re.sub(r"[ \t\u00a0]+", " ", text).strip()


def drop_running_text(elements: pl.DataFrame) -> pl.DataFrame:
    """Remove page furniture: page numbers and lines repeated at the edges of many pages.

    The fast PDF strategy labels continuation lines at a page top as Header, so the category alone
    would delete real text. Running heads are short, sit among the first or last two elements of
    a page and recur (digits aside) on many pages; headings such as "Article 12" recur too, but
    not at page edges on most pages.
    """
    pages = elements.select(pl.col("page").drop_nulls().n_unique()).item()
    texts = [_clean(t) for t in elements["text"].to_list()]
    keys = [re.sub(r"\d+", "#", t.casefold()) for t in texts]
    page_list = elements["page"].to_list()
    positions: dict[int, list[int]] = {}
    for index, page in enumerate(page_list):
        if page is not None:
            positions.setdefault(page, []).append(index)
    at_edge = [False] * len(texts)
    for indexes in positions.values():
        for index in indexes[:2] + indexes[-2:]:
            at_edge[index] = True
    edge_pages: dict[str, set[int]] = {}
    for index, key in enumerate(keys):
        if at_edge[index] and len(key) <= 120:
            edge_pages.setdefault(key, set()).add(page_list[index])
    threshold = max(2, int(pages * 0.3))
    keep = []
    for index, (text, category) in enumerate(
        zip(texts, elements["category"].to_list(), strict=True)
    ):
        furniture = category in ("PageBreak", "PageNumber") or (
            _PAGE_NUMBER.match(text) is not None
            and (at_edge[index] or category in ("Header", "Footer"))
        )
        repeated = (
            pages >= 2 and at_edge[index] and len(edge_pages.get(keys[index], ())) >= threshold
        )
        keep.append(bool(text) and text != "•" and not furniture and not repeated)
    return elements.filter(pl.Series(keep, dtype=pl.Boolean))


class _Builder:
    """Walks elements in reading order, keeping a stack of open sections and one open unit."""

    def __init__(self, doc_id: str, eu_style: bool) -> None:
        self.doc_id = doc_id
        self.eu_style = eu_style
        self.sections: list[Section] = []
        self.stack: list[Section] = []
        self.units: list[Unit] = []
        self.unit: Unit | None = None
        self.title: str | None = None
        self.seen_division = False
        self.recitals = 0
        self.page: int | None = None

    # sections -----------------------------------------------------------------------------
    def open_section(self, number: str | None, title: str, rank: float, label: str) -> Section:
        while self.stack and self.stack[-1].rank >= rank:
            self.stack.pop()
        parent = self.stack[-1] if self.stack else None
        heading = " ".join(part for part in (label or number, title) if part) or (number or "")
        path = [*(parent.path if parent else []), heading]
        sequence = len(self.sections)
        section = Section(
            section_id=section_id(self.doc_id, sequence),
            parent=parent,
            number=number,
            title=title,
            rank=rank,
            level=len(path),
            sequence=sequence,
            path=path,
            label=label,
            start_page=self.page,
            end_page=self.page,
        )
        self.sections.append(section)
        self.stack.append(section)
        self.unit = None
        return section

    def touch_page(self, page: int | None) -> None:
        if page is None:
            return
        self.page = page
        for section in self.stack:
            section.end_page = page
            if section.start_page is None:
                section.start_page = page

    # units ---------------------------------------------------------------------------------
    def current_section(self) -> Section | None:
        return self.stack[-1] if self.stack else None

    def start_unit(self, ref: str | None, text: str) -> None:
        self.unit = Unit(ref=ref, section=self.current_section(), page=self.page, lines=[text])
        self.units.append(self.unit)

    def continue_unit(self, text: str, point: bool) -> None:
        if self.unit is None:
            section = self.current_section()
            self.start_unit(section.label or section.number if section else None, text)
            return
        self.unit.add(text, join=not point and self.unit.open_sentence)

    def enclosing(self, rank: float) -> Section | None:
        for section in reversed(self.stack):
            if section.rank == rank:
                return section
        return None

    # classification ------------------------------------------------------------------------
    def feed(self, text: str, category: str, page: int | None) -> None:
        self.touch_page(page)
        if self.eu_style and not self.seen_division:
            for match in _EMBEDDED_RECITAL.finditer(text):
                if int(match.group(1)) == self.recitals + 1:
                    self.feed(text[: match.start()], category, page)
                    self.feed(text[match.end() :], category, page)
                    return
        section = self.current_section()
        if section is not None and section.awaiting_title:
            section.awaiting_title = False
            if _is_awaited_title(text) and not self._numbered(text):
                section.title = text
                section.path[-1] = f"{section.path[-1]} {text}"
                return
        if self._heading(text, category):
            return
        if self._paragraph(text):
            return
        if self.title is None and not self.sections and not self.units and is_title_like(text):
            self.title = text
            return
        if (point := _POINT.match(text)) is not None:
            self._point(point.group(1), text)
            return
        if category == "Title" and is_title_like(text) and not self._numbered(text):
            self._generic_heading(text)
            return
        self.continue_unit(text, point=False)

    def _point(self, label: str, text: str) -> None:
        """A lettered point stays inside its paragraph, except directly under a § section,
        where "(a)" is itself the citable unit ("§ 103(a)")."""
        section = self.current_section()
        starts_subsection = (
            section is not None
            and section.label.startswith("§")
            and (
                self.unit is None
                or self.unit.ref is None
                or self.unit.ref.startswith(section.label)
            )
        )
        if starts_subsection:
            self.start_unit(f"{section.label}({label})", text)
        else:
            self.continue_unit(text, point=True)

    def _numbered(self, text: str) -> bool:
        return any(
            pattern.match(text)
            for pattern in (_DIVISION, _ARTICLE, _DOTTED, _NUMBERED, _APPLICATION, _SECTION_SIGN)
        )

    def _heading(self, text: str, category: str) -> bool:
        if match := _DIVISION.match(text):
            kind, number, rest = (
                match.group(1).lower().replace("-", ""),
                match.group(2),
                match.group(3),
            )
            if rest and not is_title_like(rest):
                return False
            word = kind.capitalize()
            number = number.upper() if re.fullmatch(r"[ivxlcdm]+", number, re.I) else number
            section = self.open_section(number, rest, _DIVISION_RANK[kind], f"{word} {number}")
            section.awaiting_title = not rest
            self.seen_division = True
            return True
        if match := _article_heading(text):
            number, rest = match.group(1), match.group(2)
            section = self.open_section(number, rest, ARTICLE_RANK, f"Article {number}")
            section.awaiting_title = not rest
            self.seen_division = True
            return True
        if (match := _SECTION_SIGN.match(text)) and is_title_like(match.group(2) or "X"):
            number, rest = match.group(1), match.group(2)
            section = self.open_section(number, rest, SECTION_SIGN_RANK, f"§ {number}")
            section.awaiting_title = not rest
            return True
        if (match := _DOTTED.match(text)) and is_title_like(match.group(2)):
            number = match.group(1)
            self.open_section(number, match.group(2), 6.0 + number.count("."), number)
            return True
        numbered = _NUMBERED.match(text) or _NUMBERED_HEADING.match(text)
        if (
            numbered
            and is_title_like(numbered.group(2))
            and self.enclosing(ARTICLE_RANK) is None
            and (category == "Title" or numbered.group(2).isupper() or len(numbered.group(2)) < 60)
        ):
            self.open_section(numbered.group(1), numbered.group(2), 6.0, numbered.group(1))
            return True
        return False

    def _generic_heading(self, text: str) -> None:
        numbered = [s for s in self.stack if s.number is not None]
        base = numbered[-1].rank if numbered else 0.0
        self.open_section(None, text, base + 0.5, "")

    def _paragraph(self, text: str) -> bool:
        if match := _DOTTED.match(text):
            self.start_unit(match.group(1), text)
            return True
        if match := _APPLICATION.match(text):
            self.start_unit(match.group(1), text)
            return True
        if match := _NUMBERED.match(text):
            article = self.enclosing(ARTICLE_RANK) or self.enclosing(SECTION_SIGN_RANK)
            number = match.group(1)
            if article is not None:
                self.start_unit(f"{article.label}({number})", text)
            else:
                section = self.current_section()
                prefix = (
                    f"{section.number}."
                    if section and section.number and "." in section.number
                    else ""
                )
                self.start_unit(f"{prefix}{number}" if prefix else number, text)
            return True
        if self.eu_style and not self.seen_division and (match := _PAREN_NUMBER.match(text)):
            self.start_unit(f"Recital {match.group(1)}", text)
            self.recitals += 1
            return True
        return False


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
    texts = [_clean(t) for t in body["text"].to_list()]
    eu_style = any(_article_heading(t) for t in texts)
    builder = _Builder(doc_id, eu_style)
    for text, category, page in zip(
        texts, body["category"].to_list(), body["page"].to_list(), strict=True
    ):
        for line in _split_lines(text):
            builder.feed(line, category, page)

    paragraphs = []
    for unit in builder.units:
        text, notes = split_notes("\n".join(unit.lines))
        paragraphs.append(Paragraph(unit.ref, unit.section, unit.page, text, notes))
    chunks = chunk_rows(doc_id, document_key, paragraphs)
    sections = [section_row(s, doc_id) for s in builder.sections]
    pages = elements.select(pl.col("page").max()).item()
    documents = [
        document_row(
            doc_id,
            document_key,
            builder.title or document_key,
            source,
            pages,
            len(sections),
            chunks,
        )
    ]
    return tables(documents, sections, chunks)


def _split_lines(text: str) -> list[str]:
    """Lines of an element; wrapped lines are joined again by the builder's sentence logic."""
    return [line.strip() for line in text.split("\n") if line.strip()]
