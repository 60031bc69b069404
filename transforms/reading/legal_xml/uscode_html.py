"""The US Code as the Office of the Law Revision Counsel renders it in XHTML (uscode.house.gov).

The OLRC's XHTML is generated from the same database as its USLM, and says what each block is
twice over: comments open and close a field ("field-start:statute", "field-start:notes",
"field-start:sourcecredit") and CSS classes name the block ("section-head",
"statutory-body-2em", "note-body"). So it is read like markup, not like text: headings open
chapters and sections, the statute field holds the units, and everything else of a section
(source credit, editorial and statutory notes, footnotes) becomes notes of that section, apart
from the statute, as the USLM reader keeps them.

Only the labels must be read from the text: "(c) Exceptions.—(1) The modification ..." opens
subsection (c) with its heading and its paragraph (1) on one line. Which level a label belongs
to is decided by transforms.reading.legal_xml.usc_levels, with the class's indentation as a hint.
Blocks without a label continue the unit they are indented under; in a section's unnumbered
text (the definitions of § 101) the labels inside a block are its words, not units, since no
ref could tell apart the many "(1)"s they print.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lxml import etree, html

from transforms.reading.legal_xml.usc_levels import DIVISION_NAMES, LABEL, Levels
from transforms.reading.legal_xml.xml_rows import Outline, capitalised, clean

# What marks a file as the OLRC's rendering: its field comments and block classes.
_MARKERS = ("field-start:statute", 'class="section-head"')
_FIELD = re.compile(r"^\s*field-(start|end):([\w-]+)\s*$")
_INDENT = re.compile(r"-(\d+)em")
_SECTION_HEAD = re.compile(r"^\[?\s*§+\s*(\d+[A-Za-z]*(?:[–-]\d+[A-Za-z]*)?)\.?\s*(.*?)\]?\s*$")
_HEADING_END = re.compile(r"\.?\s*—\s*")
_BLOCK_TAGS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "table"}
# Fields that hold a note, beside every "...-note" field: each ends the note before it.
_NOTE_FIELDS = {"notes", "sourcecredit", "footnote", "repealsummary", "titleenactmentcredit"}


def is_uscode_html(text: str) -> bool:
    """The file is the OLRC's XHTML of the US Code (a title, chapter or section)."""
    head = text[:2_000_000]
    return all(marker in head for marker in _MARKERS)


def _indent(classes: str) -> int:
    match = _INDENT.search(classes)
    return int(match.group(1)) if match else 0


def _text(block: etree._Element) -> str:
    """A block's words; footnote call-outs (<sup> in a link) left out, table cells apart."""
    parts: list[str] = []

    def walk(node: etree._Element) -> None:
        if node.text:
            parts.append(node.text)
        for child in node:
            tag = child.tag if isinstance(child.tag, str) else ""
            if tag != "sup":
                walk(child)
                if tag in ("td", "th"):
                    parts.append(" ")
                elif tag == "tr":
                    parts.append("\n")
            if child.tail:
                parts.append(child.tail)

    walk(block)
    return clean("".join(parts))


@dataclass
class _Unit:
    """A unit's ref (None: unnumbered text), its label, heading and words, and the words printed
    after its children (the flush "continuation" that closes a list)."""

    ref: str | None
    text: str
    chapeau: bool = True  # it has words of its own before its children
    after: list[str] = field(default_factory=list)


@dataclass
class _Section:
    """One section being read: its own words and its units in order."""

    ref: str
    own: list[str] = field(default_factory=list)
    units: list[_Unit] = field(default_factory=list)
    free_indent: int | None = None  # inside unnumbered text indented this far


class _Reader:
    def __init__(self) -> None:
        self.outline = Outline()
        self.fields: list[str] = []
        self.division_depth = 0
        self.section: _Section | None = None
        self.levels = Levels()
        self.note_title: str | None = None
        self.note_lines: list[str] = []

    # -- fields -------------------------------------------------------------------------------

    def comment(self, text: str) -> None:
        match = _FIELD.match(text or "")
        if not match:
            return
        kind, name = match.groups()
        if name.endswith("-note") or name in _NOTE_FIELDS:
            self.flush_note()
        if kind == "start":
            self.fields.append(name)
        elif name in self.fields:
            while self.fields.pop() != name:
                pass

    def flush_note(self) -> None:
        if self.note_lines:
            self.outline.note("\n".join(self.note_lines), self.note_title)
        self.note_lines = []
        self.note_title = None

    # -- blocks -------------------------------------------------------------------------------

    def block(self, element: etree._Element) -> None:
        classes = element.get("class") or ""
        text = _text(element)
        if not text:
            return
        current = self.fields[-1] if self.fields else ""
        if "usc-title-head" in classes:
            self.outline.title(capitalised(text))
        elif "section-head" in classes:
            self.open_section(text)
        elif current == "structuralhead" or classes.endswith("chapter-head"):
            self.division(text)
        elif current == "statute" and self.section is not None:
            self.statute(text, classes, element)
        elif current == "analysis":
            return  # the chapter's table of sections: its headings are read where they stand
        elif element.tag.startswith("h"):
            self.flush_note()
            self.note_title = text
        else:
            self.note_lines.append(text)

    def division(self, text: str) -> None:
        self.close_section()
        words = text.split()
        kind = words[0].lower() if words else ""
        depth = DIVISION_NAMES.index(kind) if kind in DIVISION_NAMES else self.division_depth or 1
        number, _, heading = text.partition("—")
        heading = capitalised(heading.strip())
        display = clean(f"{capitalised(number.strip())}—{heading}" if heading else text)
        self.outline.division(depth, capitalised(number.strip()) or None, heading, display)
        self.division_depth = depth

    def open_section(self, text: str) -> None:
        self.close_section()
        match = _SECTION_HEAD.match(text)
        if match is None:
            self.note_title = text
            return
        number, heading = match.groups()
        label = f"§ {number.replace('–', '-')}"
        display = clean(f"§ {number}. {heading}".rstrip(". ") if heading else label)
        self.outline.heading(self.division_depth + 1, label, heading.rstrip("."), display)
        self.section = _Section(label)
        self.levels.reset()
        if text.lstrip().startswith("["):
            # Repealed, renumbered or transferred: nothing in force to cite, only its note.
            self.outline.note(text)

    def close_section(self) -> None:
        self.flush_note()
        section = self.section
        if section is None:
            return
        self.section = None
        if section.own:
            self.outline.unit(section.ref, "\n".join(section.own))
        for ref, text in _resolved(section.units):
            self.outline.unit(ref, text)

    # -- statute ------------------------------------------------------------------------------

    def statute(self, text: str, classes: str, element: etree._Element) -> None:
        section = self.section
        assert section is not None
        indent = _indent(classes)
        if element.tag == "table":
            self.continuation(text, indent)
            return
        match = LABEL.match(text)
        if match is None:
            self.continuation(text, indent)
            return
        if section.free_indent is not None and indent > section.free_indent:
            section.units[-1].text += f"\n{text}"
            return
        section.free_indent = None
        # A heading set in small capitals, its ".—" sometimes inside the small capitals too.
        headings = [
            clean("".join(h.itertext())).rstrip(" .—-") for h in element.iter("cap-smallcap")
        ]
        rest = text
        chained = False
        labelled: list[tuple[str, str]] = []  # (ref, label and heading) of each label on the line
        while (match := LABEL.match(rest)) is not None:
            label = match.group(1)
            level = self.levels.place(label, indent, chained)
            if level is None:
                break
            ref = self.levels.push(level, label, section.ref, indent)
            printed = match.group(0)
            rest = rest[match.end() :].lstrip()
            heading = next((h for h in headings if h and rest.startswith(h)), None)
            # The heading runs to its ".—", past the small capitals where they stop early
            # ("<cap-smallcap>... on January</cap-smallcap> 1, 1978.—").
            end = _HEADING_END.search(rest, len(heading), len(heading) + 40) if heading else None
            if end is not None:
                printed = f"{printed} {rest[: end.start()].rstrip(' .')}.—"
                rest = rest[end.end() :]
            labelled.append((ref, printed))
            chained = True
        if not labelled:
            self.continuation(text, indent)
            return
        for index, (ref, printed) in enumerate(labelled):
            if index < len(labelled) - 1:
                section.units.append(_Unit(ref, printed, chapeau=False))
            else:
                words = f"{printed}{'' if printed.endswith('—') else ' '}{rest}"
                section.units.append(_Unit(ref, clean(words), chapeau=bool(rest)))

    def continuation(self, text: str, indent: int) -> None:
        """An unlabelled block: words of the unit it is indented under, or unnumbered text."""
        section = self.section
        assert section is not None
        if text.startswith("["):
            # "[(i) Repealed. Pub. L. 115–264 ...]": an editorial line where a unit was struck.
            self.outline.note(text)
            return
        stack = self.levels.stack
        if not stack:
            if indent == 0 and not section.units:
                section.own.append(text)
            else:
                # Unnumbered text (a definition): its own paragraph, labels inside it its words.
                section.units.append(_Unit(None, text))
                section.free_indent = indent
            return
        if indent > stack[-1].indent or text.endswith(("—", ":")):
            # A further paragraph of the unit just read, or words that open its next list
            # ("except that—"), whatever their indentation.
            target = stack[-1]
        else:
            # Flush text after a list closes the unit that opened the list: the deepest one with
            # children printed at or left of this block.
            target = next(
                (unit for unit in reversed(stack[:-1]) if unit.indent <= indent),
                stack[0],
            )
        unit = next((u for u in reversed(section.units) if u.ref == target.ref), None)
        if unit is None:
            section.units.append(_Unit(None, text))
        elif unit is section.units[-1]:
            unit.text += f"\n{text}"
        else:
            unit.after.append(text)

    # -- the walk -----------------------------------------------------------------------------

    def walk(self, root: etree._Element) -> Outline:
        for node in root.iter():
            if isinstance(node, etree._Comment):
                self.comment(node.text or "")
            elif isinstance(node.tag, str) and node.tag in _BLOCK_TAGS:
                if any(
                    isinstance(a.tag, str) and a.tag in _BLOCK_TAGS for a in node.iterancestors()
                ):
                    continue
                self.block(node)
        self.close_section()
        return self.outline


def _resolved(units: list[_Unit]) -> list[tuple[str | None, str]]:
    """(ref, text) of a section's units. A label printed twice in one section is a word of
    unnumbered text, so it and its children join the paragraph before them. A unit with no
    words before its children (only its label and heading) is printed whole, children
    included: its opening words are its first child's, as the Code is read, and a label
    alone ("(d)") is no paragraph to cite or to find."""
    counts: dict[str, int] = {}
    for unit in units:
        if unit.ref is not None:
            counts[unit.ref] = counts.get(unit.ref, 0) + 1
    ambiguous = [ref for ref, count in counts.items() if count > 1]
    kept: list[_Unit] = []
    for unit in units:
        repeated = unit.ref is not None and any(
            unit.ref == bad or unit.ref.startswith(f"{bad}(") for bad in ambiguous
        )
        if repeated and kept:
            kept[-1].text += f"\n{unit.text}"
            kept[-1].after += unit.after
        else:
            kept.append(_Unit(None, unit.text, unit.chapeau, unit.after) if repeated else unit)
    rows: list[tuple[str | None, str]] = []
    for index, unit in enumerate(kept):
        text = unit.text
        if not unit.chapeau and unit.ref is not None:
            inside = [
                u.text
                for u in kept[index + 1 :]
                if u.ref is not None and u.ref.startswith(f"{unit.ref}(")
            ]
            text = "\n".join([text, *inside])
        rows.append((unit.ref, "\n".join([text, *unit.after])))
    return rows


def read_uscode_html(text: str) -> Outline:
    """The outline of an OLRC XHTML file of the US Code."""
    parser = html.HTMLParser(
        encoding="utf-8", remove_comments=False, no_network=True, huge_tree=False
    )
    root = html.document_fromstring(text.encode("utf-8"), parser=parser)
    return _Reader().walk(root)
