"""The GDPR's citable units read from the official Formex XML: the ground truth for structure.

A unit is a numbered paragraph ("Article 6(1)"), an article without numbered paragraphs
("Article 5"... when it has none) or a recital ("Recital 47"). Footnotes (NOTE) are not part of
the text a reader cites and are left out. Quotation marks (QUOT.START, QUOT.END) are left out too:
the PDF and DOCX renderings of the same text carry none, so no ingester could recover them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

_BLOCKS = ("P", "NO.P", "TXT", "ALINEA", "NO.PARAG")


@dataclass(frozen=True)
class GoldUnit:
    ref: str
    text: str


def _text(node: ElementTree.Element) -> str:
    parts: list[str] = []

    def walk(element: ElementTree.Element) -> None:
        if element.tag == "NOTE":
            if element.tail:
                parts.append(element.tail)
            return
        if element.text:
            parts.append(element.text)
        for child in element:
            walk(child)
            if child.tag in _BLOCKS:
                parts.append(" ")
        if element.tail:
            parts.append(element.tail)

    walk(node)
    return normalize("".join(parts))


def normalize(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def load(path: Path) -> tuple[list[GoldUnit], dict[str, str]]:
    """(units in document order, article number -> title)."""
    root = ElementTree.parse(path).getroot()
    units: list[GoldUnit] = []
    for consid in root.iter("CONSID"):
        number = consid.findtext("NP/NO.P", "").strip("() ")
        text = _text(consid.find("NP/TXT"))
        units.append(GoldUnit(f"Recital {number}", f"({number}) {text}"))
    titles: dict[str, str] = {}
    for article in root.iter("ARTICLE"):
        number = str(int(article.get("IDENTIFIER")))
        titles[number] = normalize(_text(article.find("STI.ART")))
        paragraphs = article.findall("PARAG")
        if not paragraphs:
            body = [child for child in article if child.tag not in ("TI.ART", "STI.ART")]
            units.append(GoldUnit(f"Article {number}", normalize(" ".join(_text(b) for b in body))))
        for parag in paragraphs:
            label = parag.findtext("NO.PARAG", "").strip().rstrip(".")
            body = [child for child in parag if child.tag != "NO.PARAG"]
            text = normalize(" ".join(_text(b) for b in body))
            units.append(GoldUnit(f"Article {number}({label})", f"{label}. {text}"))
    return units, titles
