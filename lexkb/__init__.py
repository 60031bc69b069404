"""lexkb query module: open a published snapshot and search it, with citations."""

from importlib.metadata import PackageNotFoundError, version

from lexkb.index import Index
from lexkb.results import GraphHit, Hit, Lookup, SearchResults
from lexkb.snapshot import SnapshotError

try:
    __version__ = version("lexkb")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"

__all__ = ["GraphHit", "Hit", "Index", "Lookup", "SearchResults", "SnapshotError", "__version__"]
