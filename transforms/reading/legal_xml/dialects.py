"""A legal XML file -> its element frame, read by the module of the dialect its root names."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from lxml import etree

from transforms.reading.legal_xml import akn, clml, formex, uslm
from transforms.reading.legal_xml.read import (
    AKN,
    CLML,
    FORMEX,
    MAX_XML_MB,
    USLM,
    dialect_of,
    local,
    parse,
)
from transforms.reading.quarantine import SourceError

READERS = {USLM: uslm.read, CLML: clml.read, FORMEX: formex.read, AKN: akn.read}


def legal_xml_elements(path: Path, max_mb: float = MAX_XML_MB) -> pl.DataFrame:
    """The element frame (transforms.reading.legal_xml.xml_rows's rows) of a legal XML file; SourceError
    for XML that is unsafe, malformed, of another kind, or holds no unit."""
    root = parse(path, max_mb)
    namespace = etree.QName(root).namespace
    dialect = dialect_of(local(root), namespace)
    if dialect is None:
        where = f" in {namespace}" if namespace else ""
        raise SourceError(
            f"XML of a kind lexkb does not read (root <{local(root)}>{where}); "
            "it reads USLM, CLML, Formex and Akoma Ntoso",
            kind="unsupported_xml",
        )
    frame = READERS[dialect](root).frame()
    if not (frame["category"] == "Unit").any():
        raise SourceError(
            f"the {dialect.upper()} file holds no provision with text", kind="no_text"
        )
    return frame
