"""The index a long-running service serves: the snapshot CURRENT names, followed as it moves.

A service (the MCP server, say) must pick up a newly published snapshot without a restart and
without failing a call in flight. Each call asks `CurrentIndex.get()` once and keeps that Index
for the whole call; `get` compares CURRENT's target with the loaded snapshot (one small file
read) and opens the new one when it changed. A call that started on the old snapshot finishes
on it: the old Index stays in memory until its last user drops it, and its lease keeps it
from being pruned meanwhile. If the new snapshot cannot be opened, the old one goes on serving
and the failure is kept in `last_error`.
"""

from __future__ import annotations

import threading
from pathlib import Path

from lexkb import limits as check
from lexkb import snapshot as snap
from lexkb.index import Index


class CurrentIndex:
    def __init__(self, root: str | Path, limits: check.QueryLimits = check.DEFAULT_LIMITS) -> None:
        self.root = Path(root)
        self.limits = limits
        self.last_error: str | None = None
        self._lock = threading.Lock()
        self._index = Index.open(self.root, limits=limits)
        self._path = self._index.snapshot.path.resolve()

    def get(self) -> Index:
        """The Index of the snapshot CURRENT names now."""
        try:
            path = snap.resolve(self.root).resolve()
        except snap.SnapshotError as exc:
            self.last_error = str(exc)
            return self._index
        if path == self._path:
            return self._index
        with self._lock:
            if path != self._path:
                try:
                    self._index = Index.open(path, limits=self.limits)
                    self._path = path
                    self.last_error = None
                except (snap.SnapshotError, OSError) as exc:
                    self.last_error = f"snapshot {path.name} could not be opened: {exc}"
        return self._index
