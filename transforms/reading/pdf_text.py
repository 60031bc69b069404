"""PDF text layer -> lines with their positions -> layout paragraphs, through PDFium.

unstructured's fast strategy (pdfminer underneath) returned most of a contract's body as
`Header`/`Footer` elements a page at a time, with words glued across line ends ("theParties").
Measured on the 43 CUAD contracts that ship as both PDF and TXT (words against the TXT, F1):
pdfminer's default layout 0.945 in 30 s, pypdf 0.9997 in 12 s, PDFium (pypdfium2) 0.9997 in
1.6 s. So lexkb reads PDF text with PDFium and rebuilds the layout itself:

- a line is a run of characters PDFium puts between two line breaks, with its box, font size and
  weight (from the line's first characters);
- a layout paragraph (`block`) starts after a vertical gap clearly larger than the page's usual
  line pitch, at a first-line indent, after a short line that ends a sentence, at a change of
  font size, after a short bold line (a heading), at a jump back up the page, and at each page's
  first line;
- a heading-looking line (bold, or all capitals, or centred, standing alone) is marked `Title`.

What a printed page sets apart by position is put back where the text means it: superscript
footnote numbers (call-outs in the line, labels of `Footnote` lines at the page's foot),
paragraph numbers in the margin (`MarginNumber`, before the line they stand beside) and drop
caps. Running heads, footers and page numbers stay in: `drop_running_text` removes them by
repetition at page edges, for every format alike.
"""

from __future__ import annotations

import ctypes
import re
import statistics
import unicodedata
from dataclasses import dataclass

from transforms.reading.quarantine import SourceError

# A gap between two baselines larger than this many times the page's usual pitch ends a block.
GAP_FACTOR = 1.45
# A line starting this many points right of the page's usual left edge is indented.
INDENT_POINTS = 12.0
# A line ending this far short of the usual right edge, after a sentence end, ends its block.
SHORT_LINE = 0.75
# Lines whose centre is within this many points of the text column's centre, with space on both
# sides, are centred.
CENTRE_POINTS = 20.0
_TERMINAL = (".", ";", ":", "!", "?")
# Footnotes run to the page's foot: no line under them stands this many points left of their
# labels.
NOTE_MARGIN = 2.0
# A superscript's first character stands this share of its row's height above the row's base.
RAISED = 0.2
# A superscript's baseline is compared with a letter this many characters from it at most.
BESIDE_CHARS = 6
_DESCENDERS = frozenset("gjpqyQJ")
# A superscript follows the text it marks within this many points.
ROW_GAP = 15.0
_LEAD_DIGITS = re.compile(r"^(\d{1,3})(?!\d)")
_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_SUPERSCRIPT = str.maketrans("0123456789", _SUPERSCRIPTS)
_PLAIN = str.maketrans(_SUPERSCRIPTS, "0123456789")
_PRIVATE = "".join(chr(0xE000 + i) for i in range(10))
_KEEP_RAISED = str.maketrans(_SUPERSCRIPTS, _PRIVATE)
_RESTORE_RAISED = str.maketrans(_PRIVATE, _SUPERSCRIPTS)
# Digits inside a line, after other text, that may be set as a superscript; never the digits
# after a number's dot ("2.2 Separation of duties", "1.3.1"), which headings set in mixed sizes.
_INNER_DIGITS = re.compile(r"(?<=\S)(?<!\d\.)\d{1,3}(?!\d)")
# A line (piece) that ends in a superscript, perhaps still in its bracket: the piece after it
# on the same row continues it.
_ENDS_RAISED = re.compile(f"[{_SUPERSCRIPTS}]$")
# A note's label at a line start: "(¹) OJ C 343" or "(¹" before the row's next piece.
_LABEL_RAISED = re.compile(f"^\\(([{_SUPERSCRIPTS}]+)\\)\\s*")
# A call-out mid-line in its brackets: "Bank (¹),".
_CALL_OUT = re.compile(f"\\s?\\(([{_SUPERSCRIPTS}]+)\\)")
# A margin paragraph number: digits, after a letter or two of an appendix ("B3", "AG12"),
# with a letter after it for an inserted paragraph ("46A", "C1A").
_MARGIN_LABEL = re.compile(r"^[A-Z]{0,2}\d{1,3}[A-Z]?$")
# A margin number ends this many points short of the text column, level with its first line.
MARGIN_GAP = 6.0
MARGIN_ALIGN = 3.0
# A drop cap: one capital letter, as tall as this many lines at least, its top level with
# the first line's (within this share of a line's height).
_DROP_CAP = re.compile(r"^[A-Z]$")
_SPACED_CAP = re.compile(r"^[A-Z] [A-Z]")
DROP_CAP_LINES = 2.0
DROP_CAP_ALIGN = 0.5
# The element category of a margin number, which opens the paragraph of the line after it.
MARGIN_NUMBER = "MarginNumber"
# The element category of a footnote, a note of the unit that calls it.
FOOTNOTE = "Footnote"


@dataclass
class Line:
    page: int
    text: str
    left: float
    right: float
    top: float
    bottom: float
    size: float
    bold: bool
    block: int = 0
    category: str = "Text"
    # the first character's box bottom and top: a superscript stands above the line's baseline
    lead_bottom: float = 0.0
    lead_top: float = 0.0
    # the line opens with a footnote's label set as a superscript ("(1) OJ C 343 ...")
    note_label: bool = False
    # a paragraph number set in the margin beside the text ("26", "B3", "C1A")
    margin: bool = False


def _open(path: str, password: str | None = None):
    import pypdfium2 as pdfium

    with open(path, "rb") as handle:
        head = handle.read(1024)
    if not head:
        raise SourceError("empty file (0 bytes)", stage="parse", kind="empty")
    if b"%PDF-" not in head:
        raise SourceError(
            f"not a PDF (starts with {describe_magic(head)})", stage="parse", kind="not_pdf"
        )
    try:
        return pdfium.PdfDocument(path, password=password)
    except pdfium.PdfiumError as exc:
        message = str(exc)
        if "password" in message.casefold():
            raise SourceError(
                "encrypted PDF: a password is needed", stage="parse", kind="encrypted"
            ) from exc
        raise SourceError(
            f"damaged or truncated PDF: PDFium cannot read it ({message})",
            stage="parse",
            kind="damaged_pdf",
        ) from exc


def describe_magic(head: bytes) -> str:
    """What a file's first bytes look like, for a reason a person can act on."""
    known = (
        (b"PK\x03\x04", "PK: a ZIP or Office file"),
        (b"<!DOCTYPE html", "<!DOCTYPE html: an HTML page"),
        (b"<html", "<html: an HTML page"),
        (b"{", "{: JSON"),
        (b"[", "[: JSON"),
        (b"\x89PNG", "a PNG image"),
        (b"\xff\xd8\xff", "a JPEG image"),
        (b"GIF8", "a GIF image"),
        (b"\x1f\x8b", "gzip data"),
    )
    stripped = head.lstrip()
    for magic, name in known:
        if stripped[: len(magic)].lower() == magic.lower():
            return name
    printable = sum(32 <= b < 127 or b in (9, 10, 13) for b in head[:256])
    if printable > 0.9 * min(len(head), 256):
        return "plain text"
    return "bytes " + head[:4].hex(" ")


def _is_bold(textpage, index: int) -> bool:
    import pypdfium2.raw as raw

    weight = raw.FPDFText_GetFontWeight(textpage, index)
    if weight >= 600:
        return True
    buffer = ctypes.create_string_buffer(128)
    flags = ctypes.c_int(0)
    raw.FPDFText_GetFontInfo(textpage, index, buffer, 128, ctypes.byref(flags))
    name = buffer.value.decode("latin-1", "replace").casefold()
    return "bold" in name or "black" in name or "heavy" in name


def _normal(text: str) -> str:
    """Compatibility forms a PDF's fonts map characters to (ligatures, U+037E for ";", U+FFFE
    for a hyphen) as the plain characters people type and search for."""
    text = text.replace("\x02", "").replace("\r", "").replace("\ufffe", "-")
    # superscript call-outs (see _raise) keep their form
    text = unicodedata.normalize("NFKC", text.translate(_KEEP_RAISED))
    return text.translate(_RESTORE_RAISED)


def _code_units(text: str) -> list[int]:
    """Index of each character in PDFium's UTF-16 char numbering (astral characters take two)."""
    units, position = [], 0
    for char in text:
        units.append(position)
        position += 2 if ord(char) > 0xFFFF else 1
    return units


def page_lines(textpage, page_number: int) -> list[Line]:
    """The lines of one page in PDFium's reading order, each with its box and font."""
    import pypdfium2.raw as raw

    count = textpage.count_chars()
    if count <= 0:
        return []
    text = textpage.get_text_range(0, count)
    units = _code_units(text)
    lines: list[Line] = []
    start = 0
    for end in [*(i for i, ch in enumerate(text) if ch == "\n"), len(text)]:
        piece = text[start:end]
        first = start
        start = end + 1
        stripped = piece.strip("\r\n \t\x02\xad")
        if not stripped:
            continue
        lead_chars = len(piece) - len(piece.lstrip("\r\n \t\x02\xad"))
        begin = units[first + lead_chars] if first + lead_chars < len(units) else first + lead_chars
        last = first + len(piece.rstrip("\r\n \t\x02\xad")) - 1
        finish = units[last] if last < len(units) else last
        boxes = [textpage.get_charbox(i, loose=True) for i in {begin, finish} if i < count]
        left = min(b[0] for b in boxes)
        right = max(b[2] for b in boxes)
        bottom = min(b[1] for b in boxes)
        top = max(b[3] for b in boxes)
        size = raw.FPDFText_GetFontSize(textpage, begin) if begin < count else 0.0
        lead = textpage.get_charbox(begin, loose=False) if begin < count else (0, bottom, 0, top)
        stripped = _raise(textpage, stripped, units, first + lead_chars)
        if _SPACED_CAP.match(stripped) and first + lead_chars + 2 < len(units):
            stripped = _close_drop_cap(textpage, stripped, units, first + lead_chars)
        lines.append(
            Line(
                page=page_number,
                text=_normal(stripped),
                left=left,
                right=right,
                top=top,
                bottom=bottom,
                size=float(size),
                bold=_is_bold(textpage, begin) if begin < count else False,
                lead_bottom=lead[1],
                lead_top=lead[3],
            )
        )
    return lines


def _mode(values: list[float], default: float) -> float:
    rounded = [round(v) for v in values]
    return float(statistics.mode(rounded)) if rounded else default


def mark_blocks(lines: list[Line], first_block: int = 0) -> int:
    """Number layout paragraphs and mark heading lines on one page; returns the next block."""
    if not lines:
        return first_block
    left = _mode([ln.left for ln in lines], lines[0].left)
    # Right edges are ragged: the text column ends where the longest lines end.
    rights = sorted(ln.right for ln in lines)
    right = rights[int(0.9 * (len(rights) - 1))]
    heights = [ln.top - ln.bottom for ln in lines if ln.top > ln.bottom]
    height = statistics.median(heights) if heights else 10.0
    pitches = [
        a.bottom - b.bottom
        for a, b in zip(lines, lines[1:], strict=False)
        if 0.5 * height < a.bottom - b.bottom < 3 * height
    ]
    pitch = statistics.median(pitches) if pitches else 1.2 * height
    width = max(right - left, 1.0)
    centre = (left + right) / 2
    block = first_block
    for index, line in enumerate(lines):
        previous = lines[index - 1] if index else None
        if previous is not None:
            step = previous.bottom - line.bottom
            previous_text = previous.text
            short = previous.right < left + SHORT_LINE * width
            new = (
                step > GAP_FACTOR * pitch
                # a heading over its text: another size, or a short bold line over plain text
                or abs(line.size - previous.size) >= 1.0
                or (previous.bold and not line.bold and short)
                or step < -0.5 * height  # back up the page: a new column or a footer
                or (line.left - left > INDENT_POINTS and previous.left - left <= INDENT_POINTS)
                or (
                    previous_text.endswith(_TERMINAL)
                    and short
                    and previous.left - left <= INDENT_POINTS
                )
            )
            if new:
                block += 1
        line.block = block
    # Headings: a block of one line that is bold, all capitals or centred; or a short block
    # whose lines are all bold (a title wrapped over two lines).
    sizes: dict[int, int] = {}
    plain: set[int] = set()
    for line in lines:
        sizes[line.block] = sizes.get(line.block, 0) + 1
        if not line.bold:
            plain.add(line.block)
    for line in lines:
        if sizes[line.block] <= 3 and line.block not in plain and len(line.text) <= 150:
            line.category = "Title"
            continue
        letters = [c for c in line.text if c.isalpha()]
        capitals = len(letters) >= 3 and all(c.isupper() for c in letters)
        centred = (
            abs((line.left + line.right) / 2 - centre) < CENTRE_POINTS
            and line.left - left > 2 * INDENT_POINTS
            and right - line.right > 2 * INDENT_POINTS
        )
        if sizes[line.block] == 1 and len(line.text) <= 150 and (line.bold or capitals or centred):
            line.category = "Title"
    return block + 1


def _raised_digits(line: Line, before: Line) -> re.Match[str] | None:
    """The digits a line opens with when they are set as a superscript on `before`'s row: a
    footnote's call-out or label, which PDFium gives a line of its own."""
    digits = _LEAD_DIGITS.match(line.text)
    height = before.top - before.bottom
    if digits is None or height <= 0:
        return None
    same_row = (
        -1.0 <= line.left - before.right <= ROW_GAP
        and line.lead_bottom < before.top
        and line.lead_top > before.bottom
    )
    raised = line.lead_bottom - before.bottom > RAISED * height
    return digits if same_row and raised else None


def join_superscripts(lines: list[Line]) -> list[Line]:
    """Put superscript footnote numbers back on their lines and write them so the builder can
    read them. PDFium breaks a line where the baseline rises or falls, so a superscript and
    the text after it can be pieces of their own ("Bank (" / "1" / "),"); pieces of one row
    are joined again. Then a number opening a line ("(¹) OJ C 343", at a page's foot) is the
    note's label, written "(1) " and marked `note_label`; set mid-line it is a call-out, kept
    in superscript digits without its brackets ("Bank¹,"), so the builder can file the note
    under the unit that calls it. Other lines are left as PDFium breaks them."""
    joined: list[Line] = []
    for line in lines:
        before = joined[-1] if joined else None
        if before is not None and (digits := _raised_digits(line, before)) is not None:
            line.text = digits.group(1).translate(_SUPERSCRIPT) + line.text[digits.end() :]
        elif before is None or not (_ENDS_RAISED.search(before.text) and _same_row(line, before)):
            joined.append(line)
            continue
        before.text += line.text
        before.right = max(before.right, line.right)
    for line in joined:
        label = _LABEL_RAISED.match(line.text)
        if label is not None:
            number = label.group(1).translate(_PLAIN)
            line.text = f"({number}) {line.text[label.end() :]}".rstrip()
            line.note_label = True
        line.text = _CALL_OUT.sub(r"\1", line.text)
    return joined


def _same_row(line: Line, before: Line) -> bool:
    """`line` goes on from where `before` ends, on the same row."""
    return (
        -1.0 <= line.left - before.right <= ROW_GAP
        and line.bottom < before.top
        and line.top > before.bottom
    )


def _raise(textpage, text: str, units: list[int], first: int) -> str:
    """A line's text with the numbers PDFium set above its baseline, after other text, in
    superscript digits: a footnote's call-out inside the line ("Bank (¹),"). The baseline is
    read from the nearest letter or digit beside the number (brackets reach below it)."""
    pieces: list[str] = []
    done = 0
    for match in _INNER_DIGITS.finditer(text):
        reference = _beside(text, match.start(), match.end())
        if reference is None or first + match.start() >= len(units):
            continue
        low = textpage.get_charbox(units[first + reference], loose=False)
        high = textpage.get_charbox(units[first + match.start()], loose=False)
        height = low[3] - low[1]
        if height > 0 and high[1] - low[1] > RAISED * height:
            pieces.append(text[done : match.start()] + match.group(0).translate(_SUPERSCRIPT))
            done = match.end()
    return "".join(pieces) + text[done:] if pieces else text


def _beside(text: str, start: int, end: int) -> int | None:
    """The nearest letter or digit standing on the baseline (none that reaches below it, as
    "p" or "y" does) before `start` or else after `end`, a few characters off."""
    for index in range(start - 1, max(start - BESIDE_CHARS, 0) - 1, -1):
        if text[index].isalnum() and text[index] not in _DESCENDERS:
            return index
    for index in range(end, min(end + BESIDE_CHARS, len(text))):
        if text[index].isalnum() and text[index] not in _DESCENDERS:
            return index
    return None


def _close_drop_cap(textpage, text: str, units: list[int], first: int) -> str:
    """ "B E IT ENACTED": a drop cap PDFium reads on its line, set apart by a space, rejoins
    its word when it stands taller than DROP_CAP_LINES of the letters after it."""
    cap = textpage.get_charbox(units[first], loose=False)
    after = textpage.get_charbox(units[first + 2], loose=False)
    if cap[3] - cap[1] > DROP_CAP_LINES * max(after[3] - after[1], 0.1):
        return text[0] + text[2:]
    return text


def join_drop_caps(lines: list[Line]) -> list[Line]:
    """A drop cap (the "B" of "BE IT ENACTED", set over several lines at the start of the
    text) is a line of its own to PDFium, often read after the text it opens: its letter goes
    back to the start of the line level with its top, to its right."""
    heights = [line.top - line.bottom for line in lines if len(line.text) > 1]
    if not heights:
        return lines
    usual = statistics.median(heights)
    kept: list[Line] = []
    for line in lines:
        if _DROP_CAP.match(line.text) and line.top - line.bottom > DROP_CAP_LINES * usual:
            beside = next(
                (
                    other
                    for other in lines
                    if other is not line
                    and abs(other.top - line.top) <= DROP_CAP_ALIGN * usual
                    and 0 <= other.left - line.right <= ROW_GAP
                ),
                None,
            )
            if beside is not None:
                beside.text = line.text + beside.text
                continue
        kept.append(line)
    return kept


def place_margin_numbers(lines: list[Line], least: int = 2) -> list[Line]:
    """Standards number their paragraphs in the margin ("26", "46A", "B3"), and PDFium reads
    the margin after the page's text. A number that comes after the line it stands level with,
    left of that line's start, is put before that line and marked `margin`, so that it opens
    that paragraph. A page with fewer than `least` such numbers (a list's labels, a page
    number) keeps its order, as does a number that PDFium reads in its place (a contract's "1"
    before its heading). pdf_lines asks for two on a page until a page has shown them."""
    placed: dict[int, Line] = {}
    for index, number in enumerate(lines):
        if not _MARGIN_LABEL.match(number.text):
            continue
        beside = [
            line
            for line in lines[:index]
            if abs(line.top - number.top) <= MARGIN_ALIGN
            and line.left - number.right >= MARGIN_GAP
            and not _MARGIN_LABEL.match(line.text)
        ]
        if beside and id(beside[0]) not in placed:
            placed[id(beside[0])] = number
    if len(placed) < least:
        return lines
    for number in placed.values():
        number.margin = True
    ordered: list[Line] = []
    for line in lines:
        if line.margin:
            continue
        if id(line) in placed:
            ordered.append(placed[id(line)])
        ordered.append(line)
    return ordered


def mark_footnotes(lines: list[Line]) -> None:
    """Footnotes at a page's foot: from the first line there that opens with a note's label
    ("(1) OJ C 343 ...", its number set as a superscript) to the page's end, each note with
    the lines that continue it made one `Footnote` line. Only lines below the first label,
    with nothing of the body under it, count; a running head above the text stays as it is."""
    labelled = [line for line in lines if line.note_label]
    if not labelled:
        return
    # The page's foot (a page number, the act-by-act layout's "ELI: ... 2/144") may come first
    # in reading order; it stands below every note, where no body text does.
    foot = min(line.bottom for line in labelled)
    start = next(
        (
            index
            for index, line in enumerate(lines)
            if line.note_label
            and all(other.top > line.top or other.top < foot for other in lines[:index])
        ),
        None,
    )
    if start is None:
        return
    first = lines[start]
    below = [line for line in lines[start:] if line.top <= first.top]
    if any(line.left < first.left - NOTE_MARGIN for line in below):
        # Body text goes on under them, left of their labels: notes an amending act quotes
        # ("(1) * Commission Delegated Regulation ..." inside ‘...’), not the page's own.
        return
    notes: list[Line] = []
    for line in lines[start:]:
        if line.top > first.top:
            continue
        if line.note_label or not notes:
            line.category = FOOTNOTE
            notes.append(line)
        else:
            notes[-1].text = _join_words(notes[-1].text, line.text)
            line.text = ""
    lines[:] = [line for line in lines if line.text]


def _join_words(text: str, more: str) -> str:
    """Two lines of one note, a word hyphenated over them made whole again."""
    if text.endswith("-") and more[:1].islower():
        return text[:-1] + more
    return f"{text} {more}"


def _truncated(path: str) -> bool:
    """A PDF ends with an end-of-file marker; one cut short by a failed copy does not."""
    with open(path, "rb") as handle:
        handle.seek(0, 2)
        handle.seek(max(0, handle.tell() - 2048))
        return b"%%EOF" not in handle.read()


def pdf_lines(path: str, max_pages: int | None = None) -> tuple[list[Line], int]:
    """Every line of the PDF with block numbers and categories, and the page count."""
    try:
        document = _open(path)
    except SourceError as error:
        if error.kind == "damaged_pdf" and _truncated(path):
            raise SourceError(
                "truncated PDF: the file ends before its end-of-file marker", kind="truncated"
            ) from error
        raise
    try:
        pages = len(document)
        if max_pages is not None and pages > max_pages:
            raise SourceError(
                f"PDF has {pages} pages, over the limit of {max_pages}",
                stage="parse",
                kind="too_large",
            )
        lines: list[Line] = []
        block = 0
        margins = False
        for number in range(pages):
            page = document[number]
            textpage = page.get_textpage()
            try:
                found = page_lines(textpage, number + 1)
            finally:
                textpage.close()
                page.close()
            found = join_drop_caps(join_superscripts(found))
            found = place_margin_numbers(found, 1 if margins else 2)
            margins = margins or any(line.margin for line in found)
            block = mark_blocks(found, block)
            mark_footnotes(found)
            for line in found:
                if line.margin:
                    line.category = MARGIN_NUMBER
            lines.extend(found)
        return lines, pages
    finally:
        document.close()
