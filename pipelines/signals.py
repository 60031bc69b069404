"""SIGTERM kept across in-process Dagster runs.

Dagster's interrupt capture saves SIGINT's handler when a run starts and, when it ends, gives
that handler to SIGTERM as well. A shell without job control starts background commands with
SIGINT ignored (`lexkb build ... &` in a script), so after one run the build would ignore
SIGTERM: `kill` could no longer stop it, and every process it started afterwards would inherit
the ignore (Dagster's log tails of a multiprocess run then take 60 s each to stop).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def sigterm_kept() -> Iterator[None]:
    """Give SIGTERM back the handler it had on entry."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if before is not None and signal.getsignal(signal.SIGTERM) != before:
            signal.signal(signal.SIGTERM, before)
