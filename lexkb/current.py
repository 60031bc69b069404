"""The index a long-running service serves: the snapshot CURRENT names, followed as it moves.

A service (the MCP server, say) must pick up a newly published snapshot without a restart and
without failing a call in flight. Each call asks `CurrentIndex.get()` once and keeps that Index
for the whole call; `get` compares CURRENT's target with the loaded snapshot (one small file
read) and opens the new one when it changed. A call that started on the old snapshot finishes
on it: the old Index stays in memory until its last user drops it, and its lease keeps it
from being pruned meanwhile. If the new snapshot cannot be opened, the old one goes on serving
and the failure is kept in `last_error`.

`get` blocks while it reads or opens, so a service calls it from a worker thread, never on its
event loop. For an `s3://` root the read is a request to the object store and the open a
download: one call at a time does them, and every other call meanwhile gets the loaded snapshot
at once, so a stalling store holds one worker, not all of them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from lexkb import limits as check
from lexkb.core.store import snapshot as snap
from lexkb.core.store.object_store import POLL_SECONDS, ObjectRoot, is_remote
from lexkb.index import Index


class CurrentIndex:
    """`root` is a local index root or an `s3://` one (lexkb.core.store.object_store), whose
    CURRENT is read at most every POLL_SECONDS."""

    def __init__(self, root: str | Path, limits: check.QueryLimits = check.DEFAULT_LIMITS) -> None:
        self.remote = ObjectRoot(str(root)) if is_remote(root) else None
        self.root = root if self.remote else Path(root)
        self.limits = limits
        self.last_error: str | None = None
        self._lock = threading.Lock()
        self._refreshing = threading.Lock()
        self._polled = time.monotonic()
        self._index = Index.open(self.root, limits=limits)
        self._path = self._index.snapshot.path.resolve()

    def _local_target(self) -> Path:
        return snap.resolve(self.root).resolve()

    def _remote_target(self) -> Path | None:
        """The mirror folder of the version CURRENT names remotely, or None to keep the
        loaded one."""
        assert self.remote is not None
        self._polled = time.monotonic()
        version = self.remote.current_version()
        return None if version is None else self.remote.mirror / snap.SNAPSHOTS / version

    def get(self) -> Index:
        """The Index of the snapshot CURRENT names now."""
        if self.remote is None:
            return self._follow(self._local_target)
        if time.monotonic() - self._polled < POLL_SECONDS:
            return self._index
        if not self._refreshing.acquire(blocking=False):
            return self._index  # another call is asking the object store
        try:
            return self._follow(self._remote_target)
        finally:
            self._refreshing.release()

    def _follow(self, target: Callable[[], Path | None]) -> Index:
        """The loaded Index, after opening the snapshot `target()` names if that changed."""
        try:
            path = target()
        except (snap.SnapshotError, OSError) as exc:
            self.last_error = str(exc)
            return self._index
        if path is None or path == self._path:
            return self._index
        with self._lock:
            if path != self._path:
                try:
                    self._index = Index.open(self.root if self.remote else path, limits=self.limits)
                    self._path = self._index.snapshot.path.resolve()
                    self.last_error = None
                except (snap.SnapshotError, OSError) as exc:
                    self.last_error = f"snapshot {path.name} could not be opened: {exc}"
        return self._index
