"""Reading a legal XML file safely, and telling which dialect it is.

XML can carry attacks that a PDF cannot: entities that expand a kilobyte into gigabytes
("billion laughs"), and external entities that read a local file or a URL into the text. No
legal publisher's XML needs either, so a file that declares entities is refused outright, and the
parser never resolves an entity, never loads a DTD and never touches the network. Size is bounded
before parsing, and lxml's own limits (no `huge_tree`) bound depth and text node length.
"""

from __future__ import annotations

import re
from pathlib import Path

from lxml import etree

from transforms.reading.quarantine import SourceError

# The largest US Code titles in USLM are about 100 MB; as the scan's limit on any file, it also
# bounds a file parsed without the scan.
MAX_XML_MB = 200
# How much of a file's head the scan reads to find its root element.
SNIFF_BYTES = 65536

USLM = "uslm"
CLML = "clml"
FORMEX = "formex"
AKN = "akn"

_NAMESPACES = {
    "http://xml.house.gov/schemas/uslm/1.0": USLM,
    "http://schemas.gpo.gov/xml/uslm": USLM,
    "http://www.legislation.gov.uk/namespaces/legislation": CLML,
    "http://docs.oasis-open.org/legaldocml/ns/akn/3.0": AKN,
}
# Formex has no namespace; its acts open with one of these roots.
_FORMEX_ROOTS = {"ACT", "CONS.ACT"}
_PROLOG = re.compile(
    rb"<\?.*?\?>|<!--.*?-->|<!DOCTYPE(?:[^\[>]*\[.*?\])?[^>]*>|\s+", re.DOTALL | re.IGNORECASE
)
_ROOT = re.compile(rb"<([A-Za-z_][\w.\-]*:)?([A-Za-z_][\w.\-]*)([^>]*)>")
_XMLNS = re.compile(rb"""xmlns(:[\w.\-]+)?\s*=\s*["']([^"']*)["']""")


def dialect_of(root: str, namespace: str | None) -> str | None:
    """The dialect of a document whose root element is `root` in `namespace`, or None."""
    if namespace in _NAMESPACES:
        return _NAMESPACES[namespace]
    if namespace is None and root in _FORMEX_ROOTS:
        return FORMEX
    return None


def sniff(path: Path) -> tuple[str | None, str]:
    """(dialect or None, the root element as found) from the file's head, without parsing it:
    the scan lists XML of other kinds (a configuration file, a sitemap) as unsupported instead
    of quarantining it."""
    with path.open("rb") as handle:
        head = handle.read(SNIFF_BYTES)
    position = 0
    while match := _PROLOG.match(head, position):
        if match.end() == position:
            break
        position = match.end()
    root = _ROOT.match(head, position)
    if root is None:
        return None, "(none)"
    prefix = (root.group(1) or b"").rstrip(b":")
    name = root.group(2).decode("ascii", "replace")
    namespaces = {
        (m.group(1) or b":").lstrip(b":"): m.group(2).decode("utf-8", "replace")
        for m in _XMLNS.finditer(root.group(3))
    }
    return dialect_of(name, namespaces.get(prefix)), name


def local(element: etree._Element) -> str:
    """An element's name without its namespace ("" for comments and processing instructions)."""
    return etree.QName(element).localname if isinstance(element.tag, str) else ""


def parse(path: Path, max_mb: float = MAX_XML_MB) -> etree._Element:
    """The root of a legal XML file; SourceError when it is too large, malformed, or declares
    entities."""
    size = path.stat().st_size
    if size > max_mb * 1_000_000:
        raise SourceError(
            f"XML file is {size / 1e6:.0f} MB, over the limit of {max_mb:g} MB", kind="too_large"
        )
    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        huge_tree=False,
        load_dtd=False,
        dtd_validation=False,
        remove_comments=True,
    )
    try:
        tree = etree.parse(str(path), parser)
    except etree.XMLSyntaxError as exc:
        reason = " ".join(str(exc).split())[:300]
        raise SourceError(f"malformed XML: {reason}", kind="invalid_xml") from exc
    dtd = tree.docinfo.internalDTD
    declared = [entity.name for entity in dtd.iterentities()] if dtd is not None else []
    if declared or any(isinstance(node, etree._Entity) for node in tree.iter()):
        names = ", ".join(declared[:5]) or "undeclared references"
        raise SourceError(
            f"XML declares or uses entities ({names}): refused, since expanding them can exhaust "
            "memory or read other files, and no legal publisher's XML needs them",
            kind="xml_entities",
        )
    return tree.getroot()
