"""The US Code's levels below a section, and which level a printed label belongs to.

The Code numbers a section's subdivisions in a fixed scheme: subsection (a), paragraph (1),
subparagraph (A), clause (i), subclause (I), item (aa), subitem (AA), subsubitem (aaa). Markup
(USLM) names the level; a rendering (the OLRC's XHTML, a PDF) prints only the label, and some
labels fit two levels: "(i)" is subsection i or clause 1, "(I)" subparagraph I or subclause 1,
"(ii)" clause 2 or item ii. `Levels` decides as a drafter counts: a label either continues a
level that is open (the next letter, numeral or number after that level's last label) or opens
the first unit of a deeper level; where both readings hold, the printed indentation decides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SUBSECTION, PARAGRAPH, SUBPARAGRAPH, CLAUSE, SUBCLAUSE, ITEM, SUBITEM, SUBSUBITEM = range(8)
LEVEL_NAMES = (
    "subsection",
    "paragraph",
    "subparagraph",
    "clause",
    "subclause",
    "item",
    "subitem",
    "subsubitem",
)
# The divisions above a section, outermost first ("Title 17", "Chapter 5", "Subchapter II").
DIVISION_NAMES = (
    "title",
    "subtitle",
    "chapter",
    "subchapter",
    "part",
    "subpart",
    "division",
    "subdivision",
    "article",
    "subarticle",
)
_FIRST = ("a", "1", "A", "i", "I", "aa", "AA", "aaa")
_ROMAN = re.compile(r"^m{0,3}(cm|cd|d?c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})$")
_ROMAN_VALUES = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}
LABEL = re.compile(r"\((\d{1,3}[A-Z]?|[a-z]{1,4}|[A-Z]{1,4})\)")


def _roman_value(label: str) -> int | None:
    lower = label.lower()
    if not lower or not _ROMAN.match(lower):
        return None
    total = 0
    for index, char in enumerate(lower):
        value = _ROMAN_VALUES[char]
        following = _ROMAN_VALUES[lower[index + 1]] if index + 1 < len(lower) else 0
        total += -value if value < following else value
    return total


def _repeated(label: str) -> int:
    """How many times one letter is written ("bb" -> 2), 0 when the letters differ."""
    return len(label) if len(set(label)) == 1 else 0


def candidates(label: str) -> list[int]:
    """The levels a label can belong to, shallowest first."""
    if label[0].isdigit():
        return [PARAGRAPH]
    lower = label.islower()
    found: list[int] = []
    if len(label) == 1:
        found.append(SUBSECTION if lower else SUBPARAGRAPH)
    if _roman_value(label) is not None:
        found.append(CLAUSE if lower else SUBCLAUSE)
    repeat = _repeated(label)
    if repeat == 2:
        found.append(ITEM if lower else SUBITEM)
    elif repeat == 3 and lower:
        found.append(SUBSUBITEM)
    return sorted(set(found))


def position(label: str, level: int) -> float:
    """Where `label` stands in its level's sequence (1 for the first), for comparing labels."""
    if level == PARAGRAPH:
        digits = re.match(r"\d+", label)
        # "(4A)" comes between (4) and (5).
        return int(digits.group(0)) + (0.5 if label[-1].isalpha() else 0.0) if digits else 0.0
    if level in (CLAUSE, SUBCLAUSE):
        return float(_roman_value(label) or 0)
    return float(ord(label[0].lower()) - ord("a") + 1)


def follows(label: str, previous: str, level: int) -> bool:
    """`label` is the unit right after `previous` at `level` ("(4A)" after "(4)" counts)."""
    step = position(label, level) - position(previous, level)
    return 0 < step <= 1


def after(label: str, previous: str, level: int) -> bool:
    """`label` comes later than `previous` at `level`, a gap allowed (a struck subsection)."""
    return position(label, level) > position(previous, level)


@dataclass
class Open:
    """A unit still open: its level, label, ref and printed indentation."""

    level: int
    label: str
    ref: str
    indent: int = 0


class Levels:
    """The units open in one section, innermost last."""

    def __init__(self) -> None:
        self.stack: list[Open] = []

    def reset(self) -> None:
        self.stack.clear()

    def _open_at(self, level: int) -> Open | None:
        return next((unit for unit in self.stack if unit.level == level), None)

    def place(self, label: str, indent: int | None, chained: bool) -> int | None:
        """The level of `label`: `indent` is the printed indentation (None when unknown), and a
        `chained` label follows another one on the same line ("(c) Exceptions.—(1) The ..."),
        which makes it a child of that one."""
        levels = candidates(label)
        if not levels:
            return None
        deepest = self.stack[-1].level if self.stack else -1
        continuing = [
            level
            for level in levels
            if (unit := self._open_at(level)) is not None and follows(label, unit.label, level)
        ]
        opening = [level for level in levels if label == _FIRST[level] and level > deepest]
        viable = sorted(set(continuing + opening))
        if not viable:
            # A gap in the numbering (a struck subsection), or a level skipped.
            viable = [
                level
                for level in levels
                if (unit := self._open_at(level)) is not None and after(label, unit.label, level)
            ]
        if not viable:
            viable = [level for level in levels if level > deepest] or levels
        if len(viable) == 1:
            return viable[0]
        if chained:
            return viable[-1]
        if indent is not None:
            # Printed indentation never exceeds the level (a chained first child stays at its
            # parent's indentation, and so do its siblings): only readings at or below it hold.
            held = [level for level in viable if level >= indent]
            if not held:
                return viable[-1]
            if indent in held:
                return indent
            viable = held
        return next((level for level in viable if level in continuing), viable[0])

    def push(self, level: int, label: str, section_ref: str, indent: int = 0) -> str:
        """Open the unit `label` at `level`, closing those at that level or deeper; its ref."""
        while self.stack and self.stack[-1].level >= level:
            self.stack.pop()
        parent = self.stack[-1].ref if self.stack else section_ref
        ref = f"{parent}({label})"
        self.stack.append(Open(level, label, ref, indent))
        return ref
