"""One document as clean Markdown or as its section tree in JSON: the normalised text a reader
(or another system) can take away, every paragraph with its citable ref and page."""

from __future__ import annotations

import re
from typing import Any

import polars as pl

from lexkb.core.text.citing import POSITIONAL

_MARKDOWN_START = re.compile(r"^(\s*)([#>*+-]|\d+[.)])(?=\s)")


def _escaped(line: str) -> str:
    """A paragraph line that Markdown would read as a heading, quote or list stays text."""
    return _MARKDOWN_START.sub(lambda m: m.group(1) + "\\" + m.group(2), line)


def to_markdown(document: dict[str, Any], paragraphs: pl.DataFrame, version: str) -> str:
    """Headings by level from the heading paths, each paragraph led by its ref in brackets,
    page changes as comments."""
    lines = [f"# {document['title']}", "", f"<!-- lexkb {version}: {document['document_key']} -->"]
    open_path: list[str] = []
    page = None
    for row in paragraphs.iter_rows(named=True):
        path = list(row["section_path"] or [])
        shared = 0
        while shared < min(len(path), len(open_path)) and path[shared] == open_path[shared]:
            shared += 1
        for depth in range(shared, len(path)):
            lines += ["", f"{'#' * min(depth + 2, 6)} {path[depth]}"]
        open_path = path
        if row["page"] is not None and row["page"] != page:
            page = row["page"]
            lines += ["", f"<!-- page {page} -->"]
        lead = f"[{row['ref']}] " if row["ref"] else ""
        parts = row["content"].split("\n")
        # The ref leads the first line, so only a line of its own can read as Markdown syntax.
        first = parts[0] if lead else _escaped(parts[0])
        lines += ["", lead + "  \n".join([first, *(_escaped(p) for p in parts[1:])])]
    return "\n".join(lines) + "\n"


def to_tree(document: dict[str, Any], paragraphs: pl.DataFrame, version: str) -> dict[str, Any]:
    """{document, snapshot_version, sections: [{heading, paragraphs, sections}], paragraphs}:
    the paragraphs outside any section sit at the top level."""
    root: dict[str, Any] = {"paragraphs": [], "sections": []}
    for row in paragraphs.iter_rows(named=True):
        node = root
        for heading in row["section_path"] or []:
            children = node["sections"]
            if not children or children[-1]["heading"] != heading:
                children.append({"heading": heading, "paragraphs": [], "sections": []})
            node = children[-1]
        cited = row.get("cited_ref", row["ref"])
        node["paragraphs"].append(
            {
                "chunk_id": row["chunk_id"],
                "ref": row["ref"],
                # How the tree names the paragraph: its ref as cited; None for one placed only
                # by its position ("p. 1 ¶ 8"), which its words name better.
                "label": None if cited is None or POSITIONAL.match(cited) else cited,
                "page": row["page"],
                "text": row["content"],
                "content_hash": row["content_hash"],
            }
        )
    return {"document": document, "snapshot_version": version, **root}
