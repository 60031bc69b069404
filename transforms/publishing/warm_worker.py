"""A worker process that pays for a slow library's start-up on the other core, ahead of need.

A build's own process runs its steps one after another on one core. Great Expectations' import
(about 7 s) and dbt's first run in a process (about 3 s more than its later runs: validating its
project against schemas it builds on first use, loading the adapter) are fixed costs that do not
depend on the corpus; paid in a worker started with the build, they overlap Dagster's start-up
and the build's first steps instead of adding to them. That matters most when little changed
(a rebuild after one file did).

Without a started worker (a run from the Dagster UI or daemon) a task runs in the calling
process, as before; a worker that died is replaced by an in-process run, so a task is never lost
to it.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

from transforms.reading.isolation import main_hidden

T = TypeVar("T")


def leave_quickly() -> None:
    """For a worker's initializer to call last: at exit the worker leaves without unwinding its
    heavy modules (0.7 s for Great Expectations, which the build's own exit would wait for).
    Registered last, this runs first at exit: after the worker has answered the executor's stop
    signal, and it holds nothing to flush."""
    atexit.register(os._exit, 0)


class WarmWorker:
    """One spawned process, warmed by `initializer` as it starts."""

    def __init__(self, initializer: Callable[[], None]) -> None:
        self._initializer = initializer
        self._pool: ProcessPoolExecutor | None = None

    def start(self) -> None:
        """Start the process (once) and its warm-up."""
        if self._pool is not None:
            return
        self._pool = ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=self._initializer,
        )
        with main_hidden():
            self._pool.submit(int)  # the executor starts its process on the first task
        atexit.register(self._pool.shutdown, wait=False, cancel_futures=True)

    def stop(self) -> None:
        """Stop the process and wait for it to leave (at once: see `leave_quickly`)."""
        if self._pool is None:
            return
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool = None

    def started(self) -> bool:
        return self._pool is not None

    def submit(self, task: Callable[..., T], *args: object) -> Future[T]:
        """`task(*args)` in the started worker, without waiting for it."""
        if self._pool is None:
            raise RuntimeError("the worker was not started")
        return self._pool.submit(task, *args)

    def run(self, task: Callable[..., T], *args: object) -> T:
        """`task(*args)` in the worker when it was started, else here."""
        if self._pool is None:
            return task(*args)
        try:
            return self._pool.submit(task, *args).result()
        except BrokenProcessPool:
            self._pool = None
            return task(*args)
