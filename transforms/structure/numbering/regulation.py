"""Numbering of EU acts and acts built like them: articles ("Article 6"), their numbered
paragraphs ("1."), lettered points ("(a)") and the recitals before the first article ("(1)"),
cited as "Article 6(1)(e)" and "Recital 47"."""

from __future__ import annotations

import re

from transforms.tree import is_title_like

ARTICLE = re.compile(r"^(?:article|art\.)\s+(\d+[a-z]?)\s*[.:-]?\s*(.*)$", re.IGNORECASE)
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

ARTICLE_RANK = 5.0


def article_heading(text: str) -> re.Match[str] | None:
    """ "Article 6" or "Article 6 Lawfulness of processing", not a sentence starting "Article 6 ..."."""
    match = ARTICLE.match(text)
    # "Article 338(2) TFEU, while ..." wrapped to a line start is a citation, not a heading.
    if match and (
        not match.group(2) or (is_title_like(match.group(2)) and text[match.start(2)] != "(")
    ):
        return match
    return None
