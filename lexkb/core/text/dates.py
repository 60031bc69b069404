"""Days as documents and filters write them: one reading of dates for the catalog's metadata
(the build) and the search filters (the query module), so both accept and refuse alike."""

from __future__ import annotations

from datetime import date, datetime


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
