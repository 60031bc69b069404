"""Search filters on document metadata: which documents a query may return.

Filters combine with AND. Each value may be one item or a list (any of them), except `tags`,
where a list means the document carries every tag listed. Dates compare a document's effective
date, or its publication date when it has no effective date; a document with neither is left out
by any date filter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date, datetime, timedelta

import polars as pl

DOCUMENT_FILTERS = (
    "document",
    "document_type",
    "authority_level",
    "tags",
    "author",
    "source",
    "start",
    "end",
    "period",
    "deprecated",
)
CHUNK_FILTERS = ("section", "chunk_level")
FILTER_KEYS = DOCUMENT_FILTERS + CHUNK_FILTERS
# Relative periods, as (days back to the start, days back to the end), both ends included.
PERIODS = {
    "today": (0, 0),
    "yesterday": (1, 1),
    "last_7_days": (6, 0),
    "last_30_days": (29, 0),
    "last_90_days": (89, 0),
    "last_365_days": (364, 0),
}


def _values(value: object) -> list[str]:
    return [value] if isinstance(value, str) else [str(v) for v in value]  # type: ignore[union-attr]


def as_date(value: object, what: str) -> date:
    """A day from a date, a datetime or ISO text ("2024-05-01"); `what` names it in the error.
    Shared by search filters and catalog metadata so both read dates alike."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError as exc:
        raise ValueError(f"{what} needs a date such as 2024-05-01, not {value!r}") from exc


def date_range(filters: Mapping[str, object], today: date) -> tuple[date | None, date | None]:
    """The window `start`, `end` and `period` leave open (the narrowest of them)."""
    start = (
        as_date(filters["start"], "filter 'start'") if filters.get("start") is not None else None
    )
    end = as_date(filters["end"], "filter 'end'") if filters.get("end") is not None else None
    if (period := filters.get("period")) is not None:
        if period not in PERIODS:
            raise ValueError(f"unknown period {period!r}; known: {', '.join(PERIODS)}")
        back_start, back_end = PERIODS[str(period)]
        start = max(filter(None, [start, today - timedelta(days=back_start)]))
        end = min(filter(None, [end, today - timedelta(days=back_end)]))
    return start, end


def document_ids(
    documents: pl.DataFrame,
    filters: Mapping[str, object],
    resolve_document: Callable[[str], str],
    today: date,
) -> list[str]:
    """Ids of the documents that pass every document-level filter."""
    expr = pl.lit(True)
    if (names := filters.get("document")) is not None:
        expr &= pl.col("document_id").is_in([resolve_document(n) for n in _values(names)])
    for column in ("document_type", "authority_level", "author"):
        if (wanted := filters.get(column)) is not None:
            expr &= pl.col(column).str.to_lowercase().is_in([v.casefold() for v in _values(wanted)])
    if (tags := filters.get("tags")) is not None:
        for tag in _values(tags):
            expr &= (
                pl.col("tags")
                .list.eval(pl.element().str.to_lowercase())
                .list.contains(tag.casefold())
            )
    if (source := filters.get("source")) is not None:
        prefixes = [s.casefold() for s in _values(source)]
        expr &= pl.any_horizontal(
            [
                pl.col(column).str.to_lowercase().str.starts_with(prefix).fill_null(False)
                for column in ("source_url", "source_name")
                for prefix in prefixes
            ]
        )
    if filters.get("deprecated") is not None:
        expr &= pl.col("deprecated") == bool(filters["deprecated"])
    start, end = date_range(filters, today)
    when = pl.coalesce("effective", "published")
    if start is not None:
        expr &= (when >= start).fill_null(False)
    if end is not None:
        expr &= (when <= end).fill_null(False)
    return documents.filter(expr)["document_id"].to_list()
