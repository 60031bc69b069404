"""Word's automatic list numbers: the "1.", "(a)" or "Section 2" a reader sees in front of a
DOCX paragraph that its text does not hold.

Word draws those numbers from `word/numbering.xml` when it lays the page out, so a policy
whose sections and points are Word lists has no citable numbers in its words. They are rendered
here from the parts themselves, as Word does: a paragraph's `w:numPr` (or its style's, along
`w:basedOn`) names a list instance (`w:num`) and a level; the instance takes its levels from an
abstract definition (through a numbering style where it links one, `w:numStyleLink`), level by
level replaced by its `w:lvlOverride`. Each level has a format (`w:numFmt`), a template
(`w:lvlText`, "%1.%2"), a start value, and a restart rule (`w:lvlRestart`); `w:isLgl` shows every
number of its template in decimal. Instances of one abstract definition continue one count; a
`w:startOverride` restarts it the first time the instance uses that level.

Each number also gets its ref in its list, the way such numbers are cited: a level whose
template shows only its own number hangs it under the item above ("2." then "(a)" is "2(a)");
a template that shows several ("%1.%2") is the ref itself ("2.1").

unstructured's partition writes its own rendering of these labels in front of the text;
`number_rows` puts Word's in their place and gives each numbered row its ref and level, for
the structure builder.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
from lxml import etree

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_NS = {"w": _W, "wp": "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"}
# The text unstructured reads from a paragraph: its runs, its links' runs, an inline drawing's.
_OWN_TEXT = etree.XPath(
    "./w:r/w:t/text() | ./w:hyperlink/w:r/w:t/text()"
    " | ./w:r/descendant::wp:inline[ancestor::w:drawing][1]//w:r/w:t/text()",
    namespaces=_NS,
)
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=True)
# Word has nine list levels, 0 to 8, and caps a number at 32767.
LEVELS = 9
_MAX_NUMBER = 32767
_PLACEHOLDER = re.compile(r"%([1-9])")
_ROMAN = (
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
    (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
)  # fmt: skip
# Formats that show no number.
_UNNUMBERED = ("bullet", "none")
# Paragraphs Word does not number in the body's flow: text boxes, and the copy of a drawing
# Word keeps for older readers.
_OUTSIDE_FLOW = ("txbxContent", "Fallback")
# How far (in letters and digits) a label may run before the paragraph's own text, and how many
# paragraphs ahead a row is looked for, when rows are matched to paragraphs.
_LABEL_CHARS = 24
_LOOKAHEAD = 8
_MIN_MATCH = 12


def _w(name: str) -> str:
    return f"{{{_W}}}{name}"


def _val(element: etree._Element | None, child: str) -> str | None:
    """The `w:val` of `element`'s child `child` ("w:start"), None when either is absent."""
    if element is None:
        return None
    found = element.find(child, _NS)
    return None if found is None else found.get(_w("val"))


def _int(value: str | None) -> int | None:
    try:
        return None if value is None else int(float(value))
    except ValueError:
        return None


@dataclass(frozen=True)
class ListNumber:
    """One paragraph's list number: `label` as Word shows it ("(a)"), `ref` its citation in its
    list ("2(a)"; None where the label shows no number), `level` its list level (0 outermost)."""

    label: str
    ref: str | None
    level: int


@dataclass(frozen=True)
class BodyParagraph:
    """A paragraph directly in the document's body: its text as unstructured reads it (the
    paragraph's own runs and links) and its list number."""

    text: str
    number: ListNumber | None


@dataclass(frozen=True)
class _Level:
    fmt: str
    text: str
    start: int
    restart: int | None  # w:lvlRestart: None restarts after any level above, 0 never
    legal: bool
    style: str | None  # the paragraph style this level is linked to

    @classmethod
    def read(cls, lvl: etree._Element) -> _Level:
        return cls(
            fmt=_val(lvl, "w:numFmt") or "decimal",
            text=_val(lvl, "w:lvlText") or "",
            # the schema's default start is 0; Word always writes one
            start=_int(_val(lvl, "w:start")) or 0,
            restart=_int(_val(lvl, "w:lvlRestart")),
            legal=lvl.find("w:isLgl", _NS) is not None
            and _val(lvl, "w:isLgl") not in ("0", "false", "off"),
            style=_val(lvl, "w:pStyle"),
        )


@dataclass
class _Count:
    """The running count of one list (an abstract definition): each level's current value
    (None before its first item, or after a restart) and the ref of its last item."""

    values: list[int | None] = field(default_factory=lambda: [None] * LEVELS)
    refs: list[str | None] = field(default_factory=lambda: [None] * LEVELS)


class Numbering:
    """The numbering definitions of one document and the counts of its lists. `number` must see
    every paragraph once, in document order, as Word counts them."""

    def __init__(self, numbering: etree._Element | None, styles: etree._Element | None) -> None:
        self.abstracts: dict[str, dict[int, _Level]] = {}
        self.links: dict[str, str] = {}  # abstractNumId -> numbering style it takes levels from
        self.nums: dict[str, tuple[str, dict[int, _Level], dict[int, int]]] = {}
        self.styles: dict[str, tuple[str | None, str | None, int | None]] = {}
        self.default_style: str | None = None
        self.counts: dict[str, _Count] = {}
        self.restarted: set[tuple[str, int]] = set()
        if numbering is not None:
            self._read_numbering(numbering)
        if styles is not None:
            self._read_styles(styles)

    @classmethod
    def from_xml(cls, numbering: bytes | None, styles: bytes | None) -> Numbering:
        return cls(
            etree.fromstring(numbering, _PARSER) if numbering else None,
            etree.fromstring(styles, _PARSER) if styles else None,
        )

    def _read_numbering(self, root: etree._Element) -> None:
        for abstract in root.findall("w:abstractNum", _NS):
            key = abstract.get(_w("abstractNumId")) or ""
            levels = {}
            for lvl in abstract.findall("w:lvl", _NS):
                if (ilvl := _int(lvl.get(_w("ilvl")))) is not None:
                    levels[ilvl] = _Level.read(lvl)
            self.abstracts.setdefault(key, levels)
            if (link := _val(abstract, "w:numStyleLink")) is not None:
                self.links.setdefault(key, link)
        for num in root.findall("w:num", _NS):
            overrides: dict[int, _Level] = {}
            starts: dict[int, int] = {}
            for override in num.findall("w:lvlOverride", _NS):
                ilvl = _int(override.get(_w("ilvl")))
                if ilvl is None:
                    continue
                if (lvl := override.find("w:lvl", _NS)) is not None:
                    overrides[ilvl] = _Level.read(lvl)
                if (start := _int(_val(override, "w:startOverride"))) is not None:
                    starts[ilvl] = start
            entry = (_val(num, "w:abstractNumId") or "", overrides, starts)
            self.nums.setdefault(num.get(_w("numId")) or "", entry)

    def _read_styles(self, root: etree._Element) -> None:
        for style in root.findall("w:style", _NS):
            key = style.get(_w("styleId")) or ""
            num_pr = style.find("w:pPr/w:numPr", _NS)
            self.styles.setdefault(
                key,
                (_val(style, "w:basedOn"), _val(num_pr, "w:numId"), _int(_val(num_pr, "w:ilvl"))),
            )
            default = style.get(_w("default")) in ("1", "true", "on")
            if style.get(_w("type")) == "paragraph" and default and self.default_style is None:
                self.default_style = key

    # which list and level a paragraph is in ----------------------------------------------
    def _style_num_pr(self, style: str | None) -> tuple[str | None, int | None, str | None]:
        """(numId, ilvl, the style that gave the numId) along the style's `basedOn` chain."""
        num_id, ilvl, source, seen = None, None, None, set()
        while style is not None and style in self.styles and style not in seen:
            seen.add(style)
            based_on, style_num, style_ilvl = self.styles[style]
            if num_id is None and style_num is not None:
                num_id, source = style_num, style
            if ilvl is None:
                ilvl = style_ilvl
            style = based_on
        return num_id, ilvl, source

    def _abstract(self, num_id: str) -> str | None:
        """The abstract definition a list instance counts in, through numbering styles."""
        seen: set[str] = set()
        abstract = self.nums[num_id][0] if num_id in self.nums else None
        while abstract in self.links and abstract not in seen:
            seen.add(abstract)
            linked = self._style_num_pr(self.links[abstract])[0]
            if linked is None or linked not in self.nums:
                return None
            abstract = self.nums[linked][0]
        return abstract if abstract in self.abstracts else None

    def _level(self, num_id: str, abstract: str, ilvl: int) -> _Level | None:
        return self.nums[num_id][1].get(ilvl) or self.abstracts[abstract].get(ilvl)

    # counting and rendering ----------------------------------------------------------------
    def number(self, paragraph: etree._Element) -> ListNumber | None:
        """The paragraph's list number, counting it; None for a paragraph Word does not number
        (or numbers with a bullet)."""
        if _only_section_break(paragraph):
            return None
        num_pr = paragraph.find("w:pPr/w:numPr", _NS)
        own_num, own_ilvl = _val(num_pr, "w:numId"), _int(_val(num_pr, "w:ilvl"))
        style = _val(paragraph.find("w:pPr", _NS), "w:pStyle") or self.default_style
        style_num, style_ilvl, source = self._style_num_pr(style)
        num_id = own_num if own_num is not None else style_num
        if num_id in (None, "0") or num_id not in self.nums:
            return None
        abstract = self._abstract(num_id)
        if abstract is None:
            return None
        ilvl = own_ilvl if own_ilvl is not None else style_ilvl
        if ilvl is None:
            linked = [i for i, lvl in self.abstracts[abstract].items() if lvl.style == source]
            ilvl = min(linked) if own_num is None and linked else 0
        level = self._level(num_id, abstract, ilvl) if 0 <= ilvl < LEVELS else None
        if level is None:
            return None
        count = self.counts.setdefault(abstract, _Count())
        self._advance(count, num_id, abstract, ilvl, level)
        return self._render(count, num_id, abstract, ilvl, level)

    def _advance(self, count: _Count, num_id: str, abstract: str, ilvl: int, lvl: _Level) -> None:
        starts = self.nums[num_id][2]
        current = count.values[ilvl]
        if ilvl in starts and (num_id, ilvl) not in self.restarted:
            self.restarted.add((num_id, ilvl))
            count.values[ilvl] = starts[ilvl]
        elif current is None:
            count.values[ilvl] = lvl.start
        else:
            count.values[ilvl] = min(current + 1, _MAX_NUMBER)
        for deeper in range(ilvl + 1, LEVELS):
            below = self._level(num_id, abstract, deeper)
            restart = None if below is None else below.restart
            # lvlRestart is one-based: "1" restarts the level after each item of level 0
            if restart is None or restart > deeper or (restart != 0 and ilvl < restart):
                count.values[deeper] = count.refs[deeper] = None

    def _render(
        self, count: _Count, num_id: str, abstract: str, ilvl: int, lvl: _Level
    ) -> ListNumber | None:
        if lvl.fmt == "bullet":
            return None
        numbers: dict[int, str] = {}
        for placeholder in {int(n) - 1 for n in _PLACEHOLDER.findall(lvl.text)}:
            shown = self._level(num_id, abstract, placeholder) if placeholder <= ilvl else None
            if shown is None:
                numbers[placeholder] = ""
                continue
            value = count.values[placeholder]
            fmt = shown.fmt
            if lvl.legal and fmt not in _UNNUMBERED:
                fmt = "decimal"
            rendered = format_number(shown.start if value is None else value, fmt)
            if rendered is None:
                return None
            numbers[placeholder] = rendered
        label = _PLACEHOLDER.sub(lambda m: numbers[int(m.group(1)) - 1], lvl.text).strip()
        ref = self._ref(count, ilvl, lvl.text, numbers)
        count.refs[ilvl] = ref
        return ListNumber(label, ref, ilvl) if label else None

    @staticmethod
    def _ref(count: _Count, ilvl: int, template: str, numbers: dict[int, str]) -> str | None:
        """The number's citation in its list: its own number under the item above it, or the
        part of the label from its first number to its last where it shows several."""
        shown = [int(n) - 1 for n in _PLACEHOLDER.findall(template)]
        if not shown or not numbers.get(ilvl):
            return None
        if set(shown) == {ilvl}:
            parent = count.refs[ilvl - 1] if ilvl > 0 else None
            return f"{parent}({numbers[ilvl]})" if parent else numbers[ilvl]
        placeholders = list(_PLACEHOLDER.finditer(template))
        span = template[placeholders[0].start() : placeholders[-1].end()]
        return _PLACEHOLDER.sub(lambda m: numbers[int(m.group(1)) - 1], span).strip() or None


def format_number(value: int, fmt: str) -> str | None:
    """`value` in the Word number format `fmt` ("lowerLetter": 28 -> "bb"); None for a format
    this does not render as Word does."""
    if fmt == "none":
        return ""
    if fmt == "decimal":
        return str(value)
    if fmt == "decimalZero":
        return f"{value:02d}"
    if fmt in ("lowerLetter", "upperLetter") and value > 0:
        letters = chr(ord("a") + (value - 1) % 26) * ((value - 1) // 26 + 1)
        return letters if fmt == "lowerLetter" else letters.upper()
    if fmt in ("lowerRoman", "upperRoman") and 0 < value < 4000:
        roman = ""
        for size, numeral in _ROMAN:
            times, value = divmod(value, size)
            roman += numeral * times
        return roman.lower() if fmt == "lowerRoman" else roman
    if fmt == "ordinal" and value >= 0:
        teen = 10 <= value % 100 <= 20
        return f"{value}{'th' if teen else {1: 'st', 2: 'nd', 3: 'rd'}.get(value % 10, 'th')}"
    return None


def _only_section_break(paragraph: etree._Element) -> bool:
    """An empty paragraph that only carries a section break: Word shows no number on it."""
    return paragraph.find("w:pPr/w:sectPr", _NS) is not None and not paragraph.xpath(
        ".//w:r[w:t or w:tab or w:br or w:drawing or w:pict or w:object or w:sym]", namespaces=_NS
    )


def _in_flow(paragraph: etree._Element) -> bool:
    return not any(
        etree.QName(ancestor).localname in _OUTSIDE_FLOW for ancestor in paragraph.iterancestors()
    )


def read_paragraphs(
    document: bytes, numbering: bytes | None, styles: bytes | None
) -> list[BodyParagraph]:
    """The body's own paragraphs in order, each with its list number. Paragraphs in tables and
    content controls are counted as Word counts them, but not returned."""
    root = etree.fromstring(document, _PARSER)
    body = root.find("w:body", _NS)
    if body is None:
        return []
    lists = Numbering.from_xml(numbering, styles)
    paragraphs = []
    for paragraph in body.iter(_w("p")):
        if not _in_flow(paragraph):
            continue
        number = lists.number(paragraph)
        if paragraph.getparent() is body:
            paragraphs.append(BodyParagraph("".join(_OWN_TEXT(paragraph)), number))
    return paragraphs


def body_paragraphs(path: Path) -> list[BodyParagraph]:
    with zipfile.ZipFile(path) as archive:
        names = set(archive.namelist())

        def part(name: str) -> bytes | None:
            return archive.read(name) if name in names else None

        document = part("word/document.xml")
        if document is None:
            return []
        return read_paragraphs(document, part("word/numbering.xml"), part("word/styles.xml"))


# rows <- paragraphs -------------------------------------------------------------------------
def _squash(text: str) -> str:
    return "".join(c for c in text.casefold() if c.isalnum())


def _label_end(row: str, paragraph: str) -> int | None:
    """Where the paragraph's text starts in a row's text (both squashed): after a label of up
    to _LABEL_CHARS, the row being the paragraph or its first part (a page break splits a
    paragraph into rows); None when the row is not this paragraph's."""
    for cut in range(min(_LABEL_CHARS, len(row)) + 1):
        rest = row[cut:]
        if not rest:
            return None
        if len(rest) >= min(_MIN_MATCH, len(paragraph)) and paragraph.startswith(rest):
            return cut
    return None


def _relabel(text: str, cut: int, label: str) -> str:
    """`text` with its first `cut` letters and digits (unstructured's label) replaced by
    Word's label."""
    seen, index = 0, 0
    while index < len(text) and seen < cut:
        seen += text[index].isalnum()
        index += 1
    while cut and index < len(text) and not text[index].isalnum() and not text[index].isspace():
        index += 1
    return f"{label} {text[index:].lstrip()}"


def number_texts(
    paragraphs: list[BodyParagraph], texts: list[str], categories: list[str]
) -> list[tuple[str, ListNumber | None]]:
    """Each row's text with Word's label in front, and its list number, for the rows that are
    numbered paragraphs of the body; other rows as they are. Rows and paragraphs are matched in
    order by their letters and digits, rows of tables, headers, footers, page breaks and images
    aside."""
    keyed = [(_squash(p.text), p) for p in paragraphs]
    keyed = [(key, p) for key, p in keyed if key]
    out: list[tuple[str, ListNumber | None]] = []
    at = 0
    for text, category in zip(texts, categories, strict=True):
        found = None
        if category not in ("Table", "PageBreak", "Header", "Footer", "Image") and text:
            row = _squash(text)
            for index in range(at, min(at + _LOOKAHEAD, len(keyed))):
                cut = _label_end(row, keyed[index][0])
                if cut is not None:
                    found, at = (cut, keyed[index][1]), index + 1
                    break
        number = found[1].number if found is not None else None
        if found is None or number is None:
            out.append((text, None))
            continue
        cut = found[0]
        if _squash(number.label) != row[:cut]:
            text = _relabel(text, cut, number.label)
        out.append((text, number))
    return out


def number_rows(frame: pl.DataFrame, path: Path) -> pl.DataFrame:
    """The element rows of a DOCX with Word's list numbers: the label in front of the text, the
    ref and level in `ref` and `depth` (None where the row is not a numbered paragraph)."""
    try:
        paragraphs = body_paragraphs(path)
    except etree.XMLSyntaxError:
        return frame  # a broken numbering or styles part: unstructured's labels stand
    if not any(p.number for p in paragraphs):
        return frame
    numbered = number_texts(paragraphs, frame["text"].to_list(), frame["category"].to_list())
    depths = frame["depth"].to_list()
    return frame.with_columns(
        pl.Series("text", [text for text, _ in numbered], dtype=pl.String),
        pl.Series("ref", [n.ref if n else None for _, n in numbered], dtype=pl.String),
        pl.Series(
            "depth",
            [n.level if n else depth for (_, n), depth in zip(numbered, depths, strict=True)],
            dtype=pl.Int32,
        ),
    )
