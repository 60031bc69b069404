"""Days as documents and filters write them: one reading of dates for the catalog's metadata
(the build) and the search filters (the query module), so both accept and refuse alike, and the
dates a document writes in words ("14 December 2022"), which the build reads from its text."""

from __future__ import annotations

import re
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


_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\.?"
# An ordinal's letters, which a filing's extracted text may split ("the 20t h day of").
_ORDINAL = r"(?:s\s?t|n\s?d|r\s?d|t\s?h)?"
_DATE_PATTERNS = (
    # "September 26, 2002", and with the space a filing's text puts before its comma
    # ("April 15 , 2010").
    re.compile(rf"\b{_MONTH}\s+(\d{{1,2}}){_ORDINAL}\s*,?\s+(\d{{4}})\b", re.IGNORECASE),
    # "14 December 2022", "31st day of July, 2019", "first (1st) day of January, 1996", and a
    # day glued to the word before it ("as of1 August 2019", as extracted text can have it).
    re.compile(
        rf"(?<!\d)(\d{{1,2}}){_ORDINAL}\)?\s+(?:day\s+of\s+)?{_MONTH}\s*,?\s+(\d{{4}})\b",
        re.IGNORECASE,
    ),
)
_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+(\d{{4}})\b", re.IGNORECASE)


def find_date(text: str) -> tuple[date, int] | None:
    """The first calendar date written out in `text` ("14 December 2022", "8th April 2010",
    "September 26, 2002"), and where it starts."""
    best: tuple[date, int] | None = None
    for pattern in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            groups = match.groups()
            if groups[0].isdigit():
                day, month, year = int(groups[0]), groups[1], int(groups[2])
            else:
                month, day, year = groups[0], int(groups[1]), int(groups[2])
            number = _MONTHS.get(month.casefold().rstrip("."))
            if number is None or not 1 <= day <= 31 or not 1900 <= year <= 2100:
                continue
            try:
                found = date(year, number, day)
            except ValueError:
                continue
            if best is None or match.start() < best[1]:
                best = (found, match.start())
            break
    return best


# A date in figures: "3/29/2022", "29.03.2022", "2022-03-29".
_NUMERIC = re.compile(r"\b(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})\b|\b(\d{4})-(\d{2})-(\d{2})\b")


def find_numeric_date(text: str) -> date | None:
    """The first date written in figures that can mean one day only: ISO "2022-03-29", or
    "3/29/2022" and "29/03/2022", where one number is past 12. "07/12/2021" is 7 December in
    most of the world and July 12 in the United States, so it is read as no date at all."""
    for match in _NUMERIC.finditer(text):
        if match.group(4):
            year, month, day = int(match.group(4)), int(match.group(5)), int(match.group(6))
        else:
            first, second, year = int(match.group(1)), int(match.group(2)), int(match.group(3))
            if first == second:
                month = day = first
            elif first > 12 >= second:
                day, month = first, second
            elif second > 12 >= first:
                month, day = first, second
            else:
                continue
        if 1900 <= year <= 2100:
            try:
                return date(year, month, day)
            except ValueError:
                continue
    return None


def find_month(text: str) -> date | None:
    """The first day of the first month written with its year and without a day in `text`
    ("December 2024"): the earliest day such a date can mean. None where `text` has none."""
    for match in _MONTH_YEAR.finditer(text):
        number, year = _MONTHS.get(match.group(1).casefold().rstrip(".")), int(match.group(2))
        if number is not None and 1900 <= year <= 2100:
            return date(year, number, 1)
    return None
