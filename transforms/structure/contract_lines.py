"""Contract lines: what a line of an agreement opens, a clause ("Section 12.1"), an article, an
attachment ("Exhibit B"), a definition or a point ("Section 12.1(b)(ii)"), and when a point
stays inside the clause that leads into it; where a line holds several clauses (a text
conversion lost the breaks between them), and where a label at a line's start only goes on
with the sentence before it.

A contract's units are cited by clause, so every number and every layout paragraph counts;
the numbers themselves are read by numbering.contract.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from transforms.structure.numbering import contract
from transforms.structure.numbering.generic import CITING_END
from transforms.structure.state import BuilderState, Unit
from transforms.structure.tree import Section, is_title_like

# A lead-in and the points it introduces stay one paragraph up to this size ("Section 5.1(b)"
# is then found inside it, as "Article 5(1)(e)" is in the GDPR); past it each point is its own.
LIST_UNIT_CHARS = 1500
# The end of a sentence or lead-in, which a clause's title does not hold.
_SENTENCE_END = re.compile(r"[.;:!?]")


class ContractLines(BuilderState):
    """The contract profile's line classifier, for the builder to call on every line."""

    # The levels of the clause number read last ((5, 2) for "5.2"); None before the first
    # clause and at an attachment's start, whose numbering starts again.
    last_number: tuple[int, ...] | None = None
    # The builder's own (transforms.structure.builder): each clause of a line that holds
    # several is fed to it as a line of its own.
    _feed: Callable[[str, str, int | None], None]

    def _clause_ref(self, number: str) -> str:
        return f"{self.prefix}Section {number}"

    def _label_only(self) -> bool:
        """The open unit is just its label ("(i)", "1.1") and its text comes on the next line."""
        unit = self.unit
        return (
            unit is not None
            and len(unit.lines) == 1
            and bool(contract.LABEL_ONLY.match(unit.lines[0]))
        )

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

    def _leads_into_list(self) -> bool:
        """The open unit's last line leads into a point (": a) ...", "...; and" / "b) ..."): a
        point labelled "a)" on the next line starts there even inside one layout paragraph, as
        a text conversion keeps a list's lines."""
        unit = self.unit
        if unit is None or not unit.lines:
            return False
        tail = unit.lines[-1].rstrip()
        return tail.endswith((":", ";", "—", "; and", "; or"))

    def _point_after_item(self, text: str) -> bool:
        """A point after an item that closes "; and" ("f) ...; and" / "g) ..."): a number there
        may still go on with a citation ("Sections 2.1 and" / "2.2"), a point opens."""
        return bool(contract.CLAUSE_POINT.match(text)) and self._leads_into_list()

    def _inline_clause(self, text: str) -> int | None:
        """Where the first clause that continues the numbering starts inside `text` (a line
        holding several clauses because the conversion lost its breaks), or None; else where a
        run of definitions goes on ('... Canada. "Term" means'). Numbers of a list the line
        runs ("1. Dr Lily Tomas 2. Dr Bernd ...") stay in it, and a line whose clauses hold
        nothing but their titles is a table of contents, left whole."""
        leading = (
            contract.CONTRACT_ARTICLE.match(text)
            or contract.SECTION_CLAUSE.match(text)
            or contract.DOTTED_CLAUSE.match(text)
            or contract.NUMBERED_CLAUSE.match(text)
        )
        last = self.last_number
        cuts: list[tuple[int, int, tuple[int, ...]]] = []  # start, end of label, number
        if leading is not None:
            article = leading.re is contract.CONTRACT_ARTICLE
            last = contract.number_parts(
                f"Article {leading.group(1)}" if article else leading.group(1)
            )
            cuts.append((0, leading.start(2), last))
        listed: set[int] = set()
        for match in contract.INLINE_CLAUSE.finditer(text):
            label, before = match.group(1), text[: match.start()].rstrip()
            parts = contract.number_parts(label)
            bare = contract.BARE_NUMBER.fullmatch(label) is not None
            # a page number glued to a heading ("2 2. TERM") is not a clause's text
            cited = CITING_END.search(before) is not None or not re.search("[A-Za-z]", before)
            if cited or (bare and parts[0] - 1 in listed) or not contract.continues(label, last):
                listed |= {parts[0]} if bare else set()
                continue
            cuts.append((match.start(1), match.end(1), parts))
            last = parts
        inline = [cut for cut in cuts if cut[0] > 0]
        if inline:
            return None if self._contents(text, cuts) else inline[0][0]
        definitions = list(contract.INLINE_DEFINITION.finditer(text))
        if len(definitions) >= 2 or (definitions and contract.DEFINITION.match(text)):
            return definitions[0].start(1)
        return None

    @staticmethod
    def _contents(text: str, cuts: list[tuple[int, int, tuple[int, ...]]]) -> bool:
        """Two or more clauses in a row that hold only a title (no sentence's end before the
        next clause, which is not their first point): a table of contents ("1. Definitions
        2. Purpose and Scope 3. Hosting Services"; "1. RIGHTS GRANTED 2 2. TERM 4")."""
        titles = 0
        for (_, end, number), (start, _, following) in zip(cuts, cuts[1:], strict=False):
            between = text[end:start]
            if (
                following != (*number, 1)
                and len(between) < 100
                and not _SENTENCE_END.search(between)
            ):
                titles += 1
        return titles >= 2

    def _mid_sentence(self, text: str) -> bool:
        """A label at the line's start that goes on with the sentence the line before left open,
        in the same layout paragraph or over a page break: a figure after its number in words
        ("two" / "(2) years"), the rest of a cited clause ("Section 6.3(a)" / "(ii)"), or a
        "Section 13.3" after a word that left the sentence open ("pursuant" / "Section 13.3 or
        13.4, ..."), where a clause heading could not stand."""
        unit = self.unit
        if unit is None or not unit.lines or (self.new_block and unit.last_page == self.page):
            return False
        last = unit.lines[-1].rstrip()
        if text.startswith("(") and contract.CITATION_END.search(last):
            return contract.CLAUSE_POINT.match(text) is not None
        if contract.FIGURE.match(text):
            return contract.NUMBER_WORD_END.search(last) is not None
        return (
            unit.open_sentence and bool(contract.SECTION_CLAUSE.match(text)) and last[-1:].isalpha()
        )

    def _contract_line(self, text: str, category: str) -> bool:
        if self._label_only() and self.unit is not None:  # it has a unit, as `_label_only` says
            self.unit.add(text, join=True)
            return True
        if (cut := self._inline_clause(text)) is not None:
            self._feed(text[:cut].rstrip(), category, self.page)
            self.last_line = text[:cut]
            self.new_block = True
            self._feed(text[cut:], category, self.page)
            return True
        if self._mid_sentence(text):
            return False
        heading_like = category == "Title" or self.new_block
        if not self._starts_here() and not self._point_after_item(text):
            return False
        # "Exhibit 10.4" above the title is the filing's label; attachments follow the body.
        if (match := contract.ATTACHMENT.match(text)) and heading_like and self.clause_seen:
            kind, name, rest = match.group(1).capitalize(), match.group(2), match.group(3)
            if not rest or is_title_like(rest):
                label = f"{kind} {name.upper() if len(name) <= 2 else name}"
                self.prefix = f"{label} "
                self._open_division(name, rest, 0.5, label)
                self.top_number = self.last_number = None
                return True
        if (match := contract.CONTRACT_ARTICLE.match(text)) and heading_like:
            number, rest = match.group(1), match.group(2)
            if not rest or is_title_like(rest):
                self._close_recitals()
                number = number.upper() if re.fullmatch(r"[ivxlc]+", number, re.I) else number
                self.last_number = contract.number_parts(f"Article {number}")
                self.clause_seen = True
                self._open_division(number, rest, 1.0, f"{self.prefix}Article {number}")
                return True
        numbered = (
            contract.SECTION_CLAUSE.match(text)
            or contract.DOTTED_CLAUSE.match(text)
            or contract.NUMBERED_CLAUSE.match(text)
            or contract.CLAUSE_HEADING.match(text)
        )
        if numbered:
            return self._clause(numbered, text, category, heading_like)
        if (definition := contract.DEFINITION.match(text)) and self.new_block:
            term = " ".join(definition.group(1).split())
            ref = f'{self._context()} "{term}"'.strip()
            self.start_unit(ref, text, base=ref)
            return True
        if (point := contract.CLAUSE_POINT.match(text)) and (
            self.new_block or point.group(1) or (point.group(2) and self._leads_into_list())
        ):
            if point.group(3) and not self.new_block:
                return False
            return self._contract_point(
                contract.point_label(point), text, bool(point.group(3)), bare=bool(point.group(2))
            )
        return False

    def _open_division(self, number: str, title: str, rank: float, label: str) -> None:
        section = self.open_section(number, title, rank, label)
        section.awaiting_title = not title
        self.clause = None
        self.points.clear()

    def _context(self) -> str:
        """The clause a point or definition hangs under, or the section it sits in."""
        return self.clause or (self.stack[-1].label if self.stack else "")

    def _close_recitals(self) -> None:
        """The first numbered clause or article ends a recitals heading ("RECITALS",
        "WITNESSETH", "BACKGROUND"): the clauses are the contract's body, not its recitals."""
        for depth, section in enumerate(self.stack):
            if section.number is None and contract.RECITALS_HEADING.match(section.title or ""):
                del self.stack[depth:]
                self.close_unit()
                return

    def _clause(self, numbered: re.Match[str], text: str, category: str, heading: bool) -> bool:
        number, rest = numbered.group(1), numbered.group(2).strip()
        bare = numbered.re is contract.NUMBERED_CLAUSE
        restarts = bare and self.clause is not None and int(number) <= (self.top_number or 0)
        # "1. Year 1 ... 2. Year 2" inside Section 8(A): a list, not Section 1 again.
        if restarts and not (heading and is_title_like(rest) and rest.isupper()):
            return self._contract_point(number, text, False)
        self._close_recitals()
        self.last_number = contract.number_parts(number)
        if bare or numbered.re is contract.CLAUSE_HEADING:
            self.top_number = max(self.top_number or 0, int(number))
        label = self._clause_ref(number)
        self.points.clear()
        self.clause = label
        self.clause_seen = True
        titled = is_title_like(rest) and (category == "Title" or rest.isupper() or len(rest) < 60)
        if not rest or (titled and heading and not contract.runs_in(rest)):
            self._open_division(number, rest, 2.0 + number.count("."), label)
            self.clause = label
            return True
        self._leave_clauses(number)
        self.start_unit(label, text)
        return True

    def _leave_clauses(self, number: str) -> None:
        """Close the clause headings that do not hold clause `number`: after "Section 3
        Ownership Of Work" set as a heading, "4. Confidentiality. Each party ..." is the next
        clause, not a paragraph of section 3, though its heading runs into its text."""
        parts = contract.number_parts(number)
        while self.stack:
            open_clause = self.stack[-1]
            if open_clause.rank < 2.0 or open_clause.label != self._clause_ref(
                open_clause.number or ""
            ):
                return
            held = contract.number_parts(open_clause.number or "")
            if held and parts[: len(held)] == held:
                return
            self.stack.pop()

    def _contract_point(self, label: str, text: str, lettered: bool, bare: bool = False) -> bool:
        """A point: inside the open unit when that unit's text leads into a list, else a unit
        of its own ("Section 12.1(b)"). A point labelled "a)" (`bare`) is always its own unit:
        "Section 1.2(a)" is found inside a paragraph only where the paragraph writes "(a)", so a
        point left in its lead-in as "a)" could never be cited. ("A." points stay in their
        lead-in: there they keep a clause and its list in one paragraph.)"""
        context = self._context()
        place = self.points.push(label)
        kind, unit = self.points.kind, self.unit  # `kind`: the label's, just pushed
        if not bare and kind is not None and unit is not None and self._in_list(text, kind):
            unit.add(text, join=False)
            unit.last_page = self.page
            return True
        ref = f"{context}{place}" if context else f"Recital {label}" if lettered else place
        self.start_unit(ref, text)
        return True

    def number_headings(self) -> None:
        """Agreements that head each group of clauses with an unnumbered title ("Obligations of
        Confidentiality" over 1.1-1.5, "Return of Confidential Information" over text of its
        own) cite a group by its place ("clause 2"). The k-th unnumbered top-level heading from
        the one over the first clause on becomes "Section k", but only where the clauses confirm
        the count: every numbered clause under a heading opens with its k ("1.1" under the
        first) and at least two headings hold one. Its unnumbered paragraphs take its ref."""
        units: dict[int, list[Unit]] = {}
        for unit in self.units:
            if unit.section is not None:
                units.setdefault(id(unit.section), []).append(unit)
        top = [s for s in self.sections if s.parent is None and s.number is None]
        first = next((i for i, s in enumerate(top) if self._clause_numbers(units, s)), None)
        if first is None:
            return
        headings = top[first:]
        confirmed = 0
        for place, section in enumerate(headings, start=1):
            numbers = self._clause_numbers(units, section)
            if any(number.split(".")[0] != str(place) for number in numbers):
                return
            confirmed += bool(numbers)
        if confirmed < 2:
            return
        for place, section in enumerate(headings, start=1):
            label = self._clause_ref(str(place))
            section.number, section.label = str(place), label
            section.path[-1] = f"{label} {section.title}".strip()
            loose = [u for u in units.get(id(section), []) if u.base is None]
            for count, unit in enumerate(loose, start=1):
                unit.ref = label if count == 1 else f"{label} ¶ {count}"
                unit.base = label

    def _clause_numbers(self, units: dict[int, list[Unit]], section: Section) -> list[str]:
        """The numbers of the dotted clauses ("1.1", "4.10") that sit directly in `section`."""
        prefix = self._clause_ref("")
        return [
            u.ref[len(prefix) :]
            for u in units.get(id(section), [])
            if u.ref and u.ref == u.base and u.ref.startswith(prefix) and "." in u.ref
        ]
