"""A provision's lead-in comes with its points: "the factors to be considered shall include—"
answers nothing alone; its four factors do.

Legal texts state lists as a lead-in ending in ":" or a dash, then points that are units of
their own ("§ 107(1)" ... "(4)", "Article 18(1)(a)" ... "(f)"), which an index keeps as
paragraphs of their own so each can be cited. An answer that quotes the lead-in therefore quotes
its points after it, each cited to its own unit, in the document's order.
"""

from __future__ import annotations

import re

from lexkb.answers.index_view import IndexView
from lexkb.results import Hit

# Points quoted after one lead-in at most, and their characters in all.
MAX_POINTS = 12
MAX_POINT_CHARS = 3000
_LEAD_IN = re.compile(r"(?:[:—–]|\s-|\b(?:include|including|following|namely|means))\s*$", re.I)


def is_lead_in(text: str) -> bool:
    """Text that announces a list: it ends with ":", a dash, or "include(s)"/"following"."""
    return bool(_LEAD_IN.search(text.strip()))


def _point_of(ref: str | None, parent: str | None) -> bool:
    """`ref` is a point of `parent`: "§ 107(1)" of "§ 107", "Article 18(1)(a)" of "Article
    18(1)"."""
    if not ref or not parent or not ref.startswith(parent):
        return False
    rest = ref[len(parent) :].lstrip()
    return rest.startswith("(") or rest.startswith(".") and rest[1:2].isalnum()


def points_after(index: IndexView, hit: Hit) -> list[Hit]:
    """The paragraphs after `hit`, in the document's order, that are points of its unit, while
    they last (at most MAX_POINTS, MAX_POINT_CHARS)."""
    points: list[Hit] = []
    used = 0
    at = index.lookup(hit.chunk_id).next
    while at is not None and len(points) < MAX_POINTS and _point_of(at.ref, hit.ref):
        used += len(at.text)
        if used > MAX_POINT_CHARS:
            break
        points.append(at)
        at = index.lookup(at.chunk_id).next
    return points
