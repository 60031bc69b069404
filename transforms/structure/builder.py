"""The builder: the state machine that turns a document's lines, in reading order, into its
section tree and its citable units.

Each line is tried in a fixed order: an embedded recital split off, the title an "Article 6"
heading awaits, a title wrapped over lines, then the profile's numbers (contract_lines or
document_lines), the document's own title, a point, an unnumbered heading, and last the open
unit's continuation. The state it works on is state.BuilderState.
"""

from __future__ import annotations

import re

from transforms.reading.pdf_text import FOOTNOTE, MARGIN_NUMBER
from transforms.structure.contract_lines import ContractLines
from transforms.structure.document_lines import DocumentLines
from transforms.structure.numbering.generic import CITED_LABEL, NAMING_END
from transforms.structure.numbering.regulation import (
    EMBEDDED_RECITAL,
    OJ_SERIES,
    PAREN_NUMBER,
    POINT,
    QUOTE_ANNOUNCED,
    QUOTE_CLOSES,
    QUOTE_OPENS,
)
from transforms.structure.titles import EU_ACT_TITLE, continues_eu_title, is_notice, is_placeholder
from transforms.structure.tree import is_title_like, reads_as_sentence_part

# A full stop after a word, then a capitalised word in lower case: one sentence ends, another
# starts. Headings hold none.
_SENTENCE_END = re.compile(r"[A-Za-z]{2}\.\s+[A-Z][a-z]")
# A document title set in several lines joins a line to the one before while that one filled
# the width (at least this long) or the line reads as its continuation; the joined title stays
# under MAX_TITLE_CHARS.
WRAPPED_TITLE_CHARS = 30
MAX_TITLE_CHARS = 400
# A quote left open this many lines was misread: the lines after it are read again.
MAX_QUOTED_LINES = 400


def _is_awaited_title(text: str) -> bool:
    """The line under "Article 89" is its title even when long, unless it reads as a sentence:
    it ends like one, starts in lower case, or holds a sentence's end ("... shall be contributed
    according to both Parties' proportion of investment. The detailed method ...")."""
    return (
        len(text) <= 300 and not reads_as_sentence_part(text) and _SENTENCE_END.search(text) is None
    )


def _opens_as_title(text: str, category: str) -> bool:
    """The document's first line is its title when it reads as one, or when the format marks
    it a title and it is an official title's length, however many words ("Regulation (EU)
    2016/679 of the European Parliament and of the Council of 27 April 2016 on the protection
    of natural persons ..."), not a sentence. A notice to the reader ("PLEASE READ ...
    CAREFULLY") or a template's blank ("<Business Name>") is never one (transforms.structure.titles)."""
    if is_notice(text) or is_placeholder(text):
        return False
    if is_title_like(text):
        return True
    return category == "Title" and len(text) < MAX_TITLE_CHARS and not reads_as_sentence_part(text)


class Builder(ContractLines, DocumentLines):
    """Walks lines in reading order, keeping a stack of open sections and one open unit.

    `profile` is "contract" (clauses, lettered points and definitions are units of their own,
    every layout paragraph is cut), "eu" (recitals before the first article) or "plain". In every
    profile, text that no number claims is cut at layout paragraphs into units placed by
    position, so no unnumbered page becomes one blob.
    """

    # classification ------------------------------------------------------------------------
    def feed(
        self,
        text: str,
        category: str,
        page: int | None,
        block: int | None = None,
        listed: tuple[str, int] | None = None,
    ) -> None:
        """`listed`: the (ref in its list, level) of the Word list number the line starts with."""
        self.touch_page(page)
        self.new_block = block is not None and block != self.block
        if self.new_block:
            self.block = block
            self.blocks_seen += 1
            self.blocks_on_page[page] = self.blocks_on_page.get(page, 0) + 1
        self.listed = listed
        before = (len(self.sections), len(self.units))
        self._feed(text, category, page)
        if listed is not None:
            self.note_listed(listed, before)
        self.last_line = text

    def _feed(self, text: str, category: str, page: int | None) -> None:
        if category == FOOTNOTE:
            self.add_note(text)
            return
        if category == MARGIN_NUMBER:
            self.margin = text
            return
        if self.margin is not None:
            label, self.margin = self.margin, None
            self.title_line = None
            self.start_unit(label, text)
            return
        if self._journal_heading(text, page):
            return
        if not self.contract and self._quoted(text):
            return
        title_line, self.title_line = self.title_line, None
        if self.eu_style and not self.seen_division:
            for match in EMBEDDED_RECITAL.finditer(text):
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
        elif (starts := self._starts_here()) or self.schedule is not None:
            if self._schedule_line(text, starts):
                return
            if self._list_point(text):
                return
            if self._list_item(text):
                return
            if self._heading(text, category):
                return
            if self._paragraph(text):
                return
        if self.title is None and not self.sections and self._only_notices():
            if is_placeholder(text):
                return  # a template's blank over its title is no text anyone cites
            if _opens_as_title(text, category):
                self.title = self.title_line = text
                self.title_page = page
                return
        if (
            not self.contract
            and (point := POINT.match(text)) is not None
            and not self._cited_label(text)
        ):
            self._point(point.group(1), text)
            return
        if category == "Title" and is_title_like(text) and not self._numbered(text):
            self._generic_heading(text)
            return
        self.continue_unit(text, point=False)

    def _journal_heading(self, text: str, page: int | None) -> bool:
        """The Official Journal's series heading over an act's title, and the EEA note under
        it, on the title's page before any section or unit."""
        first_page = self.title_page is None or page == self.title_page
        if not first_page or self.units or self.sections or not OJ_SERIES.match(text):
            return False
        self.title_line = None
        return True

    def _cited_label(self, text: str) -> bool:
        """A label that goes on with a citation the line before began ("... referred to in
        subsection" / "(2)(a), and"): in the same layout paragraph, or, in another one, when
        the label is followed by another label or by the sentence's punctuation, which no
        point's first line is."""
        if not NAMING_END.search(self.last_line.rstrip()):
            return False
        return not self.new_block or CITED_LABEL.match(text) is not None

    def _quoted(self, text: str) -> bool:
        """Text an amending act quotes stays the text of the point that quotes it."""
        opens = (
            self.quoting == 0
            and self.unit is not None
            and QUOTE_OPENS.match(text) is not None
            and QUOTE_ANNOUNCED.search(self.last_line) is not None
        )
        if not opens and self.quoting == 0:
            return False
        closes = QUOTE_CLOSES.search(text) is not None
        self.quoting = 0 if closes or self.quoting >= MAX_QUOTED_LINES else self.quoting + 1
        self.continue_unit(text, point=False)
        return True

    # titles --------------------------------------------------------------------------------
    def _only_notices(self) -> bool:
        """No unit yet but notices to the reader ("PLEASE READ ... CAREFULLY BEFORE USING"),
        which a document may print over its title."""
        return all(unit.lines and is_notice(unit.lines[0]) for unit in self.units)

    def _continues_title(self, text: str, category: str) -> bool:
        """A heading's title wrapped onto a second line of the same block ("... of the data" /
        "subject") is one title."""
        section = self.title_open
        if section is None or self.unit is not None:
            return False
        # A title over the full width wraps into a layout paragraph of its own, still set as
        # a heading and going on in lower case ("... in the AI regulatory" / "sandbox").
        if self.new_block and not (category == "Title" and text[:1].islower()):
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
        levels, where the next heading is its own. An EU act's title block is one title in
        every format, to the end of its subject line (transforms.structure.titles.continues_eu_title)."""
        title = self.title
        if self.contract or page != self.title_page or title is None:
            return False
        if self.sections or not self._only_notices() or self._numbered(text):
            return False
        if PAREN_NUMBER.match(text):
            return False
        if EU_ACT_TITLE.match(title):
            if not continues_eu_title(title, text):
                return False
            self.title = f"{title} {text}"
            self.title_line = text
            return True
        if not self.paged or category != "Title":
            return False
        continues = text[:1].islower() or (
            len(text.split()) >= 3 and (len(last) >= WRAPPED_TITLE_CHARS or text[:1] == "(")
        )
        if not continues or len(title) + len(text) >= MAX_TITLE_CHARS:
            return False
        self.title = f"{title} {text}"
        self.title_line = text
        return True
