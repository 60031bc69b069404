"""Raw elements -> section tree and paragraph chunks that keep the document's own numbering.

unstructured gives a flat list of titles, list items and text in reading order. Citations need the
document's own units back ("Article 6(1)", "18.8.2", "A12", "§ 512(c)"), so structure comes from
numbering patterns, not from font sizes or element categories (which an offline run without a
tagger cannot trust). A paragraph chunk is one numbered unit with its points and subparagraphs.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import polars as pl

from transforms import contracts as contract
from transforms.chunks import Paragraph, chunk_rows, split_notes, split_parts
from transforms.ids import document_id, section_id
from transforms.labelled import outline_units, structure_labelled, structure_passages
from transforms.source_files import SourceFile
from transforms.tree import (
    Section,
    document_row,
    is_title_like,
    reads_as_sentence_part,
    section_row,
    tables,
)

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
_PAGE_NUMBER = re.compile(
    r"^[-–(\[]?\s*(?:page\s*)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?\s*[-–)\]]?$", re.IGNORECASE
)
# A page number that says what it is ("-10-", "- 4 -", "PAGE 3") is furniture wherever it
# stands: pages printed two to a sheet carry theirs mid-sheet. A bare number beside one ("11"
# above "-10-") is the sheet's own.
_MARKED_PAGE_NUMBER = re.compile(
    r"^(?:[-–—]\s*\d{1,4}\s*[-–—]|page\s+\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?)$", re.IGNORECASE
)
_BARE_NUMBER = re.compile(r"^\d{1,4}$")
# Bare numbers counting on by one across the pages, at most two a page, are page numbers
# wherever they stand, from this many on.
PAGE_RUN = 3
# An unnumbered heading over a contract's recitals, which the first numbered clause closes.
RECITALS_HEADING = re.compile(
    r"^(?:recitals?|w\s?i\s?t\s?n\s?e\s?s\s?s\s?e\s?t\s?h|background|preamble"
    r"|preliminary statements?)\W*$",
    re.IGNORECASE,
)
# A full stop after a word, then a capitalised word in lower case: one sentence ends, another
# starts. Headings hold none.
_SENTENCE_END = re.compile(r"[A-Za-z]{2}\.\s+[A-Z][a-z]")
# A run-in heading: its words up to a full stop, then a capitalised word opening the clause.
_RUN_IN = re.compile(r"^.{0,78}?\b([\w'-]+)\.\s+([A-Z“\"].*)$", re.DOTALL)
_ABBREVIATIONS = frozenset({"inc", "co", "corp", "ltd", "llc", "no", "nos", "u.s", "s.a", "st"})
# A document title set in several lines joins a line to the one before while that one filled
# the width (at least this long) or the line reads as its continuation; the joined title stays
# under MAX_TITLE_CHARS.
WRAPPED_TITLE_CHARS = 30
MAX_TITLE_CHARS = 400
# A site's or publisher's notice, not the document's text: "© 2026 Lexkb. All rights reserved."
_COPYRIGHT = re.compile(
    r"^(?:©|copyright\s+(?:©\s*)?\d{4}\b).{0,200}$|^.{0,150}\ball rights reserved\.?$",
    re.IGNORECASE,
)
_GUIDANCE = re.compile(r"^guidance(?:\s+notes?)?$", re.IGNORECASE)
_BULLET = re.compile(r"(?<!\S)[•▪◦●](?!\S)")
# A recital run into the element before it ("... (Text with EEA relevance) (1) The protection").
_EMBEDDED_RECITAL = re.compile(r"(?<=[.;:)])\s+(?=\((\d{1,3})\)\s+[A-Z])")
_TERMINAL = (".", ";", ":", "!", "?", ")")

ARTICLE_RANK = 5.0
SECTION_SIGN_RANK = 5.0
# A contract's clause longer than this is cut at sentence ends into pieces of SPLIT_CHARS: one
# paragraph must point at a clause, not at a page. Other documents keep long numbered units
# whole (the GDPR's Article 4 holds its 26 definitions), up to MAX_UNIT_CHARS.
CONTRACT_UNIT_CHARS = 4000
MAX_UNIT_CHARS = 20000
SPLIT_CHARS = 2000
# A lead-in and the points it introduces stay one paragraph up to this size ("Section 5.1(b)"
# is then found inside it, as "Article 5(1)(e)" is in the GDPR); past it each point is its own.
LIST_UNIT_CHARS = 1500
_LABEL_ONLY = re.compile(
    r"^(?:\(?[a-zA-Z]{1,4}\)|\(\d{1,3}\)|[A-Z]\.|(?:section\s+)?\d{1,3}(?:\.\d{1,3})*\.?)$",
    re.IGNORECASE,
)
# Words after which a number continues a citation ("Sections 2.1.4 and 2.1.5"), not a new unit.
_CITING_END = re.compile(
    r"(?:\b(?:and|or|to|of|in|under|with|see|per|through|sections?|articles?|clauses?|"
    r"paragraphs?|schedules?|exhibits?)|[,–-])$",
    re.IGNORECASE,
)


@dataclass
class Unit:
    ref: str | None
    section: Section | None
    page: int | None
    lines: list[str] = field(default_factory=list)
    # The numbered ref this unit belongs to ("Section 4" for "Section 4 ¶ 2"); None for a unit
    # placed by position only ("p. 3 ¶ 2").
    base: str | None = None
    last_page: int | None = None
    # Kinds of points ("lower", "roman", ...) this unit holds as a list (contracts).
    list_kinds: set[str] = field(default_factory=set)

    @property
    def positional(self) -> bool:
        return self.base is None

    @property
    def chars(self) -> int:
        return sum(len(line) + 1 for line in self.lines)

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
    """The line under "Article 89" is its title even when long, unless it reads as a sentence:
    it ends like one, starts in lower case, or holds a sentence's end ("... shall be contributed
    according to both Parties' proportion of investment. The detailed method ...")."""
    return (
        len(text) <= 300 and not reads_as_sentence_part(text) and _SENTENCE_END.search(text) is None
    )


def _article_heading(text: str) -> re.Match[str] | None:
    """ "Article 6" or "Article 6 Lawfulness of processing", not a sentence starting "Article 6 ..."."""
    match = _ARTICLE.match(text)
    # "Article 338(2) TFEU, while ..." wrapped to a line start is a citation, not a heading.
    if match and (
        not match.group(2) or (is_title_like(match.group(2)) and text[match.start(2)] != "(")
    ):
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
    # Lines compare with their numbers blanked ("Page 3" = "Page 4") only when they hold at
    # most two numbers; a line of figures or numbered words must repeat exactly.
    keys = [
        re.sub(r"\d+", "#", t.casefold()) if len(re.findall(r"\d+", t)) <= 2 else t.casefold()
        for t in texts
    ]
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
    marked = [_MARKED_PAGE_NUMBER.match(t) is not None for t in texts]
    beside_marked = [
        _BARE_NUMBER.match(t) is not None
        and ((i > 0 and marked[i - 1]) or (i + 1 < len(texts) and marked[i + 1]))
        for i, t in enumerate(texts)
    ]
    counted = _page_number_runs(texts, page_list) if pages >= 2 else set()
    repeated_block = _repeated_edge_blocks(elements, keys, threshold) if pages >= 2 else set()
    keep = []
    for index, (text, category) in enumerate(
        zip(texts, elements["category"].to_list(), strict=True)
    ):
        furniture = (
            category in ("PageBreak", "PageNumber")
            or (
                _PAGE_NUMBER.match(text) is not None
                and (at_edge[index] or category in ("Header", "Footer"))
            )
            or marked[index]
            or beside_marked[index]
            or index in counted
            or _COPYRIGHT.match(text) is not None
        )
        repeated = (
            pages >= 2 and at_edge[index] and len(edge_pages.get(keys[index], ())) >= threshold
        )
        repeated = repeated or index in repeated_block
        keep.append(bool(text) and text != "•" and not furniture and not repeated)
    return elements.filter(pl.Series(keep, dtype=pl.Boolean))


def _page_number_runs(texts: list[str], pages: list[int | None]) -> set[int]:
    """Rows of bare numbers that count the pages mid-page ("1" ... "2", "3" ... "4", "5" on
    sheets of two pages): each continues the count of an earlier one on its page or a later
    page, a run holds at least PAGE_RUN of them over two pages or more, and no page more than
    two. A heading's own number on a line of its own ("1" / "DEFINITIONS") is not counted, so
    a run whose numbers mostly stand over a heading is a list of headings."""
    runs: list[list[int]] = []
    open_runs: dict[int, list[int]] = {}  # the next number -> the run waiting for it
    for index, text in enumerate(texts):
        if _BARE_NUMBER.match(text) is None or pages[index] is None:
            continue
        value = int(text)
        run = open_runs.pop(value, None)
        if run is None or pages[run[-1]] > pages[index]:
            run = []
            runs.append(run)
        run.append(index)
        open_runs[value + 1] = run
    found: set[int] = set()
    for run in runs:
        on_page = Counter(pages[i] for i in run)
        if len(run) < PAGE_RUN or len(on_page) < 2 or max(on_page.values()) > 2:
            continue
        over_heading = sum(1 for i in run if i + 1 < len(texts) and _label_awaited(texts[i + 1]))
        if over_heading * 2 < len(run):
            found.update(run)
    return found


def _runs_in(text: str) -> bool:
    """A clause's heading followed on its line by the clause's first words ("TERMS OF PAYMENT.
    The royalties payable to Licensor", a PDF line broken early): the clause's text, not a
    section title. The words after the heading's full stop read as a sentence: two or more,
    most after the first in lower case; and the stop does not end an abbreviation ("Inc.")."""
    match = _RUN_IN.match(text)
    if match is None or len(match.group(1)) < 2 or match.group(1).casefold() in _ABBREVIATIONS:
        return False
    words = match.group(2).split()
    lower = sum(1 for word in words[1:] if word[:1].islower())
    return len(words) >= 2 and lower * 2 > len(words) - 1


def _opens_as_title(text: str, category: str) -> bool:
    """The document's first line is its title when it reads as one, or when the format marks
    it a title and it is an official title's length, however many words ("Regulation (EU)
    2016/679 of the European Parliament and of the Council of 27 April 2016 on the protection
    of natural persons ..."), not a sentence."""
    if is_title_like(text):
        return True
    return category == "Title" and len(text) < MAX_TITLE_CHARS and not reads_as_sentence_part(text)


def _label_awaited(text: str) -> bool:
    """An unnumbered capitalised heading ("DEFINITIONS"), such as a bare number above it
    would label."""
    return is_title_like(text) and text.isupper() and not text[:1].isdigit()


def _repeated_edge_blocks(elements: pl.DataFrame, keys: list[str], threshold: int) -> set[int]:
    """Rows of layout paragraphs that open or close many pages with the same words: a running
    head of several lines ("[*] = Certain confidential information ... / 1934, as amended.")."""
    if "block" not in elements.columns:
        return set()
    rows_of: dict[tuple[int, int], list[int]] = {}
    for index, (page, block) in enumerate(
        zip(elements["page"].to_list(), elements["block"].to_list(), strict=True)
    ):
        if page is not None and block is not None:
            rows_of.setdefault((page, block), []).append(index)
    first: dict[int, tuple[int, int]] = {}
    last: dict[int, tuple[int, int]] = {}
    for page, block in rows_of:
        first[page] = min(first.get(page, (page, block)), (page, block))
        last[page] = max(last.get(page, (page, block)), (page, block))
    pages_of: dict[str, set[int]] = {}
    edge_blocks = set(first.values()) | set(last.values())
    block_key = {}
    for page_block in edge_blocks:
        key = " ".join(keys[i] for i in rows_of[page_block])
        if len(key) <= 400:
            block_key[page_block] = key
            pages_of.setdefault(key, set()).add(page_block[0])
    return {
        row
        for page_block, key in block_key.items()
        if len(rows_of[page_block]) > 1 and len(pages_of[key]) >= threshold
        for row in rows_of[page_block]
    }


class _Builder:
    """Walks lines in reading order, keeping a stack of open sections and one open unit.

    `profile` is "contract" (clauses, lettered points and definitions are units of their own,
    every layout paragraph is cut), "eu" (recitals before the first article) or "plain". In every
    profile, text that no number claims is cut at layout paragraphs into units placed by
    position, so no unnumbered page becomes one blob.
    """

    def __init__(self, doc_id: str, profile: str, paged: bool) -> None:
        self.doc_id = doc_id
        self.profile = profile
        self.eu_style = profile == "eu"
        self.contract = profile == "contract"
        self.paged = paged
        self.sections: list[Section] = []
        self.stack: list[Section] = []
        self.units: list[Unit] = []
        self.unit: Unit | None = None
        self.title: str | None = None
        # the document title's last line, while the next line may still continue it
        self.title_line: str | None = None
        self.title_page: int | None = None
        self.seen_division = False
        self.recitals = 0
        self.page: int | None = None
        # layout paragraphs
        self.block: int | None = None
        self.new_block = False
        self.blocks_seen = 0
        self.blocks_on_page: dict[int | None, int] = {}
        self.continuations: dict[str, int] = {}
        # contracts: the clause points hang under, and an attachment's prefix ("Exhibit B ")
        self.clause: str | None = None
        self.points = contract.PointStack()
        self.prefix = ""
        self.clause_seen = False
        self.top_number: int | None = None
        self.last_line = ""
        self.title_open: Section | None = None
        # rulebooks: the last rule number, and the rule each "Guidance" section belongs to
        self.last_rule: str | None = None
        self.guidance: dict[int, str] = {}

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
        self.close_unit()
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

    def close_unit(self) -> None:
        """End the open unit; a contract clause over CONTRACT_UNIT_CHARS (any unit over
        MAX_UNIT_CHARS) becomes several, cut at sentence ends."""
        unit, self.unit = self.unit, None
        if unit is None:
            return
        limit = CONTRACT_UNIT_CHARS if self.contract or unit.positional else MAX_UNIT_CHARS
        if unit.chars <= limit:
            return
        pieces = split_parts("\n".join(unit.lines), SPLIT_CHARS)
        if len(pieces) < 2:
            return
        unit.lines = [pieces[0]]
        for number, piece in enumerate(pieces[1:], start=2):
            # A numbered clause goes on as "Section 4 ¶ 2"; a placed one as "p. 3 ¶ 2.2".
            ref = self._continuation_ref(unit) if unit.base else f"{unit.ref}.{number}"
            extra = Unit(ref, unit.section, unit.last_page or unit.page, [piece])
            extra.base = unit.base
            self.units.append(extra)

    def start_unit(self, ref: str | None, text: str, base: str | None = "") -> None:
        """`base`: the numbered ref the unit continues; "" means the unit's own ref."""
        self.close_unit()
        self.unit = Unit(ref=ref, section=self.current_section(), page=self.page, lines=[text])
        self.unit.base = ref if base == "" else base
        self.unit.last_page = self.page
        self.units.append(self.unit)

    def _continuation_ref(self, unit: Unit) -> str:
        """ "Section 4 ¶ 2" for the next paragraph of Section 4; by position when unnumbered."""
        if unit.base:
            count = self.continuations.get(unit.base, 1) + 1
            self.continuations[unit.base] = count
            return f"{unit.base} ¶ {count}"
        return self._position_ref()

    def _position_ref(self) -> str:
        if self.paged and self.page is not None:
            return f"p. {self.page} ¶ {self.blocks_on_page.get(self.page, 1)}"
        return f"¶ {self.blocks_seen}"

    def _page_continues(self, text: str) -> bool:
        """A paragraph running on over a page break is one paragraph, not two."""
        unit = self.unit
        return (
            unit is not None
            and unit.open_sentence
            and (unit.last_page != self.page or text[:1].islower())
        )

    def _cuts_here(self, text: str) -> bool:
        if not self.new_block or self.unit is None or self._page_continues(text):
            return False
        return self.contract or self.unit.positional or self.unit.chars > MAX_UNIT_CHARS

    def continue_unit(self, text: str, point: bool) -> None:
        if self.unit is None:
            section = self.current_section()
            ref = (section.label or section.number) if section else None
            if ref is None and self.contract and self.clause:
                ref = self._continuation_ref(Unit(None, None, None, base=self.clause))
                self.start_unit(ref, text, base=self.clause)
                return
            self.start_unit(ref or self._position_ref(), text, base=ref)
            return
        if self._cuts_here(text):
            unit = self.unit
            self.start_unit(self._continuation_ref(unit), text, base=unit.base)
            return
        self.unit.add(text, join=not point and self.unit.open_sentence)
        self.unit.last_page = self.page

    def enclosing(self, rank: float) -> Section | None:
        for section in reversed(self.stack):
            if section.rank == rank:
                return section
        return None

    # classification ------------------------------------------------------------------------
    def feed(self, text: str, category: str, page: int | None, block: int | None = None) -> None:
        self.touch_page(page)
        self.new_block = block is not None and block != self.block
        if self.new_block:
            self.block = block
            self.blocks_seen += 1
            self.blocks_on_page[page] = self.blocks_on_page.get(page, 0) + 1
        self._feed(text, category, page)
        self.last_line = text

    def _feed(self, text: str, category: str, page: int | None) -> None:
        title_line, self.title_line = self.title_line, None
        if self.eu_style and not self.seen_division:
            for match in _EMBEDDED_RECITAL.finditer(text):
                if int(match.group(1)) == self.recitals + 1:
                    self._feed(text[: match.start()], category, page)
                    self._feed(text[match.end() :], category, page)
                    return
        section = self.current_section()
        if section is not None and section.awaiting_title:
            section.awaiting_title = False
            wrapped = category == "Title" and text.rstrip().endswith(",")
            if (_is_awaited_title(text) or wrapped) and not self._numbered(text):
                section.title = text
                section.path[-1] = f"{section.path[-1]} {text}"
                self.title_open = section
                return
        if self._continues_title(text, category):
            return
        if title_line is not None and self._extends_title(title_line, text, category, page):
            return
        self.title_open = None
        if self.contract:
            if self._contract_line(text, category):
                return
        elif self._starts_here():
            if self._heading(text, category):
                return
            if self._paragraph(text):
                return
        if (
            self.title is None
            and not self.sections
            and not self.units
            and _opens_as_title(text, category)
        ):
            self.title = self.title_line = text
            self.title_page = page
            return
        if not self.contract and (point := _POINT.match(text)) is not None:
            self._point(point.group(1), text)
            return
        if category == "Title" and is_title_like(text) and not self._numbered(text):
            self._generic_heading(text)
            return
        self.continue_unit(text, point=False)

    def _continues_title(self, text: str, category: str) -> bool:
        """A heading's title wrapped onto a second line of the same block ("... of the data" /
        "subject") is one title."""
        section = self.title_open
        if section is None or self.new_block or self.unit is not None:
            return False
        wrapped = text[:1].islower() or (category == "Title" and section.title.endswith(","))
        if not wrapped or len(section.title) + len(text) > 300:
            return False
        section.title = f"{section.title} {text}"
        section.path[-1] = f"{section.path[-1]} {text}"
        return True

    def _extends_title(self, last: str, text: str, category: str, page: int | None) -> bool:
        """A printed title set in several lines ("Regulation (EU) 2016/679 of the European" /
        "Parliament and of the Council of 27 April 2016" / ...) is one title: a Title line right
        after it on its page, before any section or paragraph, joins it when the line before
        filled the width or this one reads as a continuation. Not for contracts, whose title
        lines stand apart ("EXHIBIT 10.1" / "AGENCY AGREEMENT"), nor for formats with heading
        levels, where the next heading is its own."""
        if not self.paged or self.contract or category != "Title" or page != self.title_page:
            return False
        if self.sections or self.units or self._numbered(text) or _PAREN_NUMBER.match(text):
            return False
        continues = text[:1].islower() or (
            len(text.split()) >= 3 and (len(last) >= WRAPPED_TITLE_CHARS or text[:1] == "(")
        )
        if not continues or len(self.title) + len(text) >= MAX_TITLE_CHARS:
            return False
        self.title = f"{self.title} {text}"
        self.title_line = text
        return True

    # contracts -----------------------------------------------------------------------------
    def _starts_here(self) -> bool:
        """A number at a line start opens a unit unless it continues a citation mid-sentence
        ("... under Sections 2.1.4 and" / "2.1.5 ...")."""
        if self.new_block or self.unit is None or not self.unit.open_sentence:
            return True
        return _CITING_END.search(self.last_line.rstrip()) is None

    def _clause_ref(self, number: str) -> str:
        return f"{self.prefix}Section {number}"

    def _label_only(self) -> bool:
        """The open unit is just its label ("(i)", "1.1") and its text comes on the next line."""
        unit = self.unit
        return unit is not None and len(unit.lines) == 1 and bool(_LABEL_ONLY.match(unit.lines[0]))

    def _in_list(self, text: str, kind: str) -> bool:
        """A point continues the open unit when the unit's text leads into it (": (a) ...",
        "...; and (b) ...") or the unit already holds a list of this kind of point ("A. ...",
        "B. ..."), and both together stay a readable clause."""
        unit = self.unit
        if unit is None or not unit.lines:
            return False
        tail = unit.lines[-1].rstrip()
        leads = tail.endswith((":", ";", ",", "—", "-")) or tail.endswith((" and", " or"))
        listed = kind in unit.list_kinds
        if (leads or listed) and unit.chars + len(text) <= LIST_UNIT_CHARS:
            unit.list_kinds.add(kind)
            return True
        return False

    def _contract_line(self, text: str, category: str) -> bool:
        if self._label_only():
            self.unit.add(text, join=True)
            return True
        heading_like = category == "Title" or self.new_block
        if not self._starts_here():
            return False
        # "Exhibit 10.4" above the title is the filing's label; attachments follow the body.
        if (match := contract.ATTACHMENT.match(text)) and heading_like and self.clause_seen:
            kind, name, rest = match.group(1).capitalize(), match.group(2), match.group(3)
            if not rest or is_title_like(rest):
                label = f"{kind} {name.upper() if len(name) <= 2 else name}"
                self.prefix = f"{label} "
                self._open_division(name, rest, 0.5, label)
                self.top_number = None
                return True
        if (match := contract.ARTICLE.match(text)) and heading_like:
            number, rest = match.group(1), match.group(2)
            if not rest or is_title_like(rest):
                self._close_recitals()
                number = number.upper() if re.fullmatch(r"[ivxlc]+", number, re.I) else number
                self.clause_seen = True
                self._open_division(number, rest, 1.0, f"{self.prefix}Article {number}")
                return True
        numbered = (
            contract.SECTION.match(text)
            or contract.DOTTED.match(text)
            or contract.NUMBERED.match(text)
            or contract.NUMBERED_HEADING.match(text)
        )
        if numbered:
            return self._clause(numbered, text, category, heading_like)
        if (definition := contract.DEFINITION.match(text)) and self.new_block:
            term = " ".join(definition.group(1).split())
            ref = f'{self._context()} "{term}"'.strip()
            self.start_unit(ref, text, base=ref)
            return True
        if (point := contract.POINT.match(text)) and (self.new_block or point.group(1)):
            if point.group(3) and not self.new_block:
                return False
            return self._contract_point(contract.point_label(point), text, bool(point.group(3)))
        return False

    def _open_division(self, number: str, title: str, rank: float, label: str) -> None:
        section = self.open_section(number, title, rank, label)
        section.awaiting_title = not title
        self.clause = None
        self.points.clear()

    def _context(self) -> str:
        """The clause a point or definition hangs under, or the section it sits in."""
        return self.clause or (self.current_section().label if self.stack else "")

    def _close_recitals(self) -> None:
        """The first numbered clause or article ends a recitals heading ("RECITALS",
        "WITNESSETH", "BACKGROUND"): the clauses are the contract's body, not its recitals."""
        for depth, section in enumerate(self.stack):
            if section.number is None and RECITALS_HEADING.match(section.title or ""):
                del self.stack[depth:]
                self.close_unit()
                return

    def _clause(self, numbered: re.Match[str], text: str, category: str, heading: bool) -> bool:
        number, rest = numbered.group(1), numbered.group(2).strip()
        bare = numbered.re is contract.NUMBERED
        restarts = bare and self.clause is not None and int(number) <= (self.top_number or 0)
        # "1. Year 1 ... 2. Year 2" inside Section 8(A): a list, not Section 1 again.
        if restarts and not (heading and is_title_like(rest) and rest.isupper()):
            return self._contract_point(number, text, False)
        self._close_recitals()
        if bare or numbered.re is contract.NUMBERED_HEADING:
            self.top_number = max(self.top_number or 0, int(number))
        label = self._clause_ref(number)
        self.points.clear()
        self.clause = label
        self.clause_seen = True
        titled = is_title_like(rest) and (category == "Title" or rest.isupper() or len(rest) < 60)
        if not rest or (titled and heading and not _runs_in(rest)):
            self._open_division(number, rest, 2.0 + number.count("."), label)
            self.clause = label
            return True
        self.start_unit(label, text)
        return True

    def _contract_point(self, label: str, text: str, lettered: bool) -> bool:
        """A point: inside the open unit when that unit's text leads into a list, else a unit
        of its own ("Section 12.1(b)")."""
        context = self._context()
        place = self.points.push(label)
        if self._in_list(text, self.points.kind):
            self.unit.add(text, join=False)
            self.unit.last_page = self.page
            return True
        ref = f"{context}{place}" if context else f"Recital {label}" if lettered else place
        self.start_unit(ref, text)
        return True

    # other documents -----------------------------------------------------------------------
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
        elif self.unit is None or self.unit.positional:
            self.continue_unit(text, point=False)
        else:
            self.unit.add(text, join=False)
            self.unit.last_page = self.page

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
        section = self.open_section(None, text, base + 0.5, "")
        if _GUIDANCE.match(text) and self.last_rule is not None:
            self.guidance[id(section)] = self.last_rule
        if self.contract:
            self.clause = None
            self.points.clear()

    def _paragraph(self, text: str) -> bool:
        if match := _DOTTED.match(text):
            # A rule number ends a guidance block (or any unnumbered heading's block) that
            # followed the rule before it: "4.2.3" belongs under 4.2, not under "Guidance".
            while self.stack and self.stack[-1].number is None and self.stack[-1].rank % 1:
                self.stack.pop()
            self.start_unit(match.group(1), text)
            self.last_rule = match.group(1)
            return True
        if match := _APPLICATION.match(text):
            self.start_unit(match.group(1), text)
            return True
        if match := _NUMBERED.match(text):
            article = self.enclosing(ARTICLE_RANK) or self.enclosing(SECTION_SIGN_RANK)
            number = match.group(1)
            guided = self.guidance.get(id(self.current_section()))
            if article is not None:
                self.start_unit(f"{article.label}({number})", text)
            elif guided is not None:
                # Guidance numbers its notes per rule, as ObliQA cites them: "4.2.2 Guidance 1".
                self.start_unit(f"{guided} Guidance {number}", text)
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


def document_profile(texts: list[str], document_type: str | None = None) -> str:
    """contract, eu (an act with articles and recitals) or plain."""
    if (document_type or "").casefold() == "contract" or contract.is_contract(texts):
        return "contract"
    if any(_article_heading(t) for t in texts):
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
    texts = [_clean(t) for t in body["text"].to_list()]
    profile = document_profile(texts)
    paged = body["page"].drop_nulls().n_unique() > 0
    builder = _Builder(doc_id, profile, paged)
    blocks = body["block"].to_list() if "block" in body.columns else [None] * body.height
    for text, category, page, block in zip(
        texts, body["category"].to_list(), body["page"].to_list(), blocks, strict=True
    ):
        for line in _split_lines(text):
            builder.feed(line, category, page, block)
    builder.close_unit()

    paragraphs = []
    for unit in builder.units:
        text, notes = split_notes("\n".join(unit.lines))
        paragraphs.append(Paragraph(unit.ref, unit.section, unit.page, text, notes))
    chunks = chunk_rows(doc_id, document_key, paragraphs)
    sections = [section_row(s, doc_id) for s in builder.sections]
    pages = elements.select(pl.col("page").max()).item()
    title = builder.title or document_key
    extra: dict = {}
    if profile == "contract":
        title = contract.contract_title(texts) or title
        found = contract.preamble(texts)
        extra = {
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


def _split_lines(text: str) -> list[str]:
    """Lines of an element; wrapped lines are joined again by the builder's sentence logic."""
    return [line.strip() for line in text.split("\n") if line.strip()]
