"""One writer per index root: an OS lock held from the scan to the publish.

Two builds into one root read each other's work files and delete each other's staging folders.
`hold(root)` takes an exclusive `flock` on ROOT/.lock; a second writer waits up to its timeout,
then fails with who holds the root and since when. The kernel drops the lock when its holder
dies, so a lock left by a killed build is simply taken over: there is no stale lock to clean.
The lock is re-entrant within a process, so the publish step of a build that already holds the
root does not wait for itself.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

LOCK_FILE = ".lock"
_held: dict[str, int] = {}
_guard = threading.Lock()


class RootBusy(Exception):
    """Another writer holds the index root."""


def holder(root: str | Path) -> dict[str, Any] | None:
    """Who last took the root's lock (pid, since, purpose, host), if anyone did."""
    try:
        text = (Path(root) / LOCK_FILE).read_text(encoding="utf-8")
        return json.loads(text) if text.strip() else None
    except (OSError, ValueError):
        return None


@contextmanager
def hold(root: str | Path, wait_seconds: float = 0.0, purpose: str = "build") -> Iterator[None]:
    """Hold ROOT's writer lock for the block; wait up to `wait_seconds` for it."""
    root = Path(root)
    key = str(root.resolve())
    with _guard:
        if _held.get(key):
            _held[key] += 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield
        finally:
            with _guard:
                _held[key] -= 1
        return
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + max(0.0, wait_seconds)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise RootBusy(_busy_message(root, wait_seconds)) from None
                time.sleep(0.1)
        info = {
            "pid": os.getpid(),
            "since": datetime.now(UTC).isoformat(timespec="seconds"),
            "purpose": purpose,
            "host": socket.gethostname(),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode("utf-8"), 0)
        with _guard:
            _held[key] = 1
        try:
            yield
        finally:
            with _guard:
                _held.pop(key, None)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _busy_message(root: Path, waited: float) -> str:
    info = holder(root) or {}
    who = (
        f" since {info.get('since', '?')}, pid {info.get('pid', '?')} ({info.get('purpose', '?')})"
        if info
        else ""
    )
    return f"another build holds {root}{who}; waited {waited:g} s"
