"""Formex 4, the Official Journal's XML (EU acts): "Recital 12", "Article 6", "Article 6(1)".

A unit is what the Official Journal numbers and a reader cites whole: a recital, a numbered
paragraph of an article (with its points, which `get` finds inside it as "Article 2(1)(a)"), or
an article without numbered paragraphs (the definitions of "Article 4", found as "Article 4(19)").
Footnotes (NOTE) are notes of their unit, never its text; quotation marks coded as QUOT.START /
QUOT.END are written as the marks they code. Chapters and sections (DIVISION) are the path.
"""

from __future__ import annotations

import re

from lxml import etree

from transforms.reading.legal_xml.read import local
from transforms.reading.legal_xml.xml_rows import Outline, child, clean, text_of

_BLOCKS = ("P", "TXT", "ALINEA", "NO.PARAG", "ITEM", "TI", "STI")
_HEADINGS = ("TI.ART", "STI.ART", "NO.PARAG")
_NOT_TITLE = re.compile(r"^\(?text with eea relevance\)?$", re.IGNORECASE)
_DIVISION_HEADINGS = ("TITLE", "TI", "STI")


def _render(element: etree._Element) -> str | None:
    """QUOT.START CODE="2018" is the mark U+2018; a point's number stays on its text's line."""
    code = element.get("CODE")
    if local(element) == "NO.P":
        return f"{clean(text_of(element))} "
    if local(element) in ("QUOT.START", "QUOT.END") and code:
        try:
            return chr(int(code, 16))
        except ValueError:
            return ""
    return None


def _text(element: etree._Element, skip: tuple[str, ...] = ()) -> str:
    return text_of(element, skip=("NOTE", *skip), blocks=_BLOCKS, render=_render)


def _footnotes(outline: Outline, element: etree._Element) -> None:
    for note in element.iter("NOTE"):
        outline.footnote(_text(note))


def _title(root: etree._Element) -> str:
    title = next(root.iter("TITLE"), None)
    if title is None:
        return ""
    lines = [_text(p) for p in title.iter("P")] or [_text(title)]
    return clean(" ".join(line for line in lines if line and not _NOT_TITLE.match(line)))


def _recitals(outline: Outline, preamble: etree._Element) -> None:
    outline.division(1, None, "Recitals", "Recitals")
    for recital in preamble.iter("CONSID"):
        number = (recital.findtext("NP/NO.P") or "").strip("() ")
        body = recital.find("NP/TXT")
        text = _text(body if body is not None else recital)
        outline.unit(
            f"Recital {number}" if number else None, f"({number}) {text}" if number else text
        )
        _footnotes(outline, recital)


def _words(element: etree._Element | None, name: str) -> str:
    """The text of `element`'s child `name`, or "" when either is missing."""
    found = child(element, name) if element is not None else None
    return _text(found) if found is not None else ""


def _article(outline: Outline, article: etree._Element, depth: int) -> None:
    heading = _words(article, "TI.ART")
    number = heading.removeprefix("Article").strip() or str(int(article.get("IDENTIFIER", "0")))
    title = _words(article, "STI.ART")
    label = f"Article {number}"
    outline.heading(depth, label, title, clean(f"{label} {title}"))
    before: list[etree._Element] = []
    for node in article:
        name = local(node)
        if name == "PARAG":
            _flush(outline, label, before)
            before = []
            mark = (node.findtext("NO.PARAG") or "").strip().rstrip(".")
            outline.unit(
                f"{label}({mark})" if mark else label,
                clean(f"{mark}. {_text(node, ('NO.PARAG',))}"),
            )
            _footnotes(outline, node)
        elif name and name not in _HEADINGS:
            before.append(node)
    _flush(outline, label, before)


def _flush(outline: Outline, label: str, nodes: list[etree._Element]) -> None:
    """Text of an article outside its numbered paragraphs: the article's own unit."""
    if nodes:
        outline.unit(label, clean("\n".join(_text(node) for node in nodes)))
        for node in nodes:
            _footnotes(outline, node)


def _divisions(outline: Outline, element: etree._Element, depth: int) -> None:
    for node in element:
        name = local(node)
        if name == "ARTICLE":
            _article(outline, node, depth)
        elif name == "DIVISION":
            heading = child(node, "TITLE")
            number, title = _words(heading, "TI"), _words(heading, "STI")
            outline.division(depth, number or None, title, clean(f"{number} {title}"))
            _divisions(outline, node, depth + 1)


def read(root: etree._Element) -> Outline:
    outline = Outline()
    outline.title(_title(root))
    for preamble in root.iter("PREAMBLE"):
        _recitals(outline, preamble)
    for terms in root.iter("ENACTING.TERMS"):
        _divisions(outline, terms, 1)
    return outline
