"""The element frame's columns: what every reader of a source file writes, one row an element.

A room of its own so that each reader (transforms.reading.elements, transforms.reading.legal_xml) imports the
shape it writes, and the parse cache, its worker and the structurers read that one shape.
"""

from __future__ import annotations

import polars as pl

ELEMENT_SCHEMA = {
    "element_index": pl.Int32,
    "category": pl.String,
    "text": pl.String,
    "page": pl.Int32,
    "depth": pl.Int32,
    "document_key": pl.String,
    "ref": pl.String,
    "title": pl.String,
    "block": pl.Int32,
}
