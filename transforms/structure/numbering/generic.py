"""Numbering that no one family owns: divisions ("Part II", "Chapter 3", "Section 4"), "§ 512"
sections, numbered headings ("1 Introduction"), and the words after which a number at a line
start continues a citation instead of opening a unit."""

from __future__ import annotations

import re

DIVISION = re.compile(
    r"^(part|title|chapter|section|subsection|sub-section)\s+([ivxlcdm]+|\d+[a-z]?)\b[.:]?\s*(.*)$",
    re.IGNORECASE,
)
DIVISION_RANK = {"part": 1, "title": 1, "chapter": 2, "section": 3, "subsection": 4}
SECTION_SIGN = re.compile(r"^§+\s*(\d+[a-z]?(?:\.\d+)*)\.?\s*(.*)$")
NUMBERED_HEADING = re.compile(r"^(\d{1,3})\s+([A-Z].*)$")
# A lettered subsection's heading under a numbered section, as policies and manuals set it in
# the text ("a. Required Customer Information" under "5. Customer Identification"); cited
# "Section 5(a)".
LETTERED_HEADING = re.compile(r"^([a-z])\.\s+([A-Z].{0,118})$")

SECTION_SIGN_RANK = 5.0
# Words after which a number continues a citation ("Sections 2.1.4 and 2.1.5"), not a new unit.
CITING_END = re.compile(
    r"(?:\b(?:and|or|to|of|in|under|with|see|per|through|(?:sub-?)?sections?|articles?|clauses?|"
    r"(?:sub-?)?paragraphs?|schedules?|exhibits?)|[,–-])$",
    re.IGNORECASE,
)
# A line ending in the word that names a unit: the label on the next line is that unit's, cited
# ("... referred to in subsection" / "(2)(a), and"), not a point opening there.
NAMING_END = re.compile(
    r"\b(?:(?:sub-?)?sections?|articles?|(?:sub-?)?paragraphs?|points?|clauses?|schedules?)$",
    re.IGNORECASE,
)
# Labels written as a citation, not as a point's start: "(2)(a), and", "(b);".
CITED_LABEL = re.compile(r"^(?:\(\w{1,4}\)){1,4}(?:[,;.)]|\s+(?:and|or|of|to)\b)")
