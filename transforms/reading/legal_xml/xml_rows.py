"""The element rows a legal XML dialect writes, and the text of its markup.

A dialect walks its tree in reading order and says what it meets: the document's title, a
heading that opens a section (`heading`, citable like "Article 6" or "§ 106"; `division`, a Part
or Chapter that is not cited as a unit's prefix), a unit with its ref, a note of a section (the US
Code's statutory and editorial notes, kept apart from the statute text) or a footnote of a unit.
The rows travel in the ordinary element frame (transforms.reading.element_schema), so the parse cache and
its worker need nothing new, and transforms.structure.outline rebuilds the tree.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection

import polars as pl
from lxml import etree

from transforms.reading.element_schema import ELEMENT_SCHEMA
from transforms.reading.legal_xml.read import local

TITLE = "Title"
HEADING = "Heading"
DIVISION = "Division"
UNIT = "Unit"
NOTE = "Note"
FOOTNOTE = "Footnote"

_SPACES = re.compile(r"[ \t\r\f\v\u00a0\u2000-\u200a\u202f\u205f\u3000]+")
_BLANK_LINES = re.compile(r"\s*\n\s*")
_MINOR_WORDS = {"a", "an", "and", "as", "at", "by", "for", "in", "of", "on", "or", "the", "to"}
_WORD_BREAKS = re.compile(r"(\s+|—)")


def clean(text: str) -> str:
    """Whitespace collapsed inside lines, blank lines dropped: the markup's indentation is not
    text."""
    return _BLANK_LINES.sub("\n", _SPACES.sub(" ", text)).strip()


def capitalised(text: str) -> str:
    """Headings set in capitals ("TITLE 17—COPYRIGHTS") read as they are cited ("Title
    17—Copyrights"): each word capitalised but the minor ones inside a heading."""
    if not text.isupper():
        return text
    words = _WORD_BREAKS.split(text.lower())
    first = True
    out: list[str] = []
    for word in words:
        if not word.strip() or word == "—":
            first = first or word == "—"
            out.append(word)
            continue
        out.append(word if not first and word in _MINOR_WORDS else word[:1].upper() + word[1:])
        first = False
    return "".join(out)


def text_of(
    element: etree._Element,
    skip: Collection[str] = (),
    blocks: Collection[str] = (),
    render: Callable[[etree._Element], str | None] | None = None,
) -> str:
    """The words of `element` in reading order. Subtrees named in `skip` are left out (their
    tail kept: it is the text after them); `blocks` end a line (a line break in the
    markup's text is a space, its indentation); `render` may give an element's
    text itself (a quotation mark coded as an empty element)."""
    parts: list[str] = []

    def walk(node: etree._Element) -> None:
        if node.text:
            parts.append(node.text.replace("\n", " "))
        for child in node:
            name = local(child)
            if name and name not in skip:
                rendered = render(child) if render is not None else None
                if rendered is not None:
                    parts.append(rendered)
                else:
                    walk(child)
                if name in blocks:
                    parts.append("\n")
            if child.tail:
                parts.append(child.tail.replace("\n", " "))

    walk(element)
    return clean("".join(parts))


def children(element: etree._Element, *names: str) -> list[etree._Element]:
    return [child for child in element if local(child) in names]


def child(element: etree._Element, *names: str) -> etree._Element | None:
    found = children(element, *names)
    return found[0] if found else None


def is_outline(frame: pl.DataFrame) -> bool:
    """The element frame was written by a markup reader (its rows already say what each is),
    not by a partitioner whose rows the structure builder must read."""
    return bool(frame["category"].is_in([UNIT, HEADING, DIVISION]).any())


class Outline:
    """Rows in reading order; depth is a heading's nesting (1 for the outermost)."""

    def __init__(self) -> None:
        self.rows: list[dict] = []

    def _add(
        self, category: str, text: str, ref: str | None, title: str | None, depth: int | None
    ) -> None:
        self.rows.append(
            {
                "element_index": len(self.rows),
                "category": category,
                "text": text,
                "page": None,
                "depth": depth,
                "document_key": None,
                "ref": ref,
                "title": title,
                "block": len(self.rows),
            }
        )

    def title(self, text: str) -> None:
        if text:
            self._add(TITLE, text, None, None, None)

    def heading(self, depth: int, label: str, title: str, display: str) -> None:
        """A section cited by `label` ("Article 6"), whose units' refs extend it."""
        self._add(HEADING, display, label, title, depth)

    def division(self, depth: int, number: str | None, title: str, display: str) -> None:
        """A Part, Chapter or cross-heading: in the path, not in any ref."""
        self._add(DIVISION, display, number, title, depth)

    def unit(self, ref: str | None, text: str) -> None:
        if text:
            self._add(UNIT, text, ref, None, None)

    def note(self, text: str, title: str | None = None) -> None:
        """A note of the open section, not part of its statute text."""
        if text:
            self._add(NOTE, text, None, title, None)

    def footnote(self, text: str) -> None:
        """A footnote of the unit before it."""
        if text:
            self._add(FOOTNOTE, text, None, None, None)

    def frame(self) -> pl.DataFrame:
        return pl.DataFrame(self.rows, schema=ELEMENT_SCHEMA)
