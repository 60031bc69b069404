"""USLM, the US Code's XML (uscode.house.gov): sections cited "§ 512(c)(1)(A)(i)".

A section's own words (its chapeau, content and continuation) are one unit, and so is every
subsection, paragraph, subparagraph, clause, subclause, item and subitem, each cited by its
parent's ref and its own number, down to the last level. Notes, source credits and the editorial
and statutory notes after a section are kept as notes of that section, apart from the statute,
so they never outrank it in a search. A section that is repealed, renumbered or transferred
keeps only its bracketed line, as a note: it has no text in force to cite.
"""

from __future__ import annotations

from lxml import etree

from transforms.legal_xml.outline import Outline, capitalised, child, children, clean, text_of
from transforms.legal_xml.read import local
from transforms.legal_xml.usc_levels import DIVISION_NAMES as DIVISIONS
from transforms.legal_xml.usc_levels import LEVEL_NAMES as LEVELS

# A section in one of these states has no text in force (USLM's status values).
_NOT_IN_FORCE = {
    "repealed",
    "renumbered",
    "transferred",
    "omitted",
    "reserved",
    "vacant",
    "expired",
    "terminated",
    "eliminated",
}
_NOTES = ("notes", "note", "sourceCredit")
# Never a unit's text: its children that are units, its notes, its label and heading (written
# in front by the unit itself) and tables of contents.
_NOT_OWN = (*LEVELS, *_NOTES, "num", "heading", "toc", "layout")
_BLOCKS = ("p", "chapeau", "content", "continuation", "tr", "heading")


def _number(element: etree._Element) -> str:
    num = child(element, "num")
    if num is None:
        return ""
    return (num.get("value") or text_of(num).strip("()§. —-")).strip()


def _heading(element: etree._Element) -> str:
    heading = child(element, "heading")
    return text_of(heading).strip(" .—-") if heading is not None else ""


def _units(element: etree._Element) -> list[etree._Element]:
    """The levels under `element` that are units of their own. Numbers repeated among them are
    labels inside unnumbered text (the definitions of § 101 each number their own "(1)", "(2)"):
    no ref could tell them apart, so they stay words of the unit that holds them."""
    levels = children(element, *LEVELS)
    numbers = [_number(level) for level in levels]
    return levels if len(set(numbers)) == len(numbers) else []


def _own_text(element: etree._Element) -> str:
    """The words of `element` itself: its direct children but its label, heading, notes and the
    levels that are units of their own."""
    left_out = {*_NOT_OWN} if _units(element) else {*_NOT_OWN} - set(LEVELS)
    parts = [(element.text or "").replace("\n", " ")]
    for node in element:
        if local(node) and local(node) not in left_out:
            parts += [text_of(node, skip=_NOTES, blocks=_BLOCKS), "\n"]
        parts.append((node.tail or "").replace("\n", " "))
    return clean("".join(parts))


def _label_text(element: etree._Element) -> str:
    """ "(a) Rights of Attribution and Integrity.—" as printed in front of the unit's words."""
    num = child(element, "num")
    heading = child(element, "heading")
    parts = [
        text_of(num) if num is not None else "",
        text_of(heading) if heading is not None else "",
    ]
    return " ".join(p for p in parts if p)


def _joined(label: str, words: str) -> str:
    """ "(a) Scope.—" and its words, run together after the dash as the Code prints them."""
    if not words:
        return label
    return clean(f"{label}{'' if label.endswith('—') else ' '}{words}")


def _printed(element: etree._Element) -> str:
    """A unit's text: its label, heading and own words; a unit with no words before its
    children (only "(a) Criminal Infringement.—") is printed whole, children included, so its
    opening words are its first child's, as the Code is read, and a label alone is no unit to
    find (the XHTML reader, transforms.legal_xml.uscode_html, prints it the same way)."""
    units = _units(element)
    opening = [c for c in element if local(c) in ("chapeau", "content", "p") and text_of(c)]
    if opening or not units:
        return _joined(_label_text(element), _own_text(element))
    after = [text_of(c, skip=_NOTES, blocks=_BLOCKS) for c in children(element, "continuation")]
    return "\n".join([_label_text(element), *(_printed(u) for u in units), *after])


def _level(outline: Outline, element: etree._Element, ref: str) -> None:
    outline.unit(ref, _printed(element))
    for sub in _units(element):
        _level(outline, sub, f"{ref}({_number(sub)})")
    _notes(outline, element)


def _note(outline: Outline, note: etree._Element) -> None:
    """One note, or each note of a <notes> group, with its heading ("Amendments")."""
    if local(note) == "notes":
        for inner in children(note, "note"):
            _note(outline, inner)
    else:
        outline.note(text_of(note, blocks=_BLOCKS), _heading(note) or None)


def _notes(outline: Outline, element: etree._Element) -> None:
    for note in children(element, *_NOTES):
        _note(outline, note)


def _section(outline: Outline, element: etree._Element, depth: int) -> None:
    number = _number(element)
    heading = _heading(element)
    label = f"§ {number}"
    num = child(element, "num")
    outline.heading(
        depth, label, heading, clean(f"{text_of(num) if num is not None else label} {heading}")
    )
    if element.get("status") in _NOT_IN_FORCE:
        outline.note(text_of(element, skip=("notes",), blocks=_BLOCKS))
        _notes(outline, element)
        return
    own = _own_text(element)
    if own:
        outline.unit(label, own)
    for sub in _units(element):
        _level(outline, sub, f"{label}({_number(sub)})")
    _notes(outline, element)


def _walk(outline: Outline, element: etree._Element, depth: int) -> None:
    for node in element:
        name = local(node)
        if name == "section":
            _section(outline, node, depth)
        elif name in DIVISIONS:
            num = child(node, "num")
            number = text_of(num).strip(" —-") if num is not None else ""
            heading = capitalised(_heading(node))
            display = clean(f"{number}—{heading}" if number and heading else number or heading)
            outline.division(depth, number or None, heading, display)
            _walk(outline, node, depth + 1)
        elif name in _NOTES:
            _note(outline, node)


def read(root: etree._Element) -> Outline:
    outline = Outline()
    main = child(root, "main")
    body = main if main is not None else root
    top = child(body, *DIVISIONS)
    if top is not None:
        num = child(top, "num")
        number = text_of(num).strip(" —-") if num is not None else ""
        heading = capitalised(_heading(top))
        outline.title(clean(f"{number}—{heading}" if number and heading else number or heading))
    _walk(outline, body, 1)
    return outline
