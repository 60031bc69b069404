"""CLML, the XML legislation.gov.uk publishes (UK Acts and instruments): "section 7(2)(a)",
"Schedule 1, paragraph 3(2)".

P1 is a section (a paragraph inside a Schedule), P2 its subsection, P3 its paragraph, P4 its
sub-paragraph, each cited by its parent's ref and "(n)". A provision's own words are one unit,
and each numbered level below it is another. Text an amendment quotes (BlockAmendment) stays text
of the provision that quotes it: its P1s and P2s belong to the amended Act and are never units
here. Parts, Chapters and cross-headings are the path; margin notes (the side notes that cite
other Acts) and footnotes are left out of the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from lxml import etree

from transforms.reading.legal_xml.read import local
from transforms.reading.legal_xml.xml_rows import Outline, child, children, clean, text_of

LEVELS = ("P1", "P2", "P3", "P4", "P5", "P6", "P7")
_GROUPS = (
    "Part",
    "Chapter",
    "Pblock",
    "PsubBlock",
    "EUPart",
    "EUTitle",
    "EUChapter",
    "EUSection",
    "EUSubsection",
    "Division",
)
_STRUCTURE = (*LEVELS, *_GROUPS, "P1group", "Schedules", "Schedule", "Number", "Title", "Pnumber")
_SKIP = ("MarginNoteRef", "FootnoteRef", "Commentary", "CommentaryRef", "Footnote", "Footnotes")
_BLOCKS = ("Text", "Title", "Para", "ListItem", "tr", "P")
# How an instrument cites its P1s: by its kind, as its title names it.
_CHARACTERS = {
    "NonBreakingSpace": " ",
    "EnDash": "–",
    "EmDash": "—",
    "Minus": "−",
    "Ellipsis": "…",
    "LinePlaceholder": "…",
    "DotPadding": " ",
}
_BODIES = ("Body", "EUBody", "Schedules")
_WORDED = re.compile(r"^[^\W\d]+\.?\s")
_PROVISION = (
    (re.compile(r"\bRegulations\b"), "regulation "),
    (re.compile(r"\bOrder\b"), "article "),
    (re.compile(r"\bRules\b"), "rule "),
)


def _render(element: etree._Element) -> str | None:
    """A named character (<Character Name="NonBreakingSpace"/>) as itself; a quoted
    provision's number as printed: "(4)" for a subsection, "4" for a section."""
    if local(element) == "Character":
        return _CHARACTERS.get(element.get("Name", ""), " ")
    if local(element) != "Pnumber":
        return None
    number = clean(text_of(element))
    parent = element.getparent()
    return f"{number} " if parent is not None and local(parent) == "P1" else f"({number}) "


def _text(element: etree._Element) -> str:
    return text_of(element, skip=_SKIP, blocks=_BLOCKS, render=_render)


def _label(element: etree._Element, name: str) -> str:
    found = child(element, name)
    return _text(found) if found is not None else ""


def _contents(element: etree._Element) -> list[etree._Element]:
    """Children, with the P1para/P2para... containers opened."""
    found = []
    for node in element:
        if local(node).endswith("para") and local(node) not in ("Para",):
            found += _contents(node)
        elif local(node):
            found.append(node)
    return found


def _footnotes(outline: Outline, nodes: list[etree._Element], notes: dict[str, str]) -> None:
    """The footnotes the unit's words call (FootnoteRef), as notes of that unit."""
    for node in nodes:
        for call in (n for n in node.iter() if local(n) == "FootnoteRef"):
            if (text := notes.get(call.get("Ref", ""))) is not None:
                outline.footnote(text)


def _provision(outline: Outline, element: etree._Element, ref: str, notes: dict[str, str]) -> None:
    """One numbered provision: its own words as the unit `ref`, then its numbered levels."""
    nodes = _contents(element)
    own = [n for n in nodes if local(n) not in (*LEVELS, "Pnumber", "Title")]
    words = clean("\n".join(_text(n) for n in own))
    mark = f"({_label(element, 'Pnumber')}) " if local(element) != "P1" else ""
    if words:
        outline.unit(ref, f"{mark}{words}")
        _footnotes(outline, own, notes)
    for level in (n for n in nodes if local(n) in LEVELS):
        _provision(outline, level, f"{ref}({_label(level, 'Pnumber')})", notes)


@dataclass(frozen=True)
class _Context:
    """What a walk cites by: the word before a P1's number ("section ", "Schedule 1, paragraph
    "), the ref loose text takes (a Schedule's), and the document's footnotes by id."""

    prefix: str
    owner: str | None
    notes: dict[str, str]


def _section(outline: Outline, p1: etree._Element, depth: int, at: _Context, title: str) -> None:
    number = _label(p1, "Pnumber")
    label = number if _WORDED.match(number) else f"{at.prefix}{number}"
    title = title or _label(p1, "Title")
    outline.heading(depth, label, title, clean(f"{label} {title}"))
    _provision(outline, p1, label, at.notes)


def _group(outline: Outline, node: etree._Element, depth: int, at: _Context) -> None:
    """A Part, Chapter or cross-heading; inside a Schedule its loose text (a table) is cited
    as the Schedule's Part ("Schedule 1, Part II")."""
    number, title = _label(node, "Number"), _label(node, "Title")
    outline.division(depth, number or None, title, clean(f"{number} {title}"))
    owner = f"{at.owner}, {_cited(number)}" if at.owner and number else at.owner
    _walk(outline, node, depth + 1, replace(at, owner=owner))


def _walk(outline: Outline, element: etree._Element, depth: int, at: _Context) -> None:
    loose: list[etree._Element] = []
    for node in element:
        name = local(node)
        if name in _GROUPS:
            _group(outline, node, depth, at)
        elif name == "P1group":
            p1s = children(node, "P1")
            title = _label(node, "Title")
            if len(p1s) == 1 and not children(node, *_GROUPS, "P1group"):
                _section(outline, p1s[0], depth, at, title)
            else:
                outline.division(depth, None, title, title)
                _walk(outline, node, depth + 1, at)
        elif name == "P1":
            _section(outline, node, depth, at, "")
        elif name == "Schedules":
            _walk(outline, node, depth, at)
        elif name == "Schedule":
            _schedule(outline, node, depth, at)
        elif name and name not in _STRUCTURE and name not in ("Reference", "TitleBlock"):
            loose.append(node)
    if loose:
        outline.unit(at.owner, clean("\n".join(_text(n) for n in loose)))
        _footnotes(outline, loose, at.notes)


def _cited(number: str) -> str:
    """ "SCHEDULE 1" as it is cited: "Schedule 1"."""
    return " ".join(word.capitalize() if word.isupper() else word for word in number.split())


def _schedule(outline: Outline, schedule: etree._Element, depth: int, at: _Context) -> None:
    label = _cited(_label(schedule, "Number"))
    block = child(schedule, "TitleBlock")
    title = _label(block, "Title") if block is not None else _label(schedule, "Title")
    outline.heading(depth, label, title, clean(f"{label} {title}"))
    body = child(schedule, "ScheduleBody")
    if body is not None:
        _walk(outline, body, depth + 1, replace(at, prefix=f"{label}, paragraph ", owner=label))


def _recitals(outline: Outline, preamble: etree._Element, notes: dict[str, str]) -> None:
    """An EU act's recitals: the preamble's numbered divisions ("(1)")."""
    numbered = [(d, _label(d, "Number").strip("() ")) for d in children(preamble, "Division")]
    numbered = [(d, n) for d, n in numbered if n]
    if numbered:
        outline.division(1, None, "Recitals", "Recitals")
    for division, number in numbered:
        own = [n for n in division if local(n) and local(n) != "Number"]
        outline.unit(f"Recital {number}", f"({number}) {clean(' '.join(_text(n) for n in own))}")
        _footnotes(outline, own, notes)


def read(root: etree._Element) -> Outline:
    outline = Outline()
    title = next((node for node in root.iter() if local(node) == "title"), None)
    name = _text(title) if title is not None else ""
    outline.title(name)
    notes = {note.get("id", ""): _text(note) for note in root.iter() if local(note) == "Footnote"}
    prefix = next((word for pattern, word in _PROVISION if pattern.search(name)), "section ")
    for node in root.iter():
        kind = local(node)
        if kind in ("LongTitle", "DateOfEnactment"):
            # Front matter as the Act prints it, its Royal Assent "[23rd November 2000]" under
            # the long title (transforms.structure.inferred reads the date from it).
            outline.unit(None, _text(node))
        elif kind == "EUPreamble":
            _recitals(outline, node, notes)
        elif kind in _BODIES and local(node.getparent()) != "BlockAmendment":
            at = _Context("Article " if kind == "EUBody" else prefix, None, notes)
            _walk(outline, node, 1, at)
    return outline
