"""Running the build jobs in-process: what `lexkb build` and the tests call.

The CLI goes through the same Dagster jobs as the UI, so a snapshot built either way is the same.
The instance is DAGSTER_HOME's when that is set (runs then show in `dagster dev`), otherwise an
ephemeral one; parsed files are cached under ROOT/work either way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")

import dagster as dg  # noqa: E402
from dagster._core.storage.tags import (  # noqa: E402
    ASSET_PARTITION_RANGE_END_TAG,
    ASSET_PARTITION_RANGE_START_TAG,
)

from pipelines.definitions import defs  # noqa: E402
from pipelines.partitions import documents_partitions  # noqa: E402
from pipelines.resources import LexkbSettings  # noqa: E402


@dataclass(frozen=True)
class BuildReport:
    version: str
    path: Path
    published_new: bool
    chunks: int
    skipped: dict[str, str]


def materialized_metadata(result: dg.ExecuteInProcessResult, asset: str) -> dict:
    for event in result.get_asset_materialization_events():
        if event.asset_key == dg.AssetKey(asset):
            return {k: v.value for k, v in event.materialization.metadata.items()}
    raise RuntimeError(f"the run did not materialize {asset}")


def run_build(
    sources: list[str | Path],
    root: str | Path,
    log_level: str = "WARNING",
    instance: dg.DagsterInstance | None = None,
) -> BuildReport:
    settings = LexkbSettings(sources=[str(s) for s in sources], root=str(Path(root).resolve()))
    run_config = {"loggers": {"console": {"config": {"log_level": log_level}}}}
    if instance is None:
        instance = (
            dg.DagsterInstance.get()
            if os.environ.get("DAGSTER_HOME")
            else dg.DagsterInstance.ephemeral()
        )
    resources = {"lexkb": settings}
    defs.resolve_job_def("scan_sources").execute_in_process(
        run_config=run_config, instance=instance, resources=resources
    )
    keys = instance.get_dynamic_partitions(documents_partitions.name)
    if not keys:
        raise ValueError(f"no supported documents under {', '.join(map(str, sources))}")
    result = defs.resolve_job_def("build_index").execute_in_process(
        run_config=run_config,
        instance=instance,
        resources=resources,
        tags={ASSET_PARTITION_RANGE_START_TAG: keys[0], ASSET_PARTITION_RANGE_END_TAG: keys[-1]},
    )
    published = materialized_metadata(result, "published_snapshot")
    return BuildReport(
        version=published["version"],
        path=Path(published["path"]),
        published_new=published["published_new"],
        chunks=published["chunks"],
        skipped=published["skipped_sources"],
    )
