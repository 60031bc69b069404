"""Numbers an operator sets through the environment: read once at start, refused when wrong.

A setting that is not a positive number stops the server at start with the variable's name and
what it takes, rather than being clamped or ignored while the server runs on a default the
operator did not choose.
"""

from __future__ import annotations

import math
import os


def count(name: str, default: int) -> int:
    """The whole number of at least 1 in `name`, or `default` when it is unset or empty."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{name} must be a whole number of at least 1, not {raw!r}")
    return int(raw)


def seconds(name: str, default: float) -> float:
    """The positive, finite number of seconds in `name`, or `default` when it is unset."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive number of seconds, not {raw!r}")
    return value
