"""Source file -> raw elements, the one place that talks to unstructured.

The output is a flat frame, one row per element, that later stages can re-read from Parquet without
unstructured installed. Passage files (JSON/JSONL) skip unstructured: each object is already a
paragraph with its own document key and reference.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl

from transforms import offline_nlp, pdf_boxes
from transforms.sources import SourceFile

ELEMENT_SCHEMA = {
    "element_index": pl.Int32,
    "category": pl.String,
    "text": pl.String,
    "page": pl.Int32,
    "depth": pl.Int32,
    "document_key": pl.String,
    "ref": pl.String,
    "title": pl.String,
}

_PASSAGE_FIELDS = {
    "document_key": ("DocumentID", "document_id", "document_key", "document"),
    "ref": ("PassageID", "passage_id", "ref"),
    "text": ("Passage", "passage", "text", "content"),
    "title": ("title", "Title"),
}


class SourceError(Exception):
    """A source file that cannot be read; the message is the reason shown to the user."""


def _first(obj: dict, names: tuple[str, ...]) -> object:
    for name in names:
        if name in obj and obj[name] is not None:
            return obj[name]
    return None


def _load_passage_objects(path: Path) -> list[dict]:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceError(f"not UTF-8 text: {exc}") from exc
    if path.suffix.lower() == ".jsonl":
        objects = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    objects.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise SourceError(f"line {number} is not JSON: {exc.msg}") from exc
        return objects
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourceError(f"not JSON: {exc.msg} at line {exc.lineno}") from exc
    if isinstance(data, dict) and isinstance(data.get("passages"), list):
        data = data["passages"]
    if not isinstance(data, list):
        raise SourceError("expected a JSON list of passage objects")
    return data


def passage_elements(source: SourceFile) -> pl.DataFrame:
    rows: list[dict] = []
    for index, obj in enumerate(_load_passage_objects(source.path)):
        if not isinstance(obj, dict):
            raise SourceError(f"passage {index} is not an object")
        text = _first(obj, _PASSAGE_FIELDS["text"])
        if text is None:
            raise SourceError(f"passage {index} has no text field (Passage or text)")
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
            }
        )
    return pl.DataFrame(rows, schema=ELEMENT_SCHEMA)


def _literal_list_numbers(markdown: str) -> str:
    """Escape "1." at a line start so Markdown keeps the number as text.

    Rendered as an ordered list, "1. Personal data shall be..." loses its "1.", which is the
    paragraph's citable number.
    """
    return re.sub(r"(?m)^(\s{0,3})(\d{1,3})\.(\s)", r"\1\2\\.\3", markdown)


def _partition(source: SourceFile) -> list:
    offline_nlp.install()
    path = str(source.path)
    if source.format == "pdf":
        from unstructured.partition.pdf import partition_pdf

        pdf_boxes.install()
        return partition_pdf(path, strategy="fast", languages=["eng"])
    if source.format == "docx":
        from unstructured.partition.docx import partition_docx

        return partition_docx(path)
    if source.format == "markdown":
        from unstructured.partition.md import partition_md

        return partition_md(text=_literal_list_numbers(source.path.read_text(encoding="utf-8")))
    if source.format == "html":
        from unstructured.partition.html import partition_html

        return partition_html(path)
    if source.format == "text":
        from unstructured.partition.text import partition_text

        # One element per line: unstructured would otherwise join "§ 101. Short title" with the
        # text under it. The structure builder joins wrapped lines back by sentence.
        lines = source.path.read_text(encoding="utf-8", errors="replace").splitlines()
        return partition_text(text="\n\n".join(line for line in lines if line.strip()))
    raise SourceError(f"unsupported format {source.format}")


def document_elements(source: SourceFile) -> pl.DataFrame:
    """Raises SourceError with a readable reason when the file cannot be parsed or is empty."""
    if source.format == "passages":
        frame = passage_elements(source)
    else:
        try:
            elements = _partition(source)
        except SourceError:
            raise
        except Exception as exc:  # unstructured raises many types for broken files
            raise SourceError(f"{type(exc).__name__}: {exc}") from exc
        frame = pl.DataFrame(
            [
                {
                    "element_index": index,
                    "category": element.category,
                    "text": element.text,
                    "page": element.metadata.page_number,
                    "depth": element.metadata.category_depth,
                    "document_key": None,
                    "ref": None,
                    "title": None,
                }
                for index, element in enumerate(elements)
            ],
            schema=ELEMENT_SCHEMA,
        )
    if frame.filter(pl.col("text").str.strip_chars() != "").is_empty():
        raise SourceError("no text could be extracted (scanned image or empty file?)")
    return frame
