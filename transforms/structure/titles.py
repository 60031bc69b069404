"""What can be a document's title: the name its readers cite it by, never a notice to the reader
nor a template's blank.

A terms page may open with "PLEASE READ THIS ... AGREEMENT CAREFULLY BEFORE ..." and a policy
template with "<Business Name>": both read like a title line (short, capitalised, no full stop),
and neither is what anyone calls the document. Every path that picks a title (the structure
builder's first line, a contract's name line, a policy's control table) asks here first.
"""

from __future__ import annotations

import re

# A template's blanks: "<Business Name>", "[Company Name]", "[●]", "{{name}}", "XXXX", "____".
PLACEHOLDER = re.compile(
    r"<<?[^<>\n]{0,60}>>?"
    r"|\{\{[^{}\n]{0,60}\}\}|\{[A-Za-z_ ]{1,40}\}"
    r"|\[\s*(?:[A-Za-z][A-Za-z .,'’/&-]{0,58}|[●•_.…\s]*)\]"
    r"|\bX{3,}\b|_{3,}|\.{4,}|…{2,}"
)
# A line addressed to the reader ("PLEASE READ ... CAREFULLY", "BY CLICKING ...", "IMPORTANT:").
NOTICE = re.compile(
    r"^(?:please|kindly)\b|^read\s+(?:this|these|the|carefully)\b"
    r"|^(?:important|legal)\s+notice\b|^(?:important|notice|caution|warning|attention)\s*[:!—–-]"
    r"|^by\s+(?:clicking|using|accessing|signing|checking|downloading|installing|registering"
    r"|executing|accepting)\b|^if\s+you\b|^you\s+(?:must|should|agree|acknowledge|may\s+not)\b"
    r"|\bcarefully\b|\bbefore\s+(?:using|accessing|signing|downloading|installing|proceeding)\b",
    re.IGNORECASE,
)
# What is left at a title's edges once a blank goes ("<Business Name> - Privacy Policy").
_EDGES = " \t-–—:|,;/"


def without_placeholders(text: str) -> str:
    """The text with a template's blanks taken out, spaces and edge punctuation tidied."""
    return " ".join(PLACEHOLDER.sub(" ", text).split()).strip(_EDGES)


def is_placeholder(text: str) -> bool:
    """Nothing but a template's blanks ("<Business Name>", "[DATE]")."""
    return bool(text.strip()) and not any(c.isalnum() for c in without_placeholders(text))


def is_notice(text: str) -> bool:
    return NOTICE.search(" ".join(text.split())) is not None


# A letterhead's contact line ("925 West Georgia Street Suite 1820 ... Facsimile: 604-632-1730"):
# a telephone number or the word that introduces one. Never a title.
_CONTACT = re.compile(
    r"\b(?:facsimile|fax|telephone|tel\.|phone|e-?mail)\s*:|\(?\b\d{3}\)?[-. ]\d{3}[-. ]\d{4}\b",
    re.IGNORECASE,
)


def is_contact(text: str) -> bool:
    return _CONTACT.search(text) is not None


def named(text: str | None) -> str | None:
    """`text` as a title: its blanks taken out; None when it is a notice, a letterhead's contact
    line, or nothing is left."""
    if not text or is_notice(text) or is_contact(text):
        return None
    name = without_placeholders(text)
    return name if any(c.isalnum() for c in name) else None


# An EU act's title block: its designation ("REGULATION (EU) 2023/956 OF THE EUROPEAN PARLIAMENT
# AND OF THE COUNCIL", "COMMISSION IMPLEMENTING REGULATION (EU) ..."), the day it was adopted
# ("of 10 May 2023") and its subject ("establishing a carbon border adjustment mechanism").
EU_ACT_TITLE = re.compile(
    r"^(?:(?:commission|council)\s+(?:delegated\s+|implementing\s+)?)?"
    r"(?:regulation|directive|decision)\s*\((?:eu|ec|eec|eu,\s*euratom)\)",
    re.IGNORECASE,
)
_ADOPTED = re.compile(r"\bof\s+\d{1,2}\s+[a-z]+\s+\d{4}\b", re.IGNORECASE)
# The designation going on over lines before the day: "... of the European" / "Parliament and of
# the Council of 27 April 2016", "... PARLIAMENT AND" / "OF THE COUNCIL".
_DESIGNATION_GOES_ON = re.compile(
    r"^(?:of|and|the|european|parliament|council|commission)\b", re.IGNORECASE
)
# What follows the block: the EEA note, the citations and recitals.
_AFTER_EU_TITLE = re.compile(
    r"^(?:\(text\s+with\s+eea\s+relevance\)|having\s+regard|whereas|after\s+(?:transmission"
    r"|consulting)|acting\s+in\s+accordance)",
    re.IGNORECASE,
)
# An EU act's title runs long (the acts it amends); its block still ends at the markers above.
MAX_EU_TITLE_CHARS = 1000


def _in_capitals(text: str) -> bool:
    words = [w for w in text.split() if sum(c.isalpha() for c in w) >= 2]
    return len(words) >= 3 and all(c.isupper() for w in words for c in w if c.isalpha())


def continues_eu_title(title: str, line: str) -> bool:
    """`line` goes on an EU act's title block, however it is set (a PDF line, an HTML or Word
    paragraph, in another font): before the day of adoption, the designation going on to that
    day ("... PARLIAMENT AND" / "OF THE COUNCIL" / "of 10 May 2023"); after it, every line of the
    subject up to the EEA note, the institutions' line ("THE EUROPEAN PARLIAMENT AND THE COUNCIL
    OF THE EUROPEAN UNION,") or the citations."""
    if not EU_ACT_TITLE.match(title) or len(title) + len(line) >= MAX_EU_TITLE_CHARS:
        return False
    if _AFTER_EU_TITLE.match(line):
        return False
    if not _ADOPTED.search(title):
        # the institutions' line ends in a comma: a title printed without its day ends there
        designation = _ADOPTED.search(line) or _DESIGNATION_GOES_ON.match(line)
        return designation is not None and not line.rstrip().endswith(",")
    return not _in_capitals(line)
