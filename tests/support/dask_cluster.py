"""A real local Dask cluster for the build's tests: two worker processes of one thread each,
started as workers must be for lexkb (not daemonic: parsing starts a process per file), with
this process's SIGTERM left at its default so that the workers stop when told."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from pipelines.signals import sigterm_kept


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

    with (
        sigterm_kept(),
        dask.config.set({"distributed.worker.daemon": False}),
    ):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        with (
            LocalCluster(
                n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            Client(cluster) as client,
        ):
            yield Cluster(cluster.scheduler_address, set(client.run(os.getpid).values()))
