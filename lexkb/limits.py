"""Bounds and checks on every argument a caller hands the query module.

A service passes user text straight through, so nothing here may be trusted: a 10 MB query, a
2,900-character reference, `decay=NaN` or `k=2.5` must each come back as a clear error, never a
minute of CPU, an endless walk or a traceback. Each bound is a setting (`QueryLimits`), and none
is a silent clamp: a value past a bound is refused with the bound in the message.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class QueryError(ValueError):
    """An argument the query module refuses; the message says what is allowed."""


@dataclass(frozen=True)
class QueryLimits:
    max_query_chars: int = 2000
    max_reference_chars: int = 300
    max_k: int = 1000
    max_hops: int = 10
    max_list_items: int = 200
    max_tokens: int = 200_000


DEFAULT_LIMITS = QueryLimits()


def text(value: object, name: str, max_chars: int, allow_empty: bool = False) -> str:
    """`value` as text a tokenizer can read: a str, within `max_chars`, valid Unicode."""
    if not isinstance(value, str):
        raise QueryError(f"{name} must be text, not {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise QueryError(f"{name} is empty")
    if len(value) > max_chars:
        raise QueryError(f"{name} has {len(value):,} characters; the limit is {max_chars:,}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise QueryError(
            f"{name} is not valid Unicode text (a lone surrogate at position {exc.start}); "
            "send it as UTF-8"
        ) from exc
    if "\x00" in value:
        raise QueryError(f"{name} holds a NUL character")
    return value


def count(value: object, name: str, low: int, high: int) -> int:
    """A whole number in [low, high]; bools and floats such as 2.5 or NaN are refused."""
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise QueryError(f"{name} must be a whole number from {low} to {high}, not {value!r}")
    if not low <= value <= high:
        raise QueryError(f"{name} must be from {low} to {high}, not {value}")
    return value


def fraction(
    value: object, name: str, low: float = 0.0, high: float = 1.0, low_open: bool = True
) -> float:
    """A finite number in (low, high] (or [low, high] when not `low_open`)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise QueryError(f"{name} must be a number, not {value!r}")
    value = float(value)
    below = value <= low if low_open else value < low
    if math.isnan(value) or math.isinf(value) or below or value > high:
        bracket = "(" if low_open else "["
        raise QueryError(f"{name} must be in {bracket}{low:g}, {high:g}], not {value!r}")
    return value


def objects(value: object, name: str, max_items: int, fields: str) -> list[Mapping[str, Any]]:
    """A non-empty list of at most `max_items` objects (mappings); `fields` names what each
    holds, for the error."""
    values = items(value, name, max_items)
    if not values:
        raise QueryError(f"{name} is empty")
    found: list[Mapping[str, Any]] = []
    for position, item in enumerate(values):
        if not isinstance(item, Mapping):
            raise QueryError(f"{name}[{position}] must be an object with {fields}")
        found.append(item)
    return found


def items(value: object, name: str, max_items: int) -> list[Any]:
    """One value or a list of them, at most `max_items`."""
    values = value if isinstance(value, list | tuple | set | frozenset) else [value]
    if len(values) > max_items:
        raise QueryError(f"{name} lists {len(values)} values; the limit is {max_items}")
    return list(values)
