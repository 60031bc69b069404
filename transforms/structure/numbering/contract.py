"""Numbering of contracts: clauses, their lettered points, definitions, attachments, and the
recitals heading over the preamble's WHEREAS clauses.

Agreements number their clauses "1.", "1.1", "Section 2.1", "ARTICLE IV" or "§ 12.1", hang
lettered points under them ("(a)", "(i)", "(A)"), define terms in lists ('"Effective Date" shall
mean ...'), and attach schedules and exhibits with their own numbering. Lawyers cite a clause as
"Section 12.1(b)", so that is the ref a contract's paragraph gets.

Several patterns here read the same kind of number as a pattern of another family, but more
loosely or more strictly (contract text from SEC filings loses spaces; a contract's "1 TERM"
heading is in capitals). Both are kept as they are, and each contract pattern says how it
differs from its counterpart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Differs from regulation.ARTICLE ("Article 6"): takes Roman numerals ("ARTICLE IV"), needs a
# word boundary after the number, and takes a full stop and then a dash of any width, a colon
# or a stop after it ("ARTICLE 5. — TERM", where regulation.ARTICLE takes one of ".", ":",
# "-"); takes no "Art.".
CONTRACT_ARTICLE = re.compile(
    r"^(?:article|ARTICLE)\s+([IVXLC]+|\d+[A-Z]?)\b\.?\s*[-–—:.]?\s*(.*)$", re.IGNORECASE
)
ATTACHMENT = re.compile(
    r"^(schedule|exhibit|annex|appendix|attachment|addendum)\s+([A-Z]{1,2}(?:-\d+)?|\d+(?:\.\d+)*|"
    r"[IVX]+)\b\.?\s*[-–—:.]?\s*(.*)$",
    re.IGNORECASE,
)
# Differs from generic.SECTION_SIGN ("§ 512(c)" in acts): also "Section 2.1" and "Sec. 3"
# (which other documents read with generic.DIVISION), one "§" only, a letter of either case
# after any level ("2.1A"; SECTION_SIGN: lower case, after the first only), a dash or colon
# after the number left out of the title, and text running over lines.
SECTION_CLAUSE = re.compile(
    r"^(?:section|sec\.|§)\s*(\d+[A-Z]?(?:\.\d+[A-Z]?)*)\.?\s*[-–—:.]?\s*(.*)$",
    re.IGNORECASE | re.DOTALL,
)
# "1.1 text", "1.1. text", "12.3.4 text"; and "1. text", "1.text" (SEC text loses the space).
# Differs from standard.DOTTED (a rule, "18.8.2A"): at most three digits a level and no letter
# after the last; the text may follow without a space when it opens with a capital, a quote or
# a parenthesis.
DOTTED_CLAUSE = re.compile(r"^(\d{1,3}(?:\.\d{1,3})+)\.?(?:\s+|(?=[A-Z“\"(]))(\S.*)$", re.DOTALL)
# Differs from regulation.NUMBERED (a paragraph, "1. text"): the text may follow the full stop
# without a space when it opens with a capital or a quote.
NUMBERED_CLAUSE = re.compile(r"^(\d{1,3})\.(?:\s+|(?=[A-Z“\"]))(\S.*)$", re.DOTALL)
# Differs from generic.NUMBERED_HEADING ("1 Introduction"): the whole heading in capitals
# (letters, spaces and , & ' / -), four characters or more ("1 DEFINITIONS").
CLAUSE_HEADING = re.compile(r"^(\d{1,3})\s+([A-Z][A-Z ,&'/-]{2,}[A-Z])$")
# "(a)", "(iv)", "(A)", "(1)"; also "a)" and "A." at a line start.
# Differs from regulation.POINT ("(a)", "(iv)", "(1)"): also capitals and four letters in
# parentheses, "a)" and "A." without them, each kind of label in a group of its own
# (point_label reads it), and the text after the label as group 4.
CLAUSE_POINT = re.compile(
    r"^(?:\(([a-zA-Z]{1,4}|\d{1,3})\)|([a-z]{1,3})\)|([A-Z])\.(?=\s|[a-z\"“]))\s*(.*)$", re.DOTALL
)
DEFINITION = re.compile(
    r"^[\"“”']([^\"“”']{1,80})[\"“”']\s*(?:\([^)]{0,60}\)\s*)?,?\s*"
    r"(?:shall\s+(?:have\s+the\s+meaning|mean)|means?\b|has\s+the\s+meaning|refers?\s+to\b"
    r"|includes?\b|is\s+defined)",
    re.IGNORECASE,
)
# A clause number inside a line, where a text conversion lost the line break before it ("...
# in Section 15 of this Agreement. 5.2. Opening Training ..."; "6. INDEMNITY 6.1 The ..."),
# before a capitalised word. Only numbers that continue the clause numbering and follow no
# citing word are cut there (`continues`, generic.CITING_END): "under Section 5.2 The" cites.
INLINE_CLAUSE = re.compile(
    r"(?<=\s)((?:(?:Section|SECTION)\s+)?\d{1,3}(?:\.\d{1,3})+\.?"
    r"|(?:Section|SECTION)\s+\d{1,3}\.?|\d{1,3}\.|ARTICLE\s+(?:[IVXLC]+|\d{1,3})\b\.?)"
    r"\s+(?=[\"“(\[]?[A-Z])"
)
BARE_NUMBER = re.compile(r"\d{1,3}\.")
# A line that stops on a number written in words, or on a clause it cites ("... within three" /
# "(3) miles ..."; "... under Section 6.3(a)" / "(ii) (provided that ..."): a label at the next
# line's start is the figure or the rest of the citation, not a point.
NUMBER_WORD_END = re.compile(
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|(?:thir|four|fif|six|"
    r"seven|eigh|nine)teen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|"
    r"thousand|million|billion)$",
    re.IGNORECASE,
)
CITATION_END = re.compile(
    r"\b(?:sections?|articles?|clauses?|paragraphs?)\s+\d[\w.]*(?:\([a-zA-Z0-9]{1,4}\))*$",
    re.IGNORECASE,
)
FIGURE = re.compile(r"^\(\d{1,4}\)\s")
# A definition inside a line, after the sentence before it ends ('... Canada. "Term" means').
INLINE_DEFINITION = re.compile(
    r"(?<=[.;])\s+([\"“][A-Z][^\"“”]{0,79}[\"”]\s*(?:\([^)]{0,60}\)\s*)?,?\s*"
    r"(?:shall\s+(?:have\s+the\s+meaning|mean)|means?\b|has\s+the\s+meaning))"
)
_ROMAN = re.compile(r"^(?=[ivxlc]+$)m{0,4}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})$")

# An unnumbered heading over a contract's recitals, which the first numbered clause closes.
RECITALS_HEADING = re.compile(
    r"^(?:recitals?|w\s?i\s?t\s?n\s?e\s?s\s?s\s?e\s?t\s?h|background|preamble"
    r"|preliminary statements?)\W*$",
    re.IGNORECASE,
)
# A run-in heading: its words up to a full stop, then a capitalised word opening the clause.
_RUN_IN = re.compile(r"^.{0,78}?\b([\w'-]+)\.\s+([A-Z“\"].*)$", re.DOTALL)
RUN_IN_WORDS = 3
_ABBREVIATIONS = frozenset({"inc", "co", "corp", "ltd", "llc", "no", "nos", "u.s", "s.a", "st"})
LABEL_ONLY = re.compile(
    r"^(?:\(?[a-zA-Z]{1,4}\)|\(\d{1,3}\)|[A-Z]\.|(?:section\s+)?\d{1,3}(?:\.\d{1,3})*\.?)$",
    re.IGNORECASE,
)


def runs_in(text: str) -> bool:
    """A clause's heading followed on its line by the clause's first words ("TERMS OF PAYMENT.
    The royalties payable to Licensor", a PDF line broken early): the clause's text, not a
    section title. The words after the heading's full stop read as a sentence: two or more,
    most after the first in lower case, or RUN_IN_WORDS or more in any case (a clause set in
    capitals: "LIMITATION OF LIABILITY. EXCEPT IN CONNECTION WITH"); and the stop does not end
    an abbreviation ("Inc.")."""
    match = _RUN_IN.match(text)
    if match is None or len(match.group(1)) < 2 or match.group(1).casefold() in _ABBREVIATIONS:
        return False
    words = match.group(2).split()
    lower = sum(1 for word in words[1:] if word[:1].islower())
    return len(words) >= RUN_IN_WORDS or (len(words) >= 2 and lower * 2 > len(words) - 1)


def roman_value(text: str) -> int | None:
    """The value of a Roman numeral ("iv" is 4), or None: PointStack asks whether a label such as
    "(i)" or "(v)" can be a numeral at all before deciding it is one."""
    text = text.casefold()
    if not text or not _ROMAN.match(text):
        return None
    values = {"i": 1, "v": 5, "x": 10, "l": 50, "c": 100, "d": 500, "m": 1000}
    total = 0
    for index, char in enumerate(text):
        value = values[char]
        total += -value if index + 1 < len(text) and values[text[index + 1]] > value else value
    return total


def number_parts(number: str) -> tuple[int, ...]:
    """ "5.2", "5.2.", "Section 5.2A" -> (5, 2): the levels of a clause number, letters aside;
    "7.0" (a clause numbered "7.0" over "7.1") -> (7,); "ARTICLE VII" -> (7,)."""
    words = number.split()
    if len(words) == 2 and (value := roman_value(words[1].rstrip("."))):
        return (value,)
    parts = [int(part) for part in re.findall(r"\d+", number)]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def continues(number: str, last: tuple[int, ...] | None) -> bool:
    """Whether clause `number` can come next after clause `last`: its first point ("5" then
    "5.1"), the next at its level or any level above ("5.1" then "5.2" or "6."); after no
    clause (or an attachment's start), "1." or "1.1"."""
    parts = number_parts(number)
    if not last:
        return parts in {(1,), (1, 1)}
    if parts == (*last, 1):
        return True
    return any(parts == (*last[:level], last[level] + 1) for level in range(len(last)))


def point_label(match: re.Match[str]) -> str:
    """The label of a CLAUSE_POINT match, from whichever group its kind of label fills."""
    return match.group(1) or match.group(2) or match.group(3)


@dataclass
class PointStack:
    """Nested point labels under one numbered clause: "(a)" then "(i)" then "(A)". A label of a
    kind already open closes the deeper levels; "(i)" after "(h)" is a letter, not a numeral."""

    levels: list[tuple[str, str]] = field(default_factory=list)

    @staticmethod
    def _kind(label: str, open_kinds: dict[str, str]) -> str:
        if label.isdigit():
            return "number"
        lower = label.islower()
        letter, numeral = ("lower", "roman") if lower else ("upper", "ROMAN")
        previous = open_kinds.get(letter)
        follows = (
            len(label) == 1
            and previous is not None
            and len(previous) == 1
            and ord(label.casefold()) == ord(previous.casefold()) + 1
        )
        if follows or roman_value(label) is None:
            return letter
        # "(ii)" is a numeral; a lone "(i)" starts numerals; "(v)" or "(x)" only continue them.
        if len(label) > 1 or label.casefold() == "i" or numeral in open_kinds:
            return numeral
        return letter

    def push(self, label: str) -> str:
        """Record `label`; returns its place as "(a)(i)" under the clause."""
        kinds = dict(self.levels)
        kind = self._kind(label, kinds)
        for depth, (open_kind, _) in enumerate(self.levels):
            if open_kind == kind:
                del self.levels[depth:]
                break
        self.levels.append((kind, label))
        return "".join(f"({value})" for _, value in self.levels)

    @property
    def kind(self) -> str | None:
        """The kind of the innermost open point."""
        return self.levels[-1][0] if self.levels else None

    def clear(self) -> None:
        self.levels.clear()
