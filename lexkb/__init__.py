"""lexkb query module: open a published snapshot and search it, with citations."""

from lexkb.index import Hit, Index, SearchResults
from lexkb.snapshot import SnapshotError

__all__ = ["Hit", "Index", "SearchResults", "SnapshotError"]
