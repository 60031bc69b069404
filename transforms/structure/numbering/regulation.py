"""Numbering of EU acts and acts built like them: articles ("Article 6"), their numbered
paragraphs ("1."), lettered points ("(a)") and the recitals before the first article ("(1)"),
cited as "Article 6(1)(e)" and "Recital 47"."""

from __future__ import annotations

import re

from transforms.structure.tree import is_title_like

ARTICLE = re.compile(r"^(?:article|art\.)\s+(\d+[a-z]?)\s*[.:\-–—]?\s*(.*)$", re.IGNORECASE)
NUMBERED = re.compile(r"^(\d{1,3})\.\s+(\S.*)$", re.DOTALL)
PAREN_NUMBER = re.compile(r"^\((\d{1,3})\)\s+(\S.*)$", re.DOTALL)
POINT = re.compile(r"^\(([a-z]{1,3}|\d{1,3})\)\s*")
# A recital run into the element before it ("... (Text with EEA relevance) (1) The protection").
EMBEDDED_RECITAL = re.compile(r"(?<=[.;:)])\s+(?=\((\d{1,3})\)\s+[A-Z])")

# The Official Journal's series and part headings over an act on its first page ("I",
# "(Legislative acts)", "REGULATIONS"), and the note under an act's title "(Text with EEA
# relevance)": the journal's furniture, never the act's title.
OJ_SERIES = re.compile(
    r"^(?:[IVX]{1,4}|\((?:non-)?legislative acts\)|\(acts adopted by [^)]*\)|"
    r"(?:regulations|directives|decisions|recommendations|guidelines|opinions|rules of procedure"
    r"|international agreements|interinstitutional agreements)|\(text with eea relevance\))$",
    re.IGNORECASE,
)
# Text an amending act quotes opens after a line announcing it ("... is replaced by the
# following:", the UK's "... substitute—") with an opening quote, and ends at a closing quote
# with the line's end ("... by that point.’." / "’;"). Its "Article 2" and "3." are the
# amended act's, never units of the act that quotes them.
QUOTE_OPENS = re.compile(r"^[‘“]")
QUOTE_ANNOUNCED = re.compile(r"(?::|\b(?:substitute|insert)(?:d|ed)?\s*[—–-]?)\s*$")
QUOTE_CLOSES = re.compile(r"[’”]\s*[.;,]?\s*$")

# An act's enacting formula ("HAVE ADOPTED THIS REGULATION:", "HAS ADOPTED THIS DIRECTIVE:"):
# only legislation is enacted, so an act that cites "the Paris Agreement" under "Whereas:" is
# still an act, not a contract.
ENACTING_FORMULA = re.compile(
    r"^HA(?:VE|S) ADOPTED TH(?:IS|E PRESENT) (?:REGULATION|DIRECTIVE|DECISION)\b"
)

# An annex heading stands alone on its line, in capitals as the Official Journal sets it:
# "ANNEX", "ANNEX IV". "Annex IV" wrapped to a line's start is a citation.
ANNEX = re.compile(r"^ANNEX(?:\s+([IVXL]{1,6}|\d{1,2}))?$")
# A lettered part of an annex: "A. ‘General’", "Section A. List of Union harmonisation ...".
ANNEX_PART = re.compile(r"^(?:Section\s+)?([A-Z])\.\s+(\S.{0,150})$")

# Annexes stand beside the articles, outside every chapter: an annex closes them all.
ANNEX_RANK = 0.5
ANNEX_PART_RANK = 3.0
ARTICLE_RANK = 5.0


def article_heading(text: str) -> re.Match[str] | None:
    """ "Article 6" or "Article 6 Lawfulness of processing", not a citation wrapped to a line's
    start: "Article 338(2) TFEU, while ...", "Article 2, point (2), or", "Article 19;" (a
    heading's title starts with a capital; no clause's stop follows its number)."""
    match = ARTICLE.match(text)
    if match is None or text.rstrip().endswith((";", ",")):
        return None
    rest = match.group(2)
    if not rest:
        return match
    if is_title_like(rest) and (rest[:1].isupper() or rest[:1].isdigit() or rest[:1] in "‘“'\""):
        return match
    return None
