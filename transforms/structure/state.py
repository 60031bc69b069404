"""The builder's state: the stack of open sections, the one open unit, the pages and layout
paragraphs seen, and how a unit is started, continued, cut and given a ref.

Kept apart from the line classifiers (contract_lines, document_lines, builder), which decide what
a line opens; everything here is what they share, whatever the document's family.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from transforms.structure.chunks import split_parts
from transforms.structure.ids import section_id
from transforms.structure.numbering import contract
from transforms.structure.numbering.generic import CITING_END
from transforms.structure.tree import Section

_TERMINAL = (".", ";", ":", "!", "?", ")")
# A footnote's call-out as the PDF text layer writes it: the note's number in superscript
# digits ("Bank¹⁹,"); its note, "(19) Council Regulation ...", follows at the page's foot.
_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_SUPERSCRIPT = str.maketrans("0123456789", _SUPERSCRIPTS)
_NOTE_LABEL = re.compile(r"^\((\d{1,3})\)\s*")
# A note's call-out is looked for in the units of its page and the page before.
NOTE_PAGES = 1
# A contract's clause longer than this is cut at sentence ends into pieces of SPLIT_CHARS: one
# paragraph must point at a clause, not at a page. Other documents keep long numbered units
# whole (the GDPR's Article 4 holds its 26 definitions), up to MAX_UNIT_CHARS.
CONTRACT_UNIT_CHARS = 4000
MAX_UNIT_CHARS = 20000
SPLIT_CHARS = 2000


@dataclass
class Unit:
    """One citable paragraph being built: its ref, the section it sits in, its pages and its
    lines, which the builder joins while a sentence runs on."""

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
    # Footnotes the unit calls, kept apart from its text.
    notes: list[str] = field(default_factory=list)

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


class BuilderState:
    """Sections and units as the builder walks lines in reading order: a stack of open sections
    and one open unit. The line classifiers that subclass it read `profile` ("contract", "eu" or
    "plain") and the layout paragraph a line opens (`new_block`)."""

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
        # (section number, letter) of the last lettered subsection ("5", "b"), plain documents
        self.letter: tuple[str, str] | None = None
        # plain documents: the number of the last numbered section heading ("2"), and the last
        # item of a numbered list running inside it ("Key components ... include: 1. ... 4.")
        self.heading_number: int | None = None
        self.heading_section: Section | None = None
        self.list_item: int | None = None
        # UK Acts: the Schedule open, its last paragraph's number, and a cross-heading waiting
        # for the paragraph under it
        self.schedule: Section | None = None
        self.schedule_paragraph = 0
        self.cross_heading: str | None = None
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
        # a margin number waiting for its paragraph's first line
        self.margin: str | None = None
        # lines read so far inside text an amending act quotes (0: none open)
        self.quoting = 0
        # DOCX: the Word list number of the line being read (its ref in its list, its level),
        # and per level the last numbered line's ref in its list with the ref of the unit or
        # section that line opened (None: it opened none)
        self.listed: tuple[str, int] | None = None
        self.listed_levels: dict[int, tuple[str, str | None]] = {}
        # EU acts: the annex open, whose numbered points are "Annex III, point 1"
        self.annex: Section | None = None

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

    def _label_line_runs_on(self) -> bool:
        """A numbered clause whose first line, label and all, is set as a block of its own (a
        hanging indent: "1.1 Each PARTY may ... to the other" / "PARTY. All ..."): the next
        block finishes its sentence, so the clause is one paragraph, not two."""
        unit = self.unit
        return (
            unit is not None
            and unit.base is not None
            and unit.ref == unit.base
            and len(unit.lines) == 1
            and unit.open_sentence
        )

    def _cuts_here(self, text: str) -> bool:
        if not self.new_block or self.unit is None or self._page_continues(text):
            return False
        if self._label_line_runs_on():
            return False
        if self._introduces_next() and self.unit.chars <= MAX_UNIT_CHARS:
            return False
        return self.contract or self.unit.positional or self.unit.chars > MAX_UNIT_CHARS

    def _introduces_next(self) -> bool:
        """An act's preamble runs as one sentence over its layout paragraphs ("THE EUROPEAN
        PARLIAMENT AND THE COUNCIL ...," / "Having regard to ...," / "Whereas:"): in an act, a
        line of an unnumbered unit that ends in a comma or colon goes on in the next one."""
        unit = self.unit
        return (
            self.eu_style
            and unit is not None
            and unit.positional
            and unit.lines[-1].rstrip().endswith((",", ":"))
        )

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

    def add_note(self, text: str) -> None:
        """A footnote goes to the unit that calls it (its number in superscript, which is then
        taken out of the unit's text), else to the unit open at the page's foot."""
        label = _NOTE_LABEL.match(text)
        if label is not None:
            mark = re.compile(
                f"(?<![{_SUPERSCRIPTS}]){label.group(1).translate(_SUPERSCRIPT)}(?![{_SUPERSCRIPTS}])"
            )
            for unit in reversed(self.units):
                if (unit.last_page or 0) < (self.page or 0) - NOTE_PAGES:
                    break
                for index, line in enumerate(unit.lines):
                    if mark.search(line):
                        unit.lines[index] = mark.sub("", line, count=1)
                        unit.notes.append(text)
                        return
        target = self.unit or (self.units[-1] if self.units else None)
        if target is not None:
            target.notes.append(text)

    def enclosing(self, rank: float) -> Section | None:
        for section in reversed(self.stack):
            if section.rank == rank:
                return section
        return None

    # numbers at a line start ---------------------------------------------------------------
    def _starts_here(self) -> bool:
        """A number at a line start opens a unit unless it continues a citation mid-sentence
        ("... under Sections 2.1.4 and" / "2.1.5 ...")."""
        if self.new_block or self.unit is None or not self.unit.open_sentence:
            return True
        return CITING_END.search(self.last_line.rstrip()) is None
