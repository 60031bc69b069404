"""Designations a document prints for itself beyond its title, which people cite it by.

A UK Act is "2010 c. 23" as well as the "Bribery Act 2010": its first page prints "CHAPTER 23"
under the title, and its running heads "Bribery Act 2010 (c. 23)". The title alone cannot say
so (lexkb.core.text.refs reads names from titles), so the structure step reads the lines.
"""

from __future__ import annotations

import re
from collections import Counter

# How far into a document its designations are looked for (its front page and first heads).
FRONT_LINES = 200
_RUNNING_HEAD = re.compile(r"\bAct\s+(\d{4})\s*\(c\.\s*(\d{1,4})\)")
_CHAPTER_LINE = re.compile(r"^(?:(\d{4})\s+)?CHAPTER\s+(\d{1,4})$")
_ACT_YEAR = re.compile(r"\bAct\s+(\d{4})$")


def printed_designations(lines: list[str]) -> list[str]:
    """ "2010 c. 23" for a UK Act that prints its chapter number under its title, or in a
    running head (repeated page after page, unlike a cross-heading naming an Act it amends);
    otherwise nothing."""
    front = [" ".join(line.split()) for line in lines[:FRONT_LINES]]
    for index, line in enumerate(front):
        chapter = _CHAPTER_LINE.match(line)
        if chapter is None:
            continue
        year = chapter.group(1)
        if year is None and index and (act := _ACT_YEAR.search(front[index - 1])):
            year = act.group(1)
        if year:
            return [f"{year} c. {chapter.group(2)}"]
    heads = Counter(
        f"{match.group(1)} c. {match.group(2)}"
        for line in lines
        if (match := _RUNNING_HEAD.search(" ".join(line.split())))
    )
    return [head for head, count in heads.most_common(1) if count >= 2]
