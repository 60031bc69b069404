"""Lines of every document but a contract: divisions ("Part II", "Chapter 3"), articles and
their paragraphs and points, § sections, rulebook rules and their guidance notes, application
material ("A12"), numbered headings, and recitals before an act's first article.

A number opens a unit only where its family cites one ("Article 6(1)", "4.2.3", "A12",
"§ 103(a)"); the numbers themselves are read by the modules of numbering.
"""

from __future__ import annotations

import re

from transforms.structure.numbering.generic import (
    CITING_END,
    DIVISION,
    DIVISION_RANK,
    LETTERED_HEADING,
    NUMBERED_HEADING,
    SECTION_SIGN,
    SECTION_SIGN_RANK,
)
from transforms.structure.numbering.regulation import (
    ANNEX,
    ANNEX_PART,
    ANNEX_PART_RANK,
    ANNEX_RANK,
    ARTICLE,
    ARTICLE_RANK,
    NUMBERED,
    PAREN_NUMBER,
    article_heading,
)
from transforms.structure.numbering.standard import APPLICATION, DOTTED, GUIDANCE
from transforms.structure.state import BuilderState
from transforms.structure.tree import Section, is_title_like

# The label of a section an Act heads with its bare number ("7", "12A").
NUMBERED_SECTION = re.compile(r"^\d{1,3}[A-Z]{0,2}$")
# A UK Act's Schedule as printed: "SCHEDULE 1", with the section that brings it in at the right
# ("SCHEDULE 1 Section 17(2)"); "SCHEDULES" heads them all. Capitals only: the running head
# "Schedule 1 — Consequential amendments" opens nothing.
SCHEDULE = re.compile(r"^SCHEDULE\s+(\d{1,3}[A-Z]?)(?:\s+(?:Sections?|Article)\s+\S.*)?$")
SCHEDULES = "SCHEDULES"
# A Schedule closes the Act's last Part and section; its paragraphs with sub-paragraphs are
# sections inside it, as the Act's own numbered sections are.
SCHEDULE_RANK = 0.5
SCHEDULE_PARAGRAPH_RANK = 6.0
_SCHEDULE_PARAGRAPH = re.compile(r"^(\d{1,3}[A-Z]?)\s+(\S.*)$")
_SUB_PARAGRAPH = re.compile(r"^\((\d{1,3}[A-Z]?)\)\s+\S")
_SCHEDULE_PARAGRAPH_LABEL = re.compile(r"^Schedule \d{1,3}[A-Z]?, paragraph \d{1,3}[A-Z]?$")
# A Word list number's ref in its list: a point under the item above ("2(a)", "3(b)(ii)"), and
# the ref of a list of its own lettered in lower case ("a", "iv"); "A." may letter appendices.
_LISTED_POINT = re.compile(r"^(.+)(\([^()]+\))$")
_LISTED_LETTERS = re.compile(r"^[a-z]{1,5}$")


def _heads_section(title: str) -> bool:
    """A numbered heading's title: title-like, also when it ends in "etc." as Acts' section
    titles may ("13 Defence for certain bribery offences etc.")."""
    if title.endswith(" etc."):
        title = title[: -len(".")]
    return is_title_like(title)


def _lettered_title(text: str) -> bool:
    """A lettered subsection's title: title-like, or in Title Case with a closing period
    ("Summons or Subpoena of Foreign Bank Records; Termination of ... Foreign Bank.")."""
    if is_title_like(text):
        return True
    if not text.endswith(".") or not is_title_like(text[:-1]):
        return False
    words = [w for w in text[:-1].replace(";", " ").split() if len(w) > 3]
    return bool(words) and sum(w[0].isupper() for w in words) >= 0.8 * len(words)


class DocumentLines(BuilderState):
    """The line classifier for acts, standards, rulebooks and plain documents (profiles "eu" and
    "plain"), for the builder to call on every line."""

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
        if section is not None and (starts_subsection or self._subsection(section, label)):
            self.start_unit(f"{section.label}({label})", text)
        elif self.unit is None or self.unit.positional:
            self.continue_unit(text, point=False)
        else:
            self.unit.add(text, join=False)
            self.unit.last_page = self.page

    def _list_point(self, text: str) -> bool:
        """In a plain document (a policy in Word), a paragraph Word numbers as a point is a unit
        of its own, whatever its words ("a. all personal data held ..." under "2. Scope" is
        "2(a)"): under the item above it in its list, where that item opened the unit or
        section the line stands in; or, in a lettered list of its own, directly under a
        numbered section ("5(a)"), once."""
        if self.profile != "plain" or self.listed is None:
            return False
        ref, level = self.listed
        section, unit = self.current_section(), self.unit
        base = unit.base if unit is not None else None
        point = _LISTED_POINT.match(ref) if level > 0 else None
        if point is not None:
            above = self.listed_levels.get(level - 1)
            if above is None or above[0] != point.group(1) or above[1] is None:
                return False
            opened = above[1]
            if not (
                (section is not None and section.number == opened)
                or base == opened
                or (base or "").startswith(f"{opened}(")
            ):
                return False
            self.start_unit(f"{opened}{point.group(2)}", text)
            return True
        if level > 0 or not _LISTED_LETTERS.match(ref) or section is None:
            return False
        number = section.number or ""
        own = f"{number}({ref})"
        previous = self.listed_levels.get(0, ("", None))[1]
        if (
            NUMBERED_SECTION.match(number) is None
            or base not in (None, number, section.label, previous)
            or any(u.ref == own for u in self.units)
        ):
            return False
        self.start_unit(own, text)
        return True

    def note_listed(self, listed: tuple[str, int], before: tuple[int, int]) -> None:
        """Remember what the Word-numbered line just read opened, for the points under it: the
        unit it started or the section it opened, where that carries its number."""
        ref, level = listed
        # the unit's ref ends in the number's own part: "5(a)" for a list's own "a"
        last = point.group(2) if (point := _LISTED_POINT.match(ref)) else f"({ref})"
        opened = None
        unit = self.unit
        if len(self.units) > before[1] and unit is self.units[-1] and unit.ref:
            opened = unit.ref if unit.ref == ref or unit.ref.endswith(last) else None
        elif len(self.sections) > before[0] and self.sections[-1].number == ref:
            opened = ref
        self.listed_levels = {k: v for k, v in self.listed_levels.items() if k < level}
        self.listed_levels[level] = (ref, opened)

    def _subsection(self, section: Section | None, label: str) -> bool:
        """A numbered subsection ("(2)") directly under a section headed by its bare number
        ("7 Failure of commercial organisations to prevent bribery"), as Acts of the UK
        Parliament set them: cited "section 7(2)", a unit of its own. Lettered paragraphs stay
        inside it."""
        return (
            label.isdigit()
            and not self.eu_style
            and section is not None
            and section.number is not None
            and NUMBERED_SECTION.match(section.label or "") is not None
            and self.enclosing(ARTICLE_RANK) is None
        )

    def _schedule_line(self, text: str, starts: bool) -> bool:
        """A UK Act's Schedules: "SCHEDULE 1" opens one, cited "Schedule 1"; in it a number
        in sequence opens a paragraph ("Schedule 1, paragraph 13"), "(2)" its sub-paragraph
        ("..., paragraph 13(2)"); a cross-heading (the Act a group of paragraphs amends) heads
        the paragraph under it. Nothing in a Schedule is a section or article of the Act: its
        "Section 22" and "Article 14" are cells of a table of repeals."""
        if self.profile != "plain":
            return False
        if text == SCHEDULES:
            return True
        if match := SCHEDULE.match(text):
            number = match.group(1)
            self.stack = [s for s in self.stack if s.rank < SCHEDULE_RANK]
            opened = self.open_section(number, "", SCHEDULE_RANK, f"Schedule {number}")
            opened.awaiting_title = True
            self.schedule, self.schedule_paragraph, self.cross_heading = opened, 0, None
            return True
        schedule = self.schedule
        if schedule is None:
            return False
        if not starts:  # a line that goes on with the sentence before it
            self.continue_unit(text, point=False)
            return True
        paragraph = _SCHEDULE_PARAGRAPH.match(text)
        if paragraph and int(re.sub(r"\D", "", paragraph.group(1))) == self.schedule_paragraph + 1:
            number, rest = paragraph.groups()
            self.schedule_paragraph += 1
            self.stack = self.stack[: self.stack.index(schedule) + 1]
            ref = f"Schedule {schedule.number}, paragraph {number}"
            heading, self.cross_heading = self.cross_heading, None
            if sub := _SUB_PARAGRAPH.match(rest):
                self.open_section(number, heading or "", SCHEDULE_PARAGRAPH_RANK, ref)
                self.start_unit(f"{ref}({sub.group(1)})", rest)
            else:
                self.start_unit(ref, f"{heading}\n{text}" if heading else text)
            return True
        label = (self.current_section() or schedule).label or ""
        if (sub := _SUB_PARAGRAPH.match(text)) and _SCHEDULE_PARAGRAPH_LABEL.match(label):
            self.start_unit(f"{label}({sub.group(1)})", text)
            return True
        if self.cross_heading is not None:
            # what followed the heading was no paragraph: it was text (a table's cells)
            self.continue_unit(self.cross_heading, point=False)
            self.cross_heading = None
        if is_title_like(text) and not text.endswith((".", ",", ";", ":", "—")):
            self.cross_heading = text
            return True
        self.continue_unit(text, point=False)
        return True

    def _numbered(self, text: str) -> bool:
        if self.annex is not None and ANNEX_PART.match(text):
            return True  # "A. ‘General’" under "ANNEX" heads a part; it is no annex's title
        return any(
            pattern.match(text)
            for pattern in (DIVISION, ARTICLE, DOTTED, NUMBERED, APPLICATION, SECTION_SIGN)
        )

    def _heading(self, text: str, category: str) -> bool:
        if self.eu_style and self._annex_heading(text):
            return True
        if match := DIVISION.match(text):
            kind, number, rest = (
                match.group(1).lower().replace("-", ""),
                match.group(2),
                match.group(3),
            )
            if rest and not is_title_like(rest):
                return False
            word = kind.capitalize()
            number = number.upper() if re.fullmatch(r"[ivxlcdm]+", number, re.I) else number
            section = self.open_section(number, rest, DIVISION_RANK[kind], f"{word} {number}")
            section.awaiting_title = not rest
            self.seen_division = True
            self.heading_number = self.list_item = None  # a Part may number its sections anew
            return True
        # In an act's annex, "Article 2 Article 2" is a correlation table's row and "Article 5"
        # a model text's heading: the act's own articles all come before its annexes.
        in_annex = self.eu_style and self.annex is not None
        if (match := article_heading(text)) and not self._cites_on() and not in_annex:
            number, rest = match.group(1), match.group(2)
            section = self.open_section(number, rest, ARTICLE_RANK, f"Article {number}")
            section.awaiting_title = not rest
            self.seen_division = True
            return True
        if (match := SECTION_SIGN.match(text)) and is_title_like(match.group(2) or "X"):
            number, rest = match.group(1), match.group(2)
            section = self.open_section(number, rest, SECTION_SIGN_RANK, f"§ {number}")
            section.awaiting_title = not rest
            return True
        # In an annex, "3.3. The quality management system ..." is a point whose first line
        # looks like a title; only a line set as a heading heads a part there.
        annexed = self.annex is not None and category != "Title"
        if (match := DOTTED.match(text)) and is_title_like(match.group(2)) and not annexed:
            number = match.group(1)
            self.open_section(number, match.group(2), 6.0 + number.count("."), number)
            return True
        numbered = NUMBERED.match(text) or NUMBERED_HEADING.match(text)
        if (
            numbered
            and _heads_section(numbered.group(2))
            and self.enclosing(ARTICLE_RANK) is None
            and (category == "Title" or numbered.group(2).isupper() or len(numbered.group(2)) < 60)
        ):
            section = self.open_section(
                numbered.group(1), numbered.group(2), 6.0, numbered.group(1)
            )
            if self.profile == "plain" and NUMBERED.match(text) and numbered.group(1).isdigit():
                self.heading_number, self.list_item = int(numbered.group(1)), None
                self.heading_section = section
            return True
        return False

    def _annex_heading(self, text: str) -> bool:
        """An act's annex ("ANNEX III") and its lettered parts ("A. ‘General’"): what they
        number is "Annex III, point 1", never a paragraph of the article before them."""
        if (match := ANNEX.match(text)) and not self._cites_on():
            label = f"Annex {match.group(1)}" if match.group(1) else "Annex"
            self.annex = self.open_section(match.group(1), "", ANNEX_RANK, label)
            self.annex.awaiting_title = True
            return True
        part = ANNEX_PART.match(text)
        if self.annex is None or part is None or not is_title_like(part.group(2)):
            return False
        self.open_section(
            part.group(1),
            part.group(2),
            ANNEX_PART_RANK,
            f"{self.annex.label}, Section {part.group(1)}",
        )
        return True

    def _annex_point(self, number: str) -> str | None:
        """The ref of a numbered point inside an annex, or None outside one."""
        if self.annex is None:
            return None
        section = self.current_section()
        base = section.label if section and section.label.startswith("Annex") else self.annex.label
        return f"{base}, point {number}"

    def _cites_on(self) -> bool:
        """The open sentence asks for a reference ("... pursuant to" / "Article 81."): what
        follows on the next line is that reference, never a heading, however the lines fall
        into layout paragraphs."""
        last = self.last_line.rstrip()
        return (
            self.unit is not None
            and self.unit.open_sentence
            and last[-1:].isalpha()
            and CITING_END.search(last) is not None
        )

    def _list_item(self, text: str) -> bool:
        """In a plain document (a policy), a list numbered "1." inside a numbered section is
        the section's text, not sections of its own: a "1." that does not continue the
        sections' sequence opens such a list, and while it runs the number after its last item
        continues it (the innermost count goes on first, as a reader counts). The list is
        the text of the unit it stands in. Only directly under a section headed "N." itself:
        under its "Guidance" heading, "1." numbers the guidance notes."""
        match = NUMBERED.match(text)
        if (
            self.profile != "plain"
            or self.heading_number is None
            or match is None
            or self.current_section() is not self.heading_section
        ):
            return False
        number = int(match.group(1))
        running = self.list_item is not None and number == self.list_item + 1
        if not running and not (number == 1 and self.heading_number >= 1):
            self.list_item = None
            return False
        self.list_item = number
        self.continue_unit(text, point=False)
        return True

    def _generic_heading(self, text: str) -> None:
        numbered = [s for s in self.stack if s.number is not None]
        base = numbered[-1].rank if numbered else 0.0
        section = self.open_section(None, text, base + 0.5, "")
        if GUIDANCE.match(text) and self.last_rule is not None:
            self.guidance[id(section)] = self.last_rule
        if self.contract:
            self.clause = None
            self.points.clear()
        else:
            # a heading wrapped onto a line of its own ("... before the date of initial" /
            # "application") goes on in that line, as an article's title does
            self.title_open = section

    def _paragraph(self, text: str) -> bool:
        if match := DOTTED.match(text):
            # A rule number ends a guidance block (or any unnumbered heading's block) that
            # followed the rule before it: "4.2.3" belongs under 4.2, not under "Guidance".
            while self.stack and self.stack[-1].number is None and self.stack[-1].rank % 1:
                self.stack.pop()
            self.start_unit(self._annex_point(match.group(1)) or match.group(1), text)
            self.last_rule = match.group(1)
            return True
        if match := APPLICATION.match(text):
            self.start_unit(match.group(1), text)
            return True
        if match := NUMBERED.match(text):
            article = self.enclosing(ARTICLE_RANK) or self.enclosing(SECTION_SIGN_RANK)
            number = match.group(1)
            guided = self.guidance.get(id(self.current_section()))
            if article is not None:
                self.start_unit(f"{article.label}({number})", text)
            elif (point := self._annex_point(number)) is not None:
                self.start_unit(point, text)
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
        if self.eu_style and not self.seen_division and (match := PAREN_NUMBER.match(text)):
            self.start_unit(f"Recital {match.group(1)}", text)
            self.recitals += 1
            return True
        return self._lettered(text)

    def _lettered(self, text: str) -> bool:
        """A lettered subsection heading ("a. Required Customer Information") under a numbered
        section opens "5(a)": in a plain document only, as a heading (title-like), and only in
        sequence, "a" first under the open number, then each letter after the one before while
        that subsection is still open; a lettered line out of sequence is text."""
        match = LETTERED_HEADING.match(text)
        if self.profile != "plain" or match is None or not _lettered_title(match.group(2)):
            return False
        letter, parent = match.group(1), None
        if letter == "a":
            section = self.current_section()
            numbers = [self.unit.base if self.unit else None, section.number if section else None]
            parent = next((n for n in numbers if n and NUMBERED_SECTION.match(n)), None)
        elif self.letter is not None and ord(letter) == ord(self.letter[1]) + 1:
            open_ref = f"{self.letter[0]}({self.letter[1]})"
            parent = self.letter[0] if self.unit and self.unit.base == open_ref else None
        if parent is None:
            return False
        self.letter = (parent, letter)
        self.start_unit(f"{parent}({letter})", text)
        return True
