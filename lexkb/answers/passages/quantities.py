"""Numbers, amounts, periods, percentages and dates found in text, each with a canonical value.

Legal text writes one quantity many ways: "30 days", "thirty (30) days", "a 30-day period";
"USD 5,000", "$5000", "5,000 US dollars"; "1 January 2024", "January 1, 2024", "2024-01-01".
A verifier that compares strings calls these different and calls "30 days" present in "130
days". Here each mention becomes a `Quantity` whose `key` is equal exactly when two mentions
mean the same value, with the character span it came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from typing import Literal, get_args

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19,
}  # fmt: skip
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}  # fmt: skip
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_WORD = "|".join(sorted([*_UNITS, *_TENS], key=len, reverse=True))
_NUMBER_WORDS = (
    rf"(?:(?:{_WORD})(?:[\s-]+(?:{_WORD}|hundred|thousand|and))*)"  # "one hundred and twenty"
)
_DIGITS = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
# A number as written: digits, words, or words with the digits in brackets ("thirty (30)").
_NUMBER = rf"(?:(?:{_NUMBER_WORDS})\s*\(\s*(?P<paren>{_DIGITS})\s*\)|{_DIGITS}|{_NUMBER_WORDS})"
_SCALE = r"(?:\s*(?P<scale>million|billion|thousand|mn|bn|m|k)\b)?"

_CURRENCIES = {
    "usd": "USD", "us$": "USD", "$": "USD", "dollar": "USD", "dollars": "USD",
    "us dollars": "USD", "u.s. dollars": "USD", "aed": "AED", "dirham": "AED", "dirhams": "AED",
    "eur": "EUR", "€": "EUR", "euro": "EUR", "euros": "EUR", "gbp": "GBP", "£": "GBP",
    "pound": "GBP", "pounds": "GBP", "pounds sterling": "GBP", "chf": "CHF", "jpy": "JPY",
    "¥": "JPY", "sgd": "SGD", "inr": "INR", "₹": "INR", "cad": "CAD", "aud": "AUD",
}  # fmt: skip
_PREFIX_CURRENCY = r"(?P<cur1>US\$|USD|AED|EUR|GBP|CHF|JPY|SGD|INR|CAD|AUD|\$|€|£|¥|₹)"
_SUFFIX_CURRENCY = (
    r"(?P<cur2>USD|AED|EUR|GBP|CHF|JPY|SGD|INR|CAD|AUD|U\.?S\.? dollars|US dollars|dollars?"
    r"|dirhams?|euros?|pounds sterling|pounds?)"
)
_PERIOD_UNITS = {
    "minute": "minute", "hour": "hour", "day": "day", "week": "week", "month": "month",
    "year": "year", "business day": "business day", "working day": "business day",
    "calendar day": "day", "calendar month": "month", "calendar year": "year",
}  # fmt: skip
_PERIOD = (
    rf"(?P<number>{_NUMBER})\s*-?\s*(?P<kind>business|working|calendar)?\s*-?\s*"
    r"(?P<unit>minute|hour|day|week|month|year)s?\b"
)
_MONTHS = {
    m: i
    for i, names in enumerate(
        [
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for m in names
}  # fmt: skip
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DATES = [
    re.compile(rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?(?:\s+day\s+of)?\s+{_MONTH},?\s+(?P<year>\d{{4}})\b", re.I),
    re.compile(rf"\b{_MONTH}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<year>\d{{4}})\b", re.I),
    re.compile(r"\b(?P<year>\d{4})-(?P<mnum>\d{1,2})-(?P<day>\d{1,2})\b"),
    re.compile(r"\b(?P<day>\d{1,2})/(?P<mnum>\d{1,2})/(?P<year>\d{4})\b"),
]  # fmt: skip
_AMOUNTS = [
    re.compile(rf"{_PREFIX_CURRENCY}\s?(?P<number>{_DIGITS}){_SCALE}", re.I),
    re.compile(rf"(?<![\w.])(?P<number>{_NUMBER}){_SCALE}\s+{_SUFFIX_CURRENCY}\b", re.I),
]
_PERCENT = re.compile(
    rf"(?<![\w.])(?P<number>{_NUMBER})\s*(?:%|per\s*cent\b|percent\b|percentage points?\b)", re.I
)
_PERIOD_RE = re.compile(rf"(?<![\w.]){_PERIOD}", re.I)
_PLAIN = re.compile(rf"(?<![\w.,/-])(?P<number>{_DIGITS})(?![\w,/-]|\.\d)")
_SCALE_VALUES = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "mn": 1e6, "billion": 1e9}
_SCALE_VALUES["bn"] = 1e9


QuantityKind = Literal["amount", "period", "percent", "date", "number"]
QUANTITY_KINDS: frozenset[str] = frozenset(get_args(QuantityKind))


@dataclass(frozen=True)
class Quantity:
    kind: QuantityKind
    key: str  # equal keys, equal values ("period:30 day", "amount:USD 5000")
    start: int
    end: int
    text: str


def number_value(text: str) -> float | None:
    """The value of "5,000", "1.5", "thirty", "one hundred and twenty", "thirty (30)"."""
    text = text.strip().casefold()
    if paren := re.search(r"\(\s*([\d.,]+)\s*\)", text):
        return number_value(paren.group(1))
    if re.fullmatch(_DIGITS, text):
        return float(text.replace(",", ""))
    total, current = 0, 0
    words = [w for w in re.split(r"[\s-]+", text) if w and w != "and"]
    if not words:
        return None
    for word in words:
        if word in _UNITS:
            current += _UNITS[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in _SCALES:
            total += max(current, 1) * _SCALES[word]
            current = 0
        else:
            return None
    return float(total + current)


def _fmt(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


@lru_cache(maxsize=4096)
def find_quantities(text: str) -> tuple[Quantity, ...]:
    """Every quantity in `text`, longest reading first: a span that is part of an amount, a
    period, a percentage or a date is not also reported as a bare number. Cached: a verifier
    reads the same paragraphs for claim after claim."""
    found: list[Quantity] = []
    taken = [False] * (len(text) + 1)

    def add(kind: QuantityKind, key: str, match: re.Match[str]) -> None:
        start, end = match.span()
        if any(taken[start:end]):
            return
        for i in range(start, end):
            taken[i] = True
        found.append(Quantity(kind, key, start, end, match.group(0)))

    for pattern in _DATES:
        for m in pattern.finditer(text):
            name = m.groupdict().get("month")
            month = _MONTHS[name.casefold()] if name else int(m.group("mnum"))
            try:
                day = date(int(m.group("year")), month, int(m.group("day")))
            except ValueError:
                continue
            add("date", f"date:{day.isoformat()}", m)
    for pattern in _AMOUNTS:
        for m in pattern.finditer(text):
            value = number_value(m.group("number"))
            if value is None:
                continue
            scale = (m.group("scale") or "").casefold()
            value *= _SCALE_VALUES.get(scale, 1.0)
            currency = m.groupdict().get("cur1") or m.groupdict().get("cur2") or ""
            code = _CURRENCIES.get(re.sub(r"\s+", " ", currency.casefold()).replace("u.s.", "us"))
            add("amount", f"amount:{code or currency.upper()} {_fmt(value)}", m)
    for m in _PERCENT.finditer(text):
        if (value := number_value(m.group("number"))) is not None:
            add("percent", f"percent:{_fmt(value)}", m)
    for m in _PERIOD_RE.finditer(text):
        value = number_value(m.group("number"))
        if value is None:
            continue
        unit = m.group("unit").casefold()
        kind = (m.group("kind") or "").casefold()
        unit = _PERIOD_UNITS.get(f"{kind} {unit}".strip(), unit)
        add("period", f"period:{_fmt(value)} {unit}", m)
    for m in _PLAIN.finditer(text):
        value = number_value(m.group("number"))
        if value is not None:
            add("number", f"number:{_fmt(value)}", m)
    return tuple(sorted(found, key=lambda q: q.start))


# Words around a quantity that do not change what it states ("a 30-day period").
_FILLER = {"a", "an", "the", "of", "period", "term", "sum", "amount", "within", "date"}


def as_quantity(entity: str) -> Quantity | None:
    """The one quantity an entity string states ("thirty (30) days", "a 30-day period"), or
    None when it states none or several, or holds other words too ("Article 30")."""
    found = find_quantities(entity)
    if len(found) != 1:
        return None
    rest = entity[: found[0].start] + " " + entity[found[0].end :]
    words = re.findall(r"\w+", rest.casefold())
    return found[0] if all(w in _FILLER for w in words) else None
