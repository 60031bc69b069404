"""Defined terms: which paragraph defines which term, the snapshot's `definitions` table.

Legal texts define their terms in three shapes, each read line by line:

- quoted: '"Client Money" means ...', '‘personal data’ means ...', '"Affiliate" shall have the
  meaning ...' (a contract's definitions, a regulation's interpretation section);
- enumerated, without quotes, as renderings of the GDPR print it: "(1) personal data means any
  information ...", under "For the purposes of this Regulation:";
- glossary rows, a term and its definition separated by a tab (a table rendered as text):
  "Client Money<TAB>Means money of any currency ...".

A line counts only when the term is followed by a defining verb (means, has the meaning,
shall mean, is defined as, refers to, includes; or "In relation to" in a glossary row), so a
quoted phrase elsewhere is not taken for a definition.
"""

from __future__ import annotations

import re

import polars as pl

from lexkb.core.store.schema import DEFINITIONS, empty_frame

_VERB = r"(?:means|shall\s+mean|has\s+the\s+meaning|shall\s+have\s+the\s+meaning|is\s+defined\s+as|refers\s+to|includes|shall\s+include)\b"
_QUOTED = re.compile(
    r"[\"“‘']\s*(?P<term>[^\"“”‘’'\n]{1,80}?)\s*[\"”’']\s*(?:\([^)\n]{0,80}\)\s*)?,?\s*" + _VERB,
    re.IGNORECASE,
)
_ENUMERATED = re.compile(
    r"^\s*\(?(?:\d{1,3}|[a-z]{1,4})[).]\s+(?P<term>[^\n;:,\"“‘]{2,80}?)\s+" + _VERB,
    re.IGNORECASE,
)
_ROW = re.compile(
    r"^(?P<term>[^\t\n]{1,100})\t\s*(?:" + _VERB + r"|in\s+relation\s+to\b)", re.IGNORECASE
)
_ENUMERATOR = re.compile(r"^\(?(?:[ivxlc]{1,6}|[a-z]|\d{1,3})[).]?$", re.IGNORECASE)
MAX_TERM_WORDS = 10


def _clean(term: str) -> str | None:
    term = " ".join(term.split()).strip(" .,;:-")
    if not term or _ENUMERATOR.match(term) or len(term.split()) > MAX_TERM_WORDS:
        return None
    return term


def definitions_in(text: str) -> list[tuple[str, int, int]]:
    """(term, start, end of its defining line) for each definition in `text`."""
    found: list[tuple[str, int, int]] = []
    at = 0
    for line in text.split("\n"):
        start, end = at, at + len(line)
        at = end + 1
        terms = [m.group("term") for m in _QUOTED.finditer(line)]
        for pattern in (_ENUMERATED, _ROW):
            if not terms and (match := pattern.match(line)):
                terms.append(match.group("term"))
        for term in terms:
            if (clean := _clean(term)) is not None:
                found.append((clean, start, end))
    return found


def definition_table(chunks: pl.DataFrame) -> pl.DataFrame:
    """Every definition in the paragraph chunks: term, its case-folded key, document, chunk and
    the defining line's offsets in the chunk's text."""
    rows = []
    paragraphs = chunks.filter(pl.col("chunk_level") == "paragraph")
    for chunk_id, document_id, text in paragraphs.select(
        "chunk_id", "document_id", "content"
    ).iter_rows():
        for term, start, end in definitions_in(text or ""):
            rows.append((term, term.casefold(), document_id, chunk_id, start, end))
    empty = empty_frame(DEFINITIONS)
    if not rows:
        return empty
    frame = pl.DataFrame(rows, schema=empty.schema, orient="row")
    return frame.unique(["term_key", "chunk_id"], keep="first", maintain_order=True)
