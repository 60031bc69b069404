"""One partitioned build on a local Dask cluster of separate worker processes, with the peak
memory of every step and part: what `benchmarks.growth --parts` runs at each size.

The cluster is Dask's LocalCluster: `--workers` processes of one thread each, each under a
Dask memory limit (`--worker-memory`: Dask pauses a worker at 80% of it and restarts it at 95%),
the scheduler in this process. The Dagster run goes through dagster-dask's executor on that
cluster (`build_index_in_parts_on_dask`), so every step, and every part the `index_parts` step
fans out, runs in a worker process. Each step and part samples its own process's resident
memory while it runs (transforms.parts.memory), which is what a worker's memory limit sees.

    .venv/bin/python -m benchmarks.partitioned_build SOURCES ROOT --parts 20000 --workers 2
"""

from __future__ import annotations

import argparse
import json
import resource
import signal
import sys
import tempfile
import time
from pathlib import Path

PEAK_KEYS = {
    "part_plan": "peak_mb",
    "merged_parts": "peak_mb",
    "published_parts": "peak_mb",
}


def build(sources: Path, root: Path, parts: int, workers: int, memory: str) -> dict:
    """Build `sources` into `root` in parts of at most `parts` chunks on a fresh local cluster;
    the figures of the run."""
    import dagster as dg
    import dask
    from distributed import Client, LocalCluster

    from pipelines.distributed import dask_parts_job, run_on_dask

    # Workers inherit this process's SIGTERM; an ignored one stalls their shutdown.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    resources = {
        "settings": {"config": {"sources": [str(sources)], "root": str(root), "part_chunks": parts}}
    }
    started = time.perf_counter()
    with (
        tempfile.TemporaryDirectory() as home,
        dask.config.set({"distributed.worker.daemon": False}),
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            memory_limit=memory,
            dashboard_address=None,
        ) as cluster,
        Client(cluster),
        dg.instance_for_test(temp_dir=home) as instance,
    ):
        result = run_on_dask(dask_parts_job, cluster.scheduler_address, resources, instance)
        if not result.success:
            failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
            raise RuntimeError(f"{failure.step_key}: {failure.event_specific_data.error.message}")
        metadata = {
            event.asset_key.path[-1]: {
                k: v.value
                for k, v in event.step_materialization_data.materialization.metadata.items()
            }
            for event in result.all_events
            if event.event_type_value == "ASSET_MATERIALIZATION"
        }
        steps = {
            e.step_key: round(e.event_specific_data.duration_ms / 1000, 1)
            for e in result.all_events
            if e.event_type_value == "STEP_SUCCESS"
        }
    parts_meta = metadata["index_parts"]
    return {
        "build_s": round(time.perf_counter() - started, 1),
        "parts": parts_meta["parts"],
        "part_peak_mb": parts_meta["max_part_peak_mb"],
        "part_peaks_mb": parts_meta["part_peak_mb"],
        "plan_peak_mb": metadata["part_plan"]["peak_mb"],
        "merge_peak_mb": metadata["merged_parts"]["peak_mb"],
        "publish_peak_mb": metadata["published_parts"]["peak_mb"],
        "chunks": metadata["published_parts"]["chunks"],
        "documents": metadata["published_parts"]["documents"],
        "path": metadata["published_parts"]["path"],
        "steps_s": steps,
        "workers": workers,
        "worker_memory": memory,
        # This process: the Dask scheduler and Dagster's run, never a step.
        "driver_peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", type=Path)
    parser.add_argument("root", type=Path)
    parser.add_argument("--parts", type=int, default=20_000, help="chunks a part holds at most")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--worker-memory", default="3GiB", help="each worker's Dask memory limit")
    args = parser.parse_args()
    figures = build(args.sources, args.root, args.parts, args.workers, args.worker_memory)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
