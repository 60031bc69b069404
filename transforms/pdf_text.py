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

Running heads, footers and page numbers stay in for now: `drop_running_text` removes them by
repetition at page edges, for every format alike.
"""

from __future__ import annotations

import ctypes
import statistics
import unicodedata
from dataclasses import dataclass

from transforms.quarantine import SourceError

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
    return unicodedata.normalize("NFKC", text)


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
        lead = len(piece) - len(piece.lstrip("\r\n \t\x02\xad"))
        begin = units[first + lead] if first + lead < len(units) else first + lead
        last = first + len(piece.rstrip("\r\n \t\x02\xad")) - 1
        finish = units[last] if last < len(units) else last
        boxes = [textpage.get_charbox(i, loose=True) for i in {begin, finish} if i < count]
        left = min(b[0] for b in boxes)
        right = max(b[2] for b in boxes)
        bottom = min(b[1] for b in boxes)
        top = max(b[3] for b in boxes)
        size = raw.FPDFText_GetFontSize(textpage, begin) if begin < count else 0.0
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
        for number in range(pages):
            page = document[number]
            textpage = page.get_textpage()
            try:
                found = page_lines(textpage, number + 1)
            finally:
                textpage.close()
                page.close()
            block = mark_blocks(found, block)
            lines.extend(found)
        return lines, pages
    finally:
        document.close()
