"""A real local Dask cluster for the build's tests: two worker processes of one thread each,
started as workers must be for lexkb (not daemonic: parsing starts a process per file), with
this process's SIGTERM left at its default so that the workers stop when told."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class Cluster:
    address: str  # the scheduler's
    workers: set[int]  # the worker processes' ids


@contextmanager
def two_workers() -> Iterator[Cluster]:
    """The cluster for the block. Workers inherit this process's SIGTERM: in-process runs of
    earlier tests leave it ignored when the session runs in the background
    (pipelines.signals), and workers that ignore it wait 60 s a step for Dagster's log tails."""
    import dask
    from distributed import Client, LocalCluster

    before = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        with (
            dask.config.set({"distributed.worker.daemon": False}),
            LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            Client(cluster) as client,
        ):
            yield Cluster(cluster.scheduler_address, set(client.run(os.getpid).values()))
    finally:
        if before is not None:  # None: a handler set outside Python, which cannot be restored
            signal.signal(signal.SIGTERM, before)
