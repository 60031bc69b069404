"""Normal form of paragraph references, shared by the build (stored keys) and `Index.get`.

People write the same citation many ways ("Art. 6(1)", "article 6 (1)", "Article 6(1)"). Both the
stored ref and the user's text go through `normalize_ref`, so lookups compare like with like.
"""

from __future__ import annotations

import re
import unicodedata

_PREFIXES = (
    (re.compile(r"^(?:art(?:icle)?s?\.?)(?=\d)"), "article"),
    (re.compile(r"^(?:rec(?:ital)?s?\.?)(?=\d)"), "recital"),
    (re.compile(r"^(?:para(?:graph)?s?\.?)(?=\d)"), "paragraph"),
    (re.compile(r"^(?:sec(?:tion)?s?\.?)(?=\d)"), "section"),
    (re.compile(r"^(?:rules?|r\.)(?=\d)"), ""),
    (re.compile(r"^§+"), "§"),
)


def normalize_ref(ref: str) -> str:
    """Case-, space- and abbreviation-insensitive key of a reference ("Art. 6 (1)" -> "article6(1)")."""
    text = unicodedata.normalize("NFKC", ref).casefold()
    text = re.sub(r"\s+", "", text).rstrip(".:")
    for pattern, replacement in _PREFIXES:
        text, count = pattern.subn(replacement, text, count=1)
        if count:
            break
    return text
