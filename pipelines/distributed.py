"""The build on a Dask cluster: each step of `build_index` a Dask task (dagster-dask).

Steps share nothing in memory: every asset reads and writes the root's work folder, so the
workers need that folder on a shared filesystem, or an `s3://` root whose mirror path they
share. Parsing fans out inside its step (one process per file, `parse_workers`); Dask spreads
the steps. Install with the `dask` extra; docs/scaling.md has the deployment notes.
"""

from __future__ import annotations

import dagster as dg
from dagster_dask import dask_executor

from assets.partitions import WRITER_TAGS
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
