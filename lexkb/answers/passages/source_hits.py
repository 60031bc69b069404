"""The paragraphs a verifier checks against, named by chunk id, reference or hit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lexkb import limits as check
from lexkb.answers.index_view import IndexView
from lexkb.results import GraphHit, Hit


def source_hits(index: IndexView, sources: Sequence[object]) -> tuple[list[Hit], list[str]]:
    """(paragraphs found, what named nothing). A reference counts only when it resolves
    exactly or to the paragraph holding the point it names; never to an enclosing unit."""
    sources = check.items(sources, "source_ids", index.limits.max_list_items)
    found: dict[str, Hit] = {}
    unknown: list[str] = []
    for item in sources:
        if isinstance(item, GraphHit):
            item = item.hit
        if isinstance(item, Hit):
            found.setdefault(item.chunk_id, item)
            continue
        if isinstance(item, Mapping):
            item = item.get("chunk_id") or item.get("ref")
        name = check.text(item, "source id", index.limits.max_reference_chars)
        hits = index.resolve(name)  # a chunk id, or every unit a reference names
        if not hits:
            unknown.append(name)
        for hit in hits:
            found.setdefault(hit.chunk_id, hit)
    return list(found.values()), unknown


def as_hits(items: Sequence[object]) -> list[Hit]:
    """The hits among `items`, graph hits unwrapped: what search and hop return, as given."""
    hits = [item.hit if isinstance(item, GraphHit) else item for item in items]
    return [hit for hit in hits if isinstance(hit, Hit)]
