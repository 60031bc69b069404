"""The Great Expectations suites in a worker process started with the build.

Importing Great Expectations costs about 7 s of one core. `lexkb build` starts this worker as
it starts, beside the parse workers' server: the import then runs on another core while
Dagster starts and the files are parsed, and the build's own process never imports it. That
matters most when little is parsed (a rebuild after one file changed). Without a started worker
(a run from the Dagster UI or daemon) the suites run in-process, as before; a worker that died
is replaced by an in-process run, so a check is never lost to it.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

from transforms.isolation import main_hidden

T = TypeVar("T")
_pool: ProcessPoolExecutor | None = None


def _load() -> None:
    from transforms import table_checks

    table_checks.load_gx()
    # The worker's last act is to leave without unwinding Great Expectations' modules (0.7 s,
    # which the build's own exit waits for). Registered last, this runs first at exit: after
    # the worker has answered the executor's stop signal, and it holds nothing to flush.
    atexit.register(os._exit, 0)


def start() -> None:
    """Start the worker (once per process) and its import of Great Expectations."""
    global _pool
    if _pool is not None:
        return
    _pool = ProcessPoolExecutor(
        max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_load
    )
    with main_hidden():
        _pool.submit(int)  # the executor starts its process on the first task
    atexit.register(_pool.shutdown, wait=False, cancel_futures=True)


def stop() -> None:
    """Stop the worker and wait for it to leave (at once: see `_load`)."""
    global _pool
    if _pool is None:
        return
    _pool.shutdown(wait=True, cancel_futures=True)
    _pool = None


def started() -> bool:
    return _pool is not None


def run(check: Callable[..., T], *args: object) -> T:
    """`check(*args)` in the worker when one was started, else here."""
    global _pool
    if _pool is None:
        return check(*args)
    try:
        return _pool.submit(check, *args).result()
    except BrokenProcessPool:
        _pool = None
        return check(*args)
