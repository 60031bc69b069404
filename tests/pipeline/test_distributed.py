"""One real build on a local Dask cluster (dagster-dask): the steps run in the cluster's worker
processes, not in the test's, and the snapshot they publish opens and answers."""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest
from dagster._core.storage.tags import (
    ASSET_PARTITION_RANGE_END_TAG,
    ASSET_PARTITION_RANGE_START_TAG,
)

from lexkb.index import Index
from pipelines.signals import sigterm_kept
from tests.conftest import CORPUS


@pytest.fixture
def sigterm_default() -> Iterator[None]:
    """The cluster's workers inherit this process's SIGTERM; in-process runs of earlier tests
    leave it ignored when the session runs in the background (pipelines.signals), and workers
    that ignore it wait 60 s a step for Dagster's log tails to stop."""
    with sigterm_kept():
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        yield


def test_the_build_runs_on_a_dask_cluster(tmp_path: Path, sigterm_default: None) -> None:
    import dask
    from distributed import Client, LocalCluster

    from assets.partitions import documents_partitions
    from pipelines.distributed import dask_defs, dask_job

    sources = tmp_path / "sources"
    sources.mkdir()
    for name in ("records-retention-act.txt", "data-handling-regulation.md"):
        shutil.copy(CORPUS / name, sources / name)
    root = tmp_path / "root"
    settings = {"config": {"sources": [str(sources)], "root": str(root)}}
    resources = {"settings": settings, "embedder": {"config": {"provider": "none"}}}
    # Parsing starts a process per file; Dask's default daemonic workers may not have children.
    with (
        dask.config.set({"distributed.worker.daemon": False}),
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
        dg.instance_for_test(temp_dir=str(tmp_path)) as instance,
    ):
        workers = set(client.run(os.getpid).values())
        dask_defs.resolve_job_def("scan_sources").execute_in_process(
            run_config={"resources": resources}, instance=instance
        )
        keys = instance.get_dynamic_partitions(documents_partitions.name)
        assert len(keys) == 2
        result = dg.execute_job(
            dg.reconstructable(dask_job),
            instance=instance,
            run_config={
                "resources": resources,
                "execution": {
                    "config": {"cluster": {"existing": {"address": cluster.scheduler_address}}}
                },
            },
            tags={
                ASSET_PARTITION_RANGE_START_TAG: keys[0],
                ASSET_PARTITION_RANGE_END_TAG: keys[-1],
            },
        )
        assert result.success
        starts = [e for e in result.all_events if e.event_type_value == "STEP_START"]
        assert {e.step_key for e in starts} >= {"document_elements", "published_snapshot"}
        assert {e.pid for e in starts} <= workers and os.getpid() not in workers
    index = Index.open(root)
    assert len(index.documents()) == 2
    assert index.search("retention period for records", k=1).hits


def _parse_nothing(queue) -> None:
    from transforms.isolation import parse_all
    from transforms.limits import ParseLimits

    try:
        parse_all([], ParseLimits())
        queue.put("parsed")
    except RuntimeError as exc:
        queue.put(str(exc))


def test_a_daemonic_worker_is_told_how_to_run() -> None:
    """Dask's default workers are daemonic processes, which cannot start the parse processes:
    the step must fail saying which setting fixes it, not with multiprocessing's assertion."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    worker = context.Process(target=_parse_nothing, args=(queue,), daemon=True)
    worker.start()
    message = queue.get(timeout=120)
    worker.join(timeout=30)
    assert "distributed.worker.daemon" in message
