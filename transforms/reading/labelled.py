"""Units that arrive with their labels: passage files, and text whose lines start "label<TAB>".

Word exports of rulebooks put each paragraph's list number in front of its text with a tab
("1.1.1.(1)<TAB>Subject to (2), these Rules apply..."; "Part 1.Chapter 1.1.(1)<TAB>The
Regulator has..."). That label is the document's own citation, so it is taken as written, not
re-derived from numbering patterns. Both paths meet here: a list of (ref, text) in reading order.

A labelled unit is a heading when it is short and title-like and later labels extend it
("1.1 Application" before "1.1.1"); the heading stays a chunk of its own too, because passage
files cite headings as passages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import polars as pl

from transforms.reading.source_files import SourceFile
from transforms.structure.chunks import Paragraph, chunk_rows
from transforms.structure.ids import document_id, section_id
from transforms.structure.tree import Section, document_row, is_title_like, section_row, tables

_TAB_LABEL = re.compile(r"^\s*([^\t]{1,48}?)\s*\t+\s*(.*)$")
# Inside a tab-labelled document some lines lost their tab: "PART 2.3.1.1.(1) A Fund is...",
# "PART 1.INTRODUCTION". Only compound numbers count there, never a bare "12".
_SPACE_LABEL = re.compile(
    r"^\s*((?:(?:PART|Part|CHAPTER|Chapter|SCHEDULE|Schedule)\s+)?\d+[A-Z]?"
    r"(?:\.(?:\d+[A-Z]?|\([a-z0-9]{1,4}\)|Guidance))+\.?"
    r"|(?:PART|Part|CHAPTER|Chapter)\s+\d+)(?=[\s.]|$)\.?\s*(.*)$"
)
_POINT_LABEL = re.compile(r"^(?:\(?[a-z]{1,4}\)|\([ivxlc]+\)|\(\d{1,3}\))$")
_NUMBERING = re.compile(r"\d|^[A-Z]\.?$|^[A-Z]\.\d")
OUTLINE_SHARE = 0.15
OUTLINE_MIN = 5
# A label is a number ("1.1.1.(1)", "8.3.2.Guidance on CDD.1.", "(a)", "12") or a division's
# name with its number ("Part 2", "SECTION III.B.1.", "APP 3"). A table's first cell before its
# tab is none ("60 minutes", "Tier 1 Capital", "ADT <= 100,000", "100%"): that row is text of the
# unit around it.
_LABEL_TOKEN = re.compile(r"^[\w().:\-–\u200e]+$")
_DIVISION_WORDS = frozenset(
    {"part", "chapter", "schedule", "section", "rule", "app", "appendix", "annex", "article",
     "guidance", "regulation", "paragraph", "form"}
)  # fmt: skip


def _label(line: str, outline: bool = True) -> tuple[str, str] | None:
    match = _TAB_LABEL.match(line)
    if match is None:
        if outline and (spaced := _SPACE_LABEL.match(line)):
            return spaced.group(1).strip(), spaced.group(2).strip()
        return None
    label = match.group(1).strip()
    if len(label.split()) > 4 or not _NUMBERING.search(label) and not _POINT_LABEL.match(label):
        return None
    if not _numbering(label.split()):
        return None
    return label, match.group(2).strip()


def _numbering(words: list[str]) -> bool:
    """Whether a tab's left side reads as a label: its first word a division's name, a dotted or
    bracketed number (words may follow either), or a number alone."""
    first = words[0]
    if not _LABEL_TOKEN.match(first):
        return False
    if first.casefold() in _DIVISION_WORDS or any(mark in first for mark in ".("):
        return True
    return len(words) == 1 and (not first.isalpha() or len(first) == 1)


def outline_units(texts: Sequence[str]) -> tuple[str | None, list[tuple[str | None, str]]] | None:
    """(title, [(ref, text)]) when most lines carry tab labels, else None."""
    lines = [line for text in texts for line in text.split("\n") if line.strip()]
    tabbed = [_label(line, outline=False) for line in lines]
    numbered = sum(1 for item in tabbed if item and not _POINT_LABEL.match(item[0]))
    if numbered < OUTLINE_MIN or numbered < OUTLINE_SHARE * len(lines):
        return None
    labelled = [_label(line) for line in lines]
    title = None
    units: list[tuple[str | None, list[str]]] = []
    for line, item in zip(lines, labelled, strict=True):
        if item is not None and not _POINT_LABEL.match(item[0]):
            units.append((item[0], [item[1]] if item[1] else []))
        elif not units and title is None and is_title_like(line.strip()):
            title = line.strip()
        else:
            text = f"{item[0]} {item[1]}" if item is not None else line.strip()
            if not units:
                units.append((None, []))
            units[-1][1].append(text)
    return title, [(ref, "\n".join(parts)) for ref, parts in units]


def _is_ancestor(label: str, ref: str) -> bool:
    return ref != label and ref.startswith(label.rstrip(".") + ".")


def _paragraphs(
    doc_id: str, labelled: list[tuple[str | None, str]]
) -> tuple[list[Section], list[Paragraph]]:
    """Labels keep their own spelling as refs ("1.", "Part 1.Chapter 1.1."); the hierarchy
    compares them without the trailing dot."""
    refs = [ref.rstrip(".") if ref else None for ref, _ in labelled]
    sections: list[Section] = []
    paragraphs: list[Paragraph] = []
    stack: list[tuple[str, Section]] = []
    for index, ((written, text), ref) in enumerate(zip(labelled, refs, strict=True)):
        content = text.strip()
        if ref:
            while stack and not _is_ancestor(stack[-1][0], ref):
                stack.pop()
        extended = bool(
            ref
            and any(later and _is_ancestor(ref, later) for later in refs[index + 1 : index + 40])
        )
        if ref and extended and (not content or (is_title_like(content) and len(content) < 100)):
            parent = stack[-1][1] if stack else None
            heading = f"{ref} {content}".strip()
            path = [*(parent.path if parent else []), heading]
            section = Section(
                section_id(doc_id, len(sections)),
                parent,
                ref,
                content,
                float(len(path)),
                len(path),
                len(sections),
                path,
                ref,
                None,
                None,
            )
            sections.append(section)
            stack.append((ref, section))
        if content:
            owner = stack[-1][1] if stack else None
            paragraphs.append(Paragraph(written or None, owner, None, content))
    return sections, paragraphs


def structure_labelled(
    source: SourceFile,
    document_key: str,
    labelled: list[tuple[str | None, str]],
    title: str | None,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    doc_id = document_id(source.key, document_key)
    sections, paragraphs = _paragraphs(doc_id, labelled)
    chunks = chunk_rows(doc_id, document_key, paragraphs)
    documents = [
        document_row(
            doc_id, document_key, title or document_key, source, None, len(sections), chunks
        )
    ]
    return tables(documents, [section_row(s, doc_id) for s in sections], chunks)


def structure_passages(
    source: SourceFile, elements: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Pre-chunked passages, one paragraph chunk each; a file may hold several documents."""
    frame = elements.with_columns(pl.col("document_key").fill_null(source.document_key))
    parts = []
    for document_key in frame["document_key"].unique(maintain_order=True).to_list():
        rows = frame.filter(pl.col("document_key") == document_key)
        titles = [t for t in rows["title"].to_list() if t]
        labelled = list(zip(rows["ref"].to_list(), rows["text"].to_list(), strict=True))
        parts.append(
            structure_labelled(source, document_key, labelled, titles[0] if titles else None)
        )
    return (
        pl.concat([p[0] for p in parts]),
        pl.concat([p[1] for p in parts]),
        pl.concat([p[2] for p in parts]),
    )
