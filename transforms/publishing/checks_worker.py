"""The Great Expectations suites in a worker process started with the build.

Importing Great Expectations costs about 7 s of one core. `lexkb build` starts this worker as
it starts, beside the parse workers' server: the import then runs on another core while
Dagster starts and the files are parsed, and the build's own process never imports it
(transforms.publishing.warm_worker). Without a started worker the suites run in-process.
"""

from __future__ import annotations

from transforms.publishing.warm_worker import WarmWorker, leave_quickly


def _load() -> None:
    from transforms.publishing import table_checks

    table_checks.load_gx()
    leave_quickly()


_worker = WarmWorker(_load)
start = _worker.start
stop = _worker.stop
started = _worker.started
run = _worker.run
