"""Document keys: the name a document is asked for by ("dora", "bribery-act-2010").

A document is first known by its file's name. Publishers name files by their own numbers
("CELEX_32022R2554_EN_TXT", "asset_00100_ukpga_20100023_en"), which nobody types; a document
whose family lexkb recognises (lexkb.core.text.refs.title_type: an EU act, an Act, a standard
...) and whose file is so named, with no word of its title, is keyed by the name it is cited by
instead. Every other file name keeps its words as a slug: a contract filed as
"AgapeAtpCorp_20191202_10-KA_EX-10.1_11911128_EX-10.1_Supply Agreement" says more than any
name read from its first page. The file-name key still names the document (lexkb.tables), so keys given before a
build made them readable go on resolving.
"""

from __future__ import annotations

import re
import unicodedata

from lexkb.core.text.refs import short_name, title_type

# A publisher's number in a file name: five digits or more in a row (a CELEX number, an Official
# Journal number, legislation.gov.uk's asset and chapter numbers). Years have four.
_PUBLISHER_NUMBER = re.compile(r"\d{5,}")
# A key made from a title keeps its first words: enough to read, short enough to type.
_KEY_WORDS = 6


def file_key(source_name: str) -> str:
    """A source file's name without its folder or extension: its document's first name."""
    return source_name.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def slug(text: str) -> str:
    """Lower-case ASCII words joined by hyphens ("Bribery Act 2010" -> "bribery-act-2010")."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.casefold()).strip("-")


def readable_key(key: str, title: str | None, given_short_name: str | None = None) -> str:
    """The key a document is asked for by: from its short name (lexkb.core.text.refs.
    short_name) where its file is named by a publisher's number (see above), else its file
    name's words."""
    numbered = _PUBLISHER_NUMBER.search(key) and not _words(key) & _words(title or "")
    if numbered and (given_short_name or title_type(title, key)):
        name = short_name(title, given_short_name, key)
        return slug(" ".join(name.split()[:_KEY_WORDS])) or slug(key)
    return slug(key) or key


def _words(text: str) -> set[str]:
    return {word.casefold() for word in re.findall(r"[^\W\d_]{3,}", text)}


def unique_keys(keys: list[str], taken: set[str] | None = None) -> list[str]:
    """`keys` with a suffix on each repeat ("nda", "nda-2"), in order, so each names one
    document; `taken`: keys already given to others."""
    taken = set(taken or ())
    unique = []
    for key in keys:
        candidate, number = key, 1
        while candidate in taken:
            number += 1
            candidate = f"{key}-{number}"
        taken.add(candidate)
        unique.append(candidate)
    return unique
