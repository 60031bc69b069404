"""USLM, the US Code's XML (uscode.house.gov): sections cited "§ 512(c)(1)(A)(i)".

A section's own words (its chapeau, content and continuation) are one unit, and so is every
subsection, paragraph, subparagraph, clause, subclause, item and subitem, each cited by its
parent's ref and its own number, down to the last level. Notes, source credits and the editorial
and statutory notes after a section are kept as notes of that section, apart from the statute,
so they never outrank it in a search. A section that is repealed, renumbered or transferred
keeps only its bracketed line, as a note: it has no text in force to cite. The editorial
footnotes ("So in original. Probably should be ...") are no words of the statute either: their
call-outs are left out and each becomes a note of the unit that calls it (of the section or
division, for one in a heading), as the XHTML reader keeps them.
"""

from __future__ import annotations

from collections.abc import Collection

from lxml import etree

from transforms.reading.legal_xml.read import local
from transforms.reading.legal_xml.usc_levels import DIVISION_NAMES as DIVISIONS
from transforms.reading.legal_xml.usc_levels import LEVEL_NAMES as LEVELS
from transforms.reading.legal_xml.xml_rows import (
    Outline,
    capitalised,
    child,
    children,
    clean,
    text_of,
)

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


def _is_footnote(node: etree._Element) -> bool:
    """A footnote: USLM 1's <note type="footnote">, USLM 2's <footnote>."""
    name = local(node)
    return name == "footnote" or (name in ("note", "notes") and node.get("type") == "footnote")


def _unprinted(node: etree._Element) -> str | None:
    """Nothing ("") for what is no word of the text it stands in: a footnote and its call-out
    (<ref class="footnoteRef">1</ref>). None reads the node as it is."""
    callout = local(node) == "ref" and "footnoteRef" in (node.get("class") or "")
    return "" if callout or _is_footnote(node) else None


def _words(
    element: etree._Element, skip: Collection[str] = (), blocks: Collection[str] = ()
) -> str:
    return text_of(element, skip=skip, blocks=blocks, render=_unprinted)


def _footnotes(element: etree._Element, units: Collection[etree._Element] = ()) -> list[str]:
    """The footnotes `element` holds, not those of its `units` or its notes (each reads its
    own), without their numbers."""
    found = []
    for node in element:
        if _is_footnote(node):
            found.append(_words(node, skip=("num", "sup"), blocks=_BLOCKS))
        elif local(node) and local(node) not in _NOTES and not any(node is u for u in units):
            found += _footnotes(node)
    return [text for text in found if text]


def _number(element: etree._Element) -> str:
    num = child(element, "num")
    if num is None:
        return ""
    return (num.get("value") or _words(num).strip("()§. —-")).strip()


def _heading(element: etree._Element) -> str:
    heading = child(element, "heading")
    return _words(heading).strip(" .—-") if heading is not None else ""


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
        if local(node) and local(node) not in left_out and _unprinted(node) is None:
            parts += [_words(node, skip=_NOTES, blocks=_BLOCKS), "\n"]
        parts.append((node.tail or "").replace("\n", " "))
    return clean("".join(parts))


def _label_text(element: etree._Element) -> str:
    """ "(a) Rights of Attribution and Integrity.—" as printed in front of the unit's words."""
    num = child(element, "num")
    heading = child(element, "heading")
    parts = [
        _words(num) if num is not None else "",
        _words(heading) if heading is not None else "",
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
    find (the XHTML reader, transforms.reading.legal_xml.uscode_html, prints it the same way)."""
    units = _units(element)
    opening = [c for c in element if local(c) in ("chapeau", "content", "p") and _words(c)]
    if opening or not units:
        return _joined(_label_text(element), _own_text(element))
    after = [_words(c, skip=_NOTES, blocks=_BLOCKS) for c in children(element, "continuation")]
    return "\n".join([_label_text(element), *(_printed(u) for u in units), *after])


def _level(outline: Outline, element: etree._Element, ref: str) -> None:
    outline.unit(ref, _printed(element))
    for footnote in _footnotes(element, _units(element)):
        outline.footnote(footnote)
    for sub in _units(element):
        _level(outline, sub, f"{ref}({_number(sub)})")
    _notes(outline, element)


def _note(outline: Outline, note: etree._Element) -> None:
    """One note, or each note of a <notes> group, with its heading ("Amendments")."""
    if local(note) == "notes":
        for inner in children(note, "note", "footnote"):
            _note(outline, inner)
    elif _is_footnote(note):
        outline.note(_words(note, skip=("num", "sup"), blocks=_BLOCKS))
    else:
        outline.note(_words(note, blocks=_BLOCKS), _heading(note) or None)
        for footnote in _footnotes(note):
            outline.note(footnote)


def _notes(outline: Outline, element: etree._Element) -> None:
    """The notes of a section or level; its footnotes are read with its text (_footnotes)."""
    for note in children(element, *_NOTES):
        if not _is_footnote(note):
            _note(outline, note)


def _section(outline: Outline, element: etree._Element, depth: int) -> None:
    number = _number(element)
    heading = _heading(element)
    label = f"§ {number}"
    num = child(element, "num")
    outline.heading(
        depth, label, heading, clean(f"{_words(num) if num is not None else label} {heading}")
    )
    if element.get("status") in _NOT_IN_FORCE:
        outline.note(_words(element, skip=("notes",), blocks=_BLOCKS))
        _notes(outline, element)
        return
    own = _own_text(element)
    if own:
        outline.unit(label, own)
    for footnote in _footnotes(element, _units(element)):
        # One the section's own words call goes with them; one in its heading, with the section.
        if own:
            outline.footnote(footnote)
        else:
            outline.note(footnote)
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
            number = _words(num).strip(" —-") if num is not None else ""
            heading = capitalised(_heading(node))
            display = clean(f"{number}—{heading}" if number and heading else number or heading)
            outline.division(depth, number or None, heading, display)
            for footnote in _footnotes(node, children(node, "section", *DIVISIONS)):
                outline.note(footnote)
            _walk(outline, node, depth + 1)
        elif name in _NOTES and not _is_footnote(node):
            _note(outline, node)


def read(root: etree._Element) -> Outline:
    outline = Outline()
    main = child(root, "main")
    body = main if main is not None else root
    top = child(body, *DIVISIONS)
    if top is not None:
        num = child(top, "num")
        number = _words(num).strip(" —-") if num is not None else ""
        heading = capitalised(_heading(top))
        outline.title(clean(f"{number}—{heading}" if number and heading else number or heading))
    _walk(outline, body, 1)
    return outline
