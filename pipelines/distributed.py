"""The build on a Dask cluster: each step of `build_index` a Dask task (dagster-dask).

Steps share nothing in memory: every asset reads and writes the root's work folder, so the
workers need that folder on a shared filesystem, or an `s3://` root whose mirror path they
share. Parsing fans out inside its step (one process per file, `parse_workers`); Dask spreads
the steps. Install with the `dask` extra; docs/scaling.md has the deployment notes.
"""

from __future__ import annotations

from collections.abc import Callable

import dagster as dg
from dagster_dask import dask_executor

from assets import tags
from assets.partitions import DOCUMENTS, WRITER_TAGS
from pipelines.definitions import BUILD_ASSETS, defs
from pipelines.partitioned import PARTITIONED_ASSETS

build_index_on_dask = dg.define_asset_job(
    "build_index_on_dask",
    selection=BUILD_ASSETS,
    executor_def=dask_executor,
    description="build_index with each step a task on a Dask cluster (config: execution.config."
    "cluster, e.g. existing.address of a running scheduler).",
    tags=WRITER_TAGS,
)

build_index_in_parts_on_dask = dg.define_asset_job(
    "build_index_in_parts_on_dask",
    selection=PARTITIONED_ASSETS,
    executor_def=dask_executor,
    description="build_index_in_parts with each step a task on a Dask cluster: one task per "
    "part, the merge and publishing once (config: execution.config.cluster).",
    tags=WRITER_TAGS,
)

dask_defs = dg.Definitions.merge(
    defs, dg.Definitions(jobs=[build_index_on_dask, build_index_in_parts_on_dask])
)


def dask_job() -> dg.JobDefinition:
    """The job as a reconstructable target: workers load it from this module."""
    return dask_defs.resolve_job_def("build_index_on_dask")


def dask_parts_job() -> dg.JobDefinition:
    """The partitioned job as a reconstructable target, as `dask_job`."""
    return dask_defs.resolve_job_def("build_index_in_parts_on_dask")


def run_on_dask(
    job: Callable[[], dg.JobDefinition],
    address: str,
    resources: dict,
    instance: dg.DagsterInstance,
) -> dg.JobExecutionResult:
    """Scan the sources in this process, then run `job` (`dask_job` or `dask_parts_job`) over
    every document the scan registered, each step a task on the Dask scheduler at `address`.
    `resources`: the run config's resources (`settings` as `build_index` takes them);
    `instance` must be persistent, as dagster-dask requires."""
    dask_defs.resolve_job_def("scan_sources").execute_in_process(
        run_config={"resources": resources}, instance=instance
    )
    keys = instance.get_dynamic_partitions(DOCUMENTS)
    return dg.execute_job(
        dg.reconstructable(job),
        instance=instance,
        run_config={
            "resources": resources,
            "execution": {"config": {"cluster": {"existing": {"address": address}}}},
        },
        tags={tags.PARTITION_RANGE_START: keys[0], tags.PARTITION_RANGE_END: keys[-1]},
    )
