"""HTML before it is parsed: the page's furniture out, and a reader that survives any nesting.

A guidance note published as a web page carries navigation, a site header and a footer ("© 2026
... All rights reserved.") around its text; none of it is part of the document, and a footer
read as text was glued to the last paragraph. Those elements are removed before unstructured
reads the page.

lxml, under unstructured, stops at its nesting limit, so text inside 20,000 nested tags was lost.
`plain_text` reads any depth with the standard library's event parser, which keeps no stack.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_FURNITURE = ("nav", "footer", "aside", "script", "style", "noscript", "template")
_FURNITURE_ELEMENT = re.compile(
    r"<(" + "|".join(_FURNITURE) + r")\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL
)
_BLOCKS = {
    "p", "div", "section", "article", "main", "br", "li", "ul", "ol", "table", "tr", "td", "th",
    "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "dd", "dt", "dl", "header", "hr",
}  # fmt: skip


def without_boilerplate(html: str) -> str:
    return _FURNITURE_ELEMENT.sub(" ", html)


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in _FURNITURE:
            self.skipping += 1
        elif tag in _BLOCKS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _FURNITURE:
            self.skipping = max(0, self.skipping - 1)
        elif tag in _BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def plain_text(html: str) -> str:
    """The page's text, paragraphs separated by blank lines, furniture left out."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts)
    lines = (" ".join(line.split()) for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
