"""One real build on a local Dask cluster (dagster-dask): the steps run in the cluster's worker
processes, not in the test's, and the snapshot they publish opens and answers."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import dagster as dg
import pytest

from lexkb.index import Index
from tests.conftest import CORPUS
from tests.support.dask_cluster import two_workers

pytestmark = pytest.mark.build


def test_the_build_runs_on_a_dask_cluster(tmp_path: Path) -> None:
    from assets.partitions import documents_partitions
    from pipelines.distributed import dask_job, run_on_dask

    sources = tmp_path / "sources"
    sources.mkdir()
    for name in ("records-retention-act.txt", "data-handling-regulation.md"):
        shutil.copy(CORPUS / name, sources / name)
    root = tmp_path / "root"
    settings = {"config": {"sources": [str(sources)], "root": str(root)}}
    resources = {"settings": settings, "embedder": {"config": {"provider": "none"}}}
    # Parsing starts a process per file; Dask's default daemonic workers may not have children.
    with two_workers() as cluster, dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        workers = cluster.workers
        result = run_on_dask(dask_job, cluster.address, resources, instance)
        assert len(instance.get_dynamic_partitions(documents_partitions.name)) == 2
        assert result.success
        starts = [e for e in result.all_events if e.event_type_value == "STEP_START"]
        assert {e.step_key for e in starts} >= {"document_elements", "published_snapshot"}
        assert {e.pid for e in starts} <= workers and os.getpid() not in workers
    index = Index.open(root)
    assert len(index.documents()) == 2
    assert index.search("retention period for records", k=1).hits


def _parse_nothing(queue) -> None:
    from transforms.reading.file_limits import ParseLimits
    from transforms.reading.isolation import parse_all

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
