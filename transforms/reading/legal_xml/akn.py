"""Akoma Ntoso 3.0 (OASIS LegalDocML), the XML many parliaments and courts publish: "Article 5",
"Article 5(2)(a)", "section 7(2)", "Recital 3".

Its hierarchy is named in the markup: an article or section is a citable unit, the paragraphs,
subsections and points inside it are cited by its ref and their numbers, and parts, chapters and
titles are the path. A provision's own words (intro, content, wrapUp) are one unit, each numbered
level below it another. Text a provision quotes (quotedStructure, embeddedStructure) stays its
text; authorial notes are footnotes of their unit.
"""

from __future__ import annotations

import re

from lxml import etree

from transforms.reading.legal_xml.read import local
from transforms.reading.legal_xml.xml_rows import Outline, child, clean, text_of

# Cited by their own number, with this word in front when the number is bare.
PROVISIONS = {
    "article": "Article ",
    "section": "section ",
    "rule": "rule ",
    "regulation": "regulation ",
}
# Cited as their parent's ref and "(n)".
LEVELS = (
    "paragraph",
    "subparagraph",
    "subsection",
    "point",
    "item",
    "clause",
    "subclause",
    "indent",
    "list",
    "alinea",
    "subrule",
    "sublist",
)
DIVISIONS = (
    "book",
    "part",
    "subpart",
    "title",
    "subtitle",
    "chapter",
    "subchapter",
    "division",
    "subdivision",
    "hcontainer",
    "tome",
    "level",
)
_LABELS = ("num", "heading", "subheading")
_SKIP = ("authorialNote", "noteRef", "num", "heading", "subheading")
_BLOCKS = ("p", "intro", "content", "wrapUp", "tr", "li", "blockList", "listIntroduction")
_WORDED = re.compile(r"^[^\W\d]+\.?\s")


def _text(element: etree._Element) -> str:
    return text_of(element, skip=_SKIP, blocks=_BLOCKS)


def _number(element: etree._Element) -> str:
    num = child(element, "num")
    return clean(text_of(num)) if num is not None else ""


def _heading(element: etree._Element) -> str:
    heading = child(element, "heading")
    return clean(text_of(heading, skip=("authorialNote",))) if heading is not None else ""


def _footnotes(outline: Outline, element: etree._Element) -> None:
    for note in (node for node in element.iter() if local(node) == "authorialNote"):
        outline.footnote(_text(note))


def _parts(element: etree._Element) -> tuple[list[etree._Element], list[etree._Element]]:
    """(the nodes that hold the element's own words, its numbered levels). An unnumbered list
    or alinea is not a level of its own: its intro and points belong to the element."""
    nested = (*LEVELS, *PROVISIONS, *DIVISIONS, *_LABELS)
    words: list[etree._Element] = []
    levels: list[etree._Element] = []
    for node in element:
        name = local(node)
        if name in LEVELS and not _number(node):
            inner_words, inner_levels = _parts(node)
            words += inner_words
            levels += inner_levels
        elif name in LEVELS:
            levels.append(node)
        elif name and name not in nested:
            words.append(node)
    return words, levels


def _own(outline: Outline, element: etree._Element, ref: str, mark: str) -> None:
    """The unit `ref`: the element's own words, then each numbered level below it."""
    nodes, levels = _parts(element)
    words = clean("\n".join(_text(n) for n in nodes))
    if words:
        outline.unit(ref, f"{mark} {words}".strip())
        for node in nodes:
            _footnotes(outline, node)
    for level in levels:
        number = _number(level).strip("().")
        _own(outline, level, f"{ref}({number})", f"({number})")


def _provision(outline: Outline, element: etree._Element, depth: int) -> None:
    number = _number(element).rstrip(".")
    prefix = PROVISIONS[local(element)]
    label = number if _WORDED.match(number) else f"{prefix}{number}"
    heading = _heading(element)
    outline.heading(depth, label, heading, clean(f"{label} {heading}"))
    _own(outline, element, label, "")


def _walk(outline: Outline, element: etree._Element, depth: int) -> None:
    for node in element:
        name = local(node)
        if name in PROVISIONS:
            _provision(outline, node, depth)
        elif name in DIVISIONS:
            number, heading = _number(node), _heading(node)
            outline.division(depth, number or None, heading, clean(f"{number} {heading}"))
            _walk(outline, node, depth + 1)


def _recitals(outline: Outline, preamble: etree._Element) -> None:
    recitals = [node for node in preamble.iter() if local(node) == "recital"]
    if recitals:
        outline.division(1, None, "Recitals", "Recitals")
    for recital in recitals:
        number = _number(recital).strip("().")
        words = _text(recital)
        ref = f"Recital {number}" if number else None
        outline.unit(ref, f"({number}) {words}" if number else words)
        _footnotes(outline, recital)


def _title(document: etree._Element) -> str:
    for name in ("docTitle", "longTitle"):
        found = next((node for node in document.iter() if local(node) == name), None)
        if found is not None:
            return _text(found)
    work = next((node for node in document.iter() if local(node) == "FRBRname"), None)
    return work.get("value", "") if work is not None else ""


def read(root: etree._Element) -> Outline:
    outline = Outline()
    document = next((node for node in root if local(node)), root)
    outline.title(_title(document))
    preamble = child(document, "preamble")
    if preamble is not None:
        _recitals(outline, preamble)
    body = child(document, "body", "mainBody")
    if body is not None:
        _walk(outline, body, 1)
    return outline
