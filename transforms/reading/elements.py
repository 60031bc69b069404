"""Source file -> raw elements: the one place that reads file formats.

The output is a flat frame, one row per element, that later stages can re-read from Parquet without
any parser installed. `block` numbers layout paragraphs (lines of one visual paragraph share it),
so the structure builder can cut unnumbered text where the page does.

- PDF: PDFium's text layer, a row per line (transforms.reading.pdf_text; measured against unstructured's
  fast strategy there).
- Plain text: a row per line, blocks separated by blank lines. Runs of three or more spaces inside
  a line are line breaks a conversion lost (SEC filings' text is full of them), so they split it.
- DOCX, HTML, Markdown: unstructured's elements, each its own block; but the US Code's XHTML
  (the OLRC's rendering) is markup and is read as such, like legal XML. A DOCX's list numbers
  are Word's own, with their refs and levels (transforms.reading.docx_numbering).
- Passage files (JSON/JSONL): each object is already a paragraph with its own document key and
  reference.
- Legal XML (USLM, CLML, Formex, Akoma Ntoso): the publisher's markup, read by
  transforms.reading.legal_xml, a row per heading, unit and note, each with its ref.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import polars as pl

from transforms.reading import docx_numbering, html_text, offline_nlp
from transforms.reading.element_schema import ELEMENT_SCHEMA
from transforms.reading.file_limits import ParseLimits
from transforms.reading.legal_xml import uscode_html
from transforms.reading.quarantine import SourceError
from transforms.reading.source_files import SourceFile

# Bump when the element frame of a file would change, so cached frames are parsed again.
PARSER_VERSION = 5

_PASSAGE_FIELDS = {
    "document_key": ("DocumentID", "document_id", "document_key", "document"),
    "ref": ("PassageID", "passage_id", "ref"),
    "text": ("Passage", "passage", "text", "content"),
    "title": ("title", "Title"),
}


def _first(obj: dict, names: tuple[str, ...]) -> object:
    for name in names:
        if name in obj and obj[name] is not None:
            return obj[name]
    return None


def _load_passage_objects(path: Path) -> list[object]:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceError(
            f"not UTF-8 text at byte {exc.start} (JSON must be UTF-8)", kind="invalid_json"
        ) from exc
    if path.suffix.lower() == ".jsonl":
        objects = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                objects.append(_json(line, f"line {number}"))
        return objects
    data = _json(text, None)
    if isinstance(data, dict) and isinstance(data.get("passages"), list):
        data = data["passages"]
    if not isinstance(data, list):
        raise SourceError("expected a JSON list of passage objects", kind="invalid_json")
    return data


def _json(text: str, where: str | None) -> object:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        place = where or f"line {exc.lineno}"
        raise SourceError(f"invalid JSON at {place}: {exc.msg}", kind="invalid_json") from exc
    except RecursionError as exc:
        raise SourceError(
            "JSON nested too deeply to read (more levels than the parser allows)",
            kind="too_deep",
        ) from exc


def passage_elements(source: SourceFile) -> pl.DataFrame:
    rows: list[dict] = []
    for index, obj in enumerate(_load_passage_objects(source.path)):
        if not isinstance(obj, dict):
            raise SourceError(f"passage {index} is not an object", kind="invalid_json")
        text = _first(obj, _PASSAGE_FIELDS["text"])
        if text is None:
            raise SourceError(
                f"passage {index} has no text field (Passage or text)", kind="invalid_json"
            )
        document_key = _first(obj, _PASSAGE_FIELDS["document_key"])
        ref = _first(obj, _PASSAGE_FIELDS["ref"])
        title = _first(obj, _PASSAGE_FIELDS["title"])
        rows.append(
            {
                "element_index": index,
                "category": "Passage",
                "text": str(text),
                "page": None,
                "depth": None,
                "document_key": str(document_key) if document_key is not None else None,
                "ref": str(ref).strip() if ref is not None else None,
                "title": str(title) if title is not None else None,
                "block": index,
            }
        )
    return pl.DataFrame(rows, schema=ELEMENT_SCHEMA)


def _literal_list_numbers(markdown: str) -> str:
    """Escape "1." at a line start so Markdown keeps the number as text.

    Rendered as an ordered list, "1. Personal data shall be..." loses its "1.", which is the
    paragraph's citable number.
    """
    return re.sub(r"(?m)^(\s{0,3})(\d{1,3})\.(\s)", r"\1\2\\.\3", markdown)


def _row(index: int, category: str, text: str, page: int | None, block: int) -> dict:
    return {
        "element_index": index,
        "category": category,
        "text": text,
        "page": page,
        "depth": None,
        "document_key": None,
        "ref": None,
        "title": None,
        "block": block,
    }


def pdf_elements(source: SourceFile, limits: ParseLimits) -> pl.DataFrame:
    from transforms.reading.pdf_text import pdf_lines

    lines, _ = pdf_lines(str(source.path), limits.max_pages)
    if not lines:
        raise SourceError(
            "no text layer: the PDF holds only images (scanned?), and OCR is not enabled",
            stage="parse",
            kind="no_text_layer",
        )
    rows = [
        _row(index, line.category, line.text, line.page, line.block)
        for index, line in enumerate(lines)
    ]
    return pl.DataFrame(rows, schema=ELEMENT_SCHEMA)


_LOST_BREAK = re.compile(r"(?<=\S) {3,}(?=\S)")
_TERMINAL = (".", ";", ":", "!", "?")
# A page number a conversion left between paragraphs: "12", "Page 3", "Page 3 of 10", "- 4 -".
_PAGE_NUMBER = re.compile(
    r"^(?:page\s*)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?$|^[-–]\s*\d{1,4}\s*[-–]$", re.IGNORECASE
)
# A piece that is only a list label ("a.", "1.1.", "(iv)") belongs with the text after it.
_LABEL = re.compile(r"^(?:\(?[a-zA-Z]{1,4}[.)]|\(\d{1,3}\)|\d{1,3}(?:\.\d{1,3})*\.?)$")


def read_text(path) -> str:
    """UTF-8 where it decodes, Windows-1252 for the lines that do not (mixed encodings happen in
    files stitched together from several sources). Binary data is refused, not indexed as
    garbage."""
    raw = path.read_bytes()
    _refuse_binary(raw)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    lines = []
    for line in raw.split(b"\n"):
        try:
            lines.append(line.decode("utf-8"))
        except UnicodeDecodeError:
            lines.append(line.decode("cp1252", errors="replace"))
    return "\n".join(lines)


def _refuse_binary(raw: bytes) -> None:
    """Text has no NUL bytes and few control characters; random bytes or an image have many."""
    from transforms.reading.pdf_text import describe_magic

    sample = raw[:65536]
    controls = sum(1 for b in sample if b < 32 and b not in (9, 10, 12, 13))
    if b"\x00" in sample or controls > 0.05 * max(len(sample), 1):
        raise SourceError(
            f"binary data, not text (starts with {describe_magic(raw[:1024])})", kind="binary"
        )


def _title_line(text: str) -> bool:
    """A line standing alone that reads as a heading: short, no sentence end, capitalised."""
    words = text.split()
    if not words or len(words) > 12 or len(text) > 100 or text.rstrip().endswith((".", ";", ",")):
        return False
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return False
    capitalised = sum(1 for w in words if w[:1].isupper() or not w[:1].isalpha())
    return all(c.isupper() for c in letters) or capitalised >= 0.6 * len(words)


def _pieces(line: str) -> list[str]:
    """A line split at its lost breaks; a bare label stays with its text ("1.   TERM" is
    "1. TERM"), and a bare page number between pieces is dropped."""
    pieces: list[str] = []
    for piece in (p.strip() for p in _LOST_BREAK.split(line.strip())):
        if not piece or _PAGE_NUMBER.match(piece):
            continue
        if pieces and _LABEL.match(pieces[-1]):
            pieces[-1] = f"{pieces[-1]} {piece}"
        else:
            pieces.append(piece)
    return pieces


def text_elements(text: str) -> pl.DataFrame:
    """A row per line (or per piece of a line split at a lost break), blocks at blank lines; a
    piece after a sentence end starts a block of its own too."""
    rows: list[dict] = []
    block = 0
    gap = True
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line.strip():
            if not gap:
                block += 1
            gap = True
            continue
        pieces = _pieces(line)
        if not pieces:
            continue
        first_block = block
        for number, piece in enumerate(pieces):
            after = pieces[number - 1] if number else ""
            if after.endswith(_TERMINAL) and not _LABEL.match(after):
                block += 1
            rows.append(_row(len(rows), "Text", piece, None, block))
        alone = len(pieces) == 1 and gap
        if alone and _title_line(pieces[0]):
            rows[-1]["category"] = "Title"
        gap = False
        if block != first_block:
            block += 1
            gap = True
    return pl.DataFrame(rows, schema=ELEMENT_SCHEMA)


def check_docx(path: Path, limits: ParseLimits) -> None:
    """A DOCX is a ZIP of XML: refuse what is not one, or unzips past the limit (a zip bomb)."""
    from transforms.reading.pdf_text import describe_magic

    try:
        with zipfile.ZipFile(path) as archive:
            entries = archive.infolist()
    except zipfile.BadZipFile as exc:
        head = path.read_bytes()[:1024]
        raise SourceError(
            f"not a DOCX (starts with {describe_magic(head)})", kind="not_docx"
        ) from exc
    if not any(entry.filename == "word/document.xml" for entry in entries):
        raise SourceError("not a DOCX: the ZIP holds no word/document.xml", kind="not_docx")
    unzipped = sum(entry.file_size for entry in entries) / 1e6
    if unzipped > limits.max_unzipped_mb:
        raise SourceError(
            f"DOCX expands past {limits.max_unzipped_mb:g} MB ({unzipped:,.0f} MB unzipped)",
            kind="zip_bomb",
        )


def _partition(source: SourceFile, limits: ParseLimits) -> list:
    offline_nlp.install()
    path = str(source.path)
    if source.format == "docx":
        from unstructured.partition.docx import partition_docx

        check_docx(source.path, limits)
        return partition_docx(path)
    if source.format == "markdown":
        from unstructured.partition.md import partition_md

        return partition_md(text=_literal_list_numbers(read_text(source.path)))
    if source.format == "html":
        from unstructured.partition.html import partition_html

        return partition_html(text=html_text.without_boilerplate(read_text(source.path)))
    raise SourceError(f"unsupported format {source.format}", stage="parse", kind="unsupported")


def document_elements(source: SourceFile, limits: ParseLimits | None = None) -> pl.DataFrame:
    """Raises SourceError with a readable reason when the file cannot be parsed or is empty."""
    limits = limits or ParseLimits()
    if source.path.stat().st_size == 0:
        raise SourceError("empty file (0 bytes)", kind="empty")
    if source.format == "passages":
        frame = passage_elements(source)
    elif source.format == "pdf":
        frame = pdf_elements(source, limits)
    elif source.format == "text":
        frame = text_elements(read_text(source.path))
    elif source.format == "xml":
        from transforms.reading.legal_xml.dialects import legal_xml_elements

        frame = legal_xml_elements(source.path)
    elif source.format == "html" and uscode_html.is_uscode_html(text := read_text(source.path)):
        frame = uscode_html.read_uscode_html(text).frame()
    else:
        try:
            elements = _partition(source, limits)
        except SourceError:
            raise
        except Exception as exc:  # unstructured raises many types for broken files
            raise SourceError(f"{type(exc).__name__}: {exc}") from exc
        if source.format == "html" and _too_little(elements, source):
            # lxml stops reading past its depth limit; a tag-stripping reader does not.
            return text_elements(html_text.plain_text(read_text(source.path)))
        frame = pl.DataFrame(
            [
                {
                    **_row(
                        index, element.category, element.text, element.metadata.page_number, index
                    ),
                    "depth": element.metadata.category_depth,
                }
                for index, element in enumerate(elements)
            ],
            schema=ELEMENT_SCHEMA,
        )
        if source.format == "docx":
            frame = docx_numbering.number_rows(frame, source.path)
    if frame.filter(pl.col("text").str.strip_chars() != "").is_empty():
        raise SourceError(_no_text_reason(source), kind="no_text")
    return frame


def _too_little(elements: list, source: SourceFile) -> bool:
    """True when unstructured kept less than half the words the HTML holds."""
    kept = sum(len((e.text or "").split()) for e in elements)
    held = len(html_text.plain_text(read_text(source.path)).split())
    return kept < 0.5 * held


def _no_text_reason(source: SourceFile) -> str:
    if source.format == "docx":
        return "the DOCX holds no text (only images or empty paragraphs)"
    if source.format in ("html", "markdown", "text"):
        return f"the {source.format.upper() if source.format == 'html' else source.format} file holds no text"
    return "no text could be extracted"
