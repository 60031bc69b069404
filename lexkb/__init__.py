"""lexkb query module: open a published snapshot and search it, with citations.

The names below load on first use (PEP 562), so that importing a piece of the ground floor
(`lexkb.core`, which the build imports too) does not load the query module with it.
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lexkb.core.store.snapshot import SnapshotError
    from lexkb.index import Index
    from lexkb.results import GraphHit, Hit, Lookup, SearchResults

try:
    __version__ = version("lexkb")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"

_PUBLIC = {
    "GraphHit": "lexkb.results",
    "Hit": "lexkb.results",
    "Index": "lexkb.index",
    "Lookup": "lexkb.results",
    "SearchResults": "lexkb.results",
    "SnapshotError": "lexkb.core.store.snapshot",
}

__all__ = [
    "GraphHit",
    "Hit",
    "Index",
    "Lookup",
    "SearchResults",
    "SnapshotError",
    "__version__",
]


def __getattr__(name: str) -> object:
    if name not in _PUBLIC:
        raise AttributeError(f"module 'lexkb' has no attribute {name!r}")
    value = getattr(import_module(_PUBLIC[name]), name)
    globals()[name] = value
    return value
