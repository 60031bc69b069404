"""The conventions of /api/v1's listings and times: every listing is a page of at most `limit`
items in one envelope, `{"items": [...], "next_cursor": "..." | null}`, and the next page is
asked for with `cursor=<next_cursor>`; every time is ISO 8601 in UTC.

A cursor is opaque to clients: base64 of the listing's name and where the page ends. Listings kept
in the store go by keyset (the sort time and id of the last row: lexkb_service.serve.store.After),
so rows added meanwhile neither repeat nor skip one; listings computed from a snapshot (its
documents, the snapshots, a diff's parts) go by position, and their cursor also names what was
listed (the snapshot, the two versions), so that a cursor is refused once that has changed rather
than continuing another listing.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Annotated, TypedDict, TypeVar

from fastapi import Query

from lexkb import defaults
from lexkb.limits import QueryError
from lexkb_service.serve.store import After

PAGE = defaults.PAGE
MAX_CURSOR_CHARS = 400
T = TypeVar("T")
# A row of a store listing (lexkb_service.serve.store's TypedDicts): its fields by name.
R = TypeVar("R", bound=Mapping[str, object])
Limit = Annotated[int, Query(ge=1, le=PAGE, description=f"items a page holds (1 to {PAGE})")]
Cursor = Annotated[
    str | None,
    Query(
        max_length=MAX_CURSOR_CHARS,
        description="the `next_cursor` of the page before; none for the first page",
    ),
]


def iso(seconds: float | None) -> str | None:
    """Seconds since the epoch as ISO 8601 in UTC, to the millisecond."""
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")


class Envelope(TypedDict):
    """A page of a listing, as every listing of v1 replies."""

    items: list[object]
    next_cursor: str | None


def with_iso(item: Mapping[str, object], *names: str) -> dict[str, object]:
    """`item` with each of its `names` fields (seconds since the epoch) as ISO 8601."""
    return {**item, **{name: iso(_seconds(item[name])) for name in names if name in item}}


def _seconds(value: object) -> float | None:
    """A time field of a store row: seconds since the epoch, or None where it has none."""
    if value is None or isinstance(value, int | float):
        return value
    raise TypeError(f"a time in seconds since the epoch, not {value!r}")


def envelope(items: Sequence[object], next_cursor: str | None) -> Envelope:
    return {"items": list(items), "next_cursor": next_cursor}


def encode(listing: str, *where: object) -> str:
    text = json.dumps([listing, *where], separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode(cursor: str | None, listing: str) -> list[object] | None:
    """Where the page `cursor` names starts (None for the first page); QueryError (400) for a
    cursor that no page of `listing` gave."""
    if cursor is None:
        return None
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        found = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
    except (ValueError, binascii.Error, UnicodeError):
        found = None
    if not isinstance(found, list) or not found or found[0] != listing:
        raise QueryError(
            f"this cursor was not given by a page of {listing}: pass a page's `next_cursor` "
            "unchanged, or no cursor for the first page"
        )
    return found[1:]


def keyset_page(
    listing: str,
    cursor: str | None,
    limit: int,
    fetch: Callable[[int, After | None], list[R]],
    sort_field: str,
    id_field: str = "id",
) -> tuple[list[R], str | None]:
    """A page of a store listing: `fetch(count, after)` reads rows ordered by `sort_field` (in
    seconds) and then by `id_field`; one row more than asked says whether there is a next."""
    where = decode(cursor, listing)
    after = None
    if where is not None:
        at, last_id = where if len(where) == 2 else (None, None)
        if not isinstance(at, float) or not math.isfinite(at) or not isinstance(last_id, str):
            raise QueryError(f"this cursor was not given by a page of {listing}")
        after = After(at, last_id)
    rows = fetch(limit + 1, after)
    page, more = rows[:limit], len(rows) > limit
    last = page[-1] if page else None
    following = encode(listing, last[sort_field], last[id_field]) if more and last else None
    return page, following


def position_page(
    listing: str, of: str, cursor: str | None, limit: int, items: Sequence[T]
) -> tuple[list[T], str | None]:
    """A page of a listing computed whole (`items`); `of` names what was listed (a snapshot's
    version, two versions), and a cursor given for something else is refused."""
    where = decode(cursor, listing)
    start = 0
    if where is not None:
        if len(where) != 2 or not isinstance(where[0], int) or where[0] < 0:
            raise QueryError(f"this cursor was not given by a page of {listing}")
        if where[1] != of:
            raise QueryError(
                f"this cursor was given for another listing of {listing} (the snapshot served "
                "has changed since): start again without a cursor"
            )
        start = where[0]
    page = list(items[start : start + limit])
    end = start + len(page)
    return page, encode(listing, end, of) if end < len(items) else None
