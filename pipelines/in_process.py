"""Running the build jobs in-process: what `lexkb build` and the tests call.

The CLI goes through the same Dagster jobs as the UI, so a snapshot built either way is the same.
The instance is DAGSTER_HOME's when that is set (runs then show in `dagster dev`), otherwise an
ephemeral one; parsed files are cached under ROOT/work either way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl

from assets import tags as run_tags
from assets.partitions import DOCUMENTS
from assets.progress import report_to, stderr_reporter
from assets.resources import EmbedderSettings, LexkbSettings
from lexkb.core import environment
from lexkb.core.store import root_lock
from lexkb.core.store import snapshot as snap
from lexkb.core.store.object_store import is_remote, mirror_path
from pipelines.definitions import defs
from pipelines.signals import sigterm_kept
from transforms.publishing import checks_worker, dbt_runner
from transforms.reading.isolation import start_server
from transforms.structure.inferred import catalog_gaps


@dataclass(frozen=True)
class BuildReport:
    """What a build did. When a blocking check failed, nothing was published: `blocked` names the
    failed checks, and `version`/`path` are those CURRENT still points at (None on a first build).
    `quarantined` maps each source left out to its reason; `ignored` lists files of types lexkb
    does not read."""

    version: str | None
    path: Path | None
    published_new: bool
    chunks: int
    quarantined: dict[str, str]
    ignored: dict[str, str] = field(default_factory=dict)
    blocked: dict[str, str] = field(default_factory=dict)
    documents: int = 0
    parsed: int = 0  # files parsed in this build
    cached: int = 0  # files whose parsed elements were reused from an earlier build
    steps: dict[str, float] = field(default_factory=dict)  # seconds per step of the build run
    # Field -> the documents that lack it, which a catalog entry would give
    # (transforms.structure.inferred.catalog_gaps).
    catalog_would_add: dict[str, list[str]] = field(default_factory=dict)


class NothingPublished(RuntimeError):
    """Every source file was quarantined (or there were none): the message lists why."""


def step_seconds(result: dg.ExecuteInProcessResult) -> dict[str, float]:
    """Seconds each step of the build run took, in the order they finished: where a slow
    build spends its time (`lexkb build --timings`)."""
    return {
        event.step_key: round(event.step_success_data.duration_ms / 1000, 2)
        for event in result.all_events
        if event.event_type_value == "STEP_SUCCESS" and event.step_key
    }


def failed_checks(result: dg.ExecuteInProcessResult) -> dict[str, str]:
    """Check name -> the expectations that failed, for every check that did not pass."""
    failed = {}
    for event in result.all_events:
        if event.event_type_value != "ASSET_CHECK_EVALUATION":
            continue
        evaluation = event.asset_check_evaluation_data
        if evaluation.passed:
            continue
        # Each failed expectation's example rows, as the check wrote them (JSON).
        rows: dict[str, Any] = {
            key.removeprefix("failing: "): value.value
            for key, value in evaluation.metadata.items()
            if key.startswith("failing: ")
        }
        failed[evaluation.check_name] = (
            "; ".join(
                f"{what} ({len(examples)} example rows: {examples[:3]})"
                for what, examples in rows.items()
            )
            or "failed"
        )
    return failed


def materialized_metadata(result: dg.ExecuteInProcessResult, asset: str) -> dict:
    for event in result.get_asset_materialization_events():
        if event.asset_key == dg.AssetKey(asset):
            return {k: v.value for k, v in event.materialization.metadata.items()}
    raise RuntimeError(f"the run did not materialize {asset}")


def current_snapshot(root: Path) -> snap.Snapshot | None:
    try:
        return snap.load(root)
    except snap.SnapshotError:
        return None


def run_build(
    sources: list[str | Path],
    root: str | Path,
    log_level: str = "WARNING",
    instance: dg.DagsterInstance | None = None,
    embedder: str | None = None,
    wait_seconds: float = 60.0,
    progress: bool = False,
    parts: int | None = None,
    **settings_fields: object,
) -> BuildReport:
    """`embedder`: auto, local, voyage or none (see EmbedderSettings); the definitions' default
    when None. The root's writer lock is held for the whole build; another writer waits up to
    `wait_seconds` (RootBusy past it). `parts`: build in parts of at most that many chunks
    (pipelines.partitioned) and publish a sharded snapshot. `settings_fields` set
    LexkbSettings (limits, symlinks)."""
    if parts is not None:
        if parts < 1:
            raise ValueError(f"parts must hold at least one chunk, not {parts}")
        settings_fields["part_chunks"] = parts
    for source in sources:
        if not Path(source).exists():
            raise ValueError(f"source path does not exist: {source}")
    # Dagster reads it when a run or an instance would report usage, not at its import.
    os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
    # An s3:// root stays a URL; its local mirror is what the lock guards (lexkb.core.store.object_store).
    root = str(root) if is_remote(root) else Path(root).resolve()
    start_server()
    checks_worker.start()
    dbt_runner.worker.start()
    with root_lock.hold(
        mirror_path(root) if is_remote(root) else root, wait_seconds, "lexkb build"
    ):
        if not progress:
            return _run(sources, root, log_level, instance, embedder, settings_fields, False, parts)
        reporter = stderr_reporter()
        reporter.write(f"building {root} (lock held)\n")
        report_to(reporter)
        try:
            return _run(sources, root, log_level, instance, embedder, settings_fields, True, parts)
        finally:
            report_to(None)


def _run(
    sources: list[str | Path],
    root: str | Path,
    log_level: str,
    instance: dg.DagsterInstance | None,
    embedder: str | None,
    settings_fields: dict,
    progress: bool,
    parts: int | None = None,
) -> BuildReport:
    settings = LexkbSettings(sources=[str(s) for s in sources], root=str(root), **settings_fields)
    loggers: dict = {"console": {"config": {"log_level": log_level}}}
    if progress:
        loggers["progress"] = {}
    run_config = {"loggers": loggers}
    if instance is None:
        instance = (
            dg.DagsterInstance.get()
            if environment.dagster_home()
            else dg.DagsterInstance.ephemeral()
        )
    resources: dict[str, object] = {"settings": settings}
    if embedder is not None:
        resources["embedder"] = EmbedderSettings(provider=embedder)
    with sigterm_kept():
        defs.resolve_job_def("scan_sources").execute_in_process(
            run_config=run_config, instance=instance, resources=resources
        )
    keys = instance.get_dynamic_partitions(DOCUMENTS)
    if not keys:
        raise ValueError(f"no supported documents under {', '.join(map(str, sources))}")
    tags = {run_tags.PARTITION_RANGE_START: keys[0], run_tags.PARTITION_RANGE_END: keys[-1]}
    with sigterm_kept():
        job = "build_index_in_parts" if parts is not None else "build_index"
        result = defs.resolve_job_def(job).execute_in_process(
            run_config=run_config,
            instance=instance,
            resources=resources,
            tags=tags,
            raise_on_error=False,
        )
    return build_report(result, settings.root_path, parts is not None)


def build_report(
    result: dg.ExecuteInProcessResult, root: Path, partitioned: bool = False
) -> BuildReport:
    """What the `build_index` run `result` did to the index at `root`: blocked by a failed check
    (CURRENT unchanged), failed (raised: NothingPublished when every source was quarantined),
    or published."""
    blocked = failed_checks(result)
    if blocked:
        current = current_snapshot(root)
        return BuildReport(
            version=current.version if current else None,
            path=current.path if current else None,
            published_new=False,
            chunks=0,
            quarantined={},
            blocked=blocked,
        )
    if not result.success:
        failure = next((e for e in result.all_events if e.event_type_value == "STEP_FAILURE"), None)
        error = failure.step_failure_data.error if failure else None
        message = error.message if error else "the run failed"
        message = message.strip().splitlines()[-1] if message.strip() else message
        if "nothing to publish" in message:
            raise NothingPublished(message.split("Failure: ", 1)[-1])
        raise RuntimeError(f"build failed in {failure.step_key if failure else '?'}: {message}")
    published = materialized_metadata(
        result, "published_parts" if partitioned else "published_snapshot"
    )
    parsing = materialized_metadata(result, "document_elements")
    return BuildReport(
        version=published["version"],
        path=Path(published["path"]),
        published_new=published["published_new"],
        chunks=published["chunks"],
        quarantined=published["quarantined"],
        ignored=published["ignored_files"],
        documents=published["documents"],
        parsed=parsing["parsed"],
        cached=parsing["cached"],
        steps=step_seconds(result),
        catalog_would_add=_catalog_gaps(root),
    )


def _catalog_gaps(root: Path) -> dict[str, list[str]]:
    """What a catalog would add to the documents of the snapshot CURRENT names."""
    current = current_snapshot(root)
    if current is None:
        return {}
    return catalog_gaps(pl.read_parquet(current.table_path("documents")))
