"""When builds happen on their own: a sensor on the source folders and a daily full rebuild.

The sensor compares the files on disk with the last scan (ROOT/work/sources.parquet) and the
`documents` partitions: a new file gets a partition and a run of its partition, a changed file a
run of its partition, a removed file loses its partition and the index is rebuilt without it. Each
run also refreshes the scan and republishes; unchanged files reuse their cached parts.

Dagster never runs a run key twice, so a run key names one change: the file, its new SHA-256
(or its removal) and when the sensor first saw that change, kept in the sensor's cursor while
the change waits for its run. A change seen again at the next tick keeps its key (Dagster drops
the repeat); a file reverted A -> B -> A, or removed, re-added and removed again, gets a new key
each time. A cursor reset in the UI only gives waiting changes new keys (a run more, not fewer).
"""

from __future__ import annotations

import json
import time

import dagster as dg
import polars as pl

from assets.partitions import DOCUMENTS, WRITER_TAGS, documents_partitions
from assets.resources import LexkbSettings
from transforms.reading import source_files as src

update_index_job = dg.define_asset_job(
    "update_index",
    selection=dg.AssetSelection.all(),
    description="Rescan the sources, parse the selected documents, rebuild and publish the index.",
    tags=WRITER_TAGS,
)

reindex_job = dg.define_asset_job(
    "reindex",
    selection=dg.AssetSelection.all()
    - dg.AssetSelection.assets("document_elements", "document_chunks"),
    description="Rescan the sources and rebuild the index from the parsed documents it has.",
    tags=WRITER_TAGS,
)


def _last_scan(settings: LexkbSettings) -> dict[str, str]:
    scan = settings.work.sources
    if not scan.is_file():
        return {}
    return dict(pl.read_parquet(scan, columns=["key", "sha256"]).rows())


REMOVED = "removed"


def _first_seen(cursor: str | None, pending: dict[str, str], now: int) -> dict[str, list]:
    """{file: [its pending state (SHA-256 or REMOVED), when it was first seen]}: carried over
    from the last tick's cursor while the state is the same, stamped `now` when it is new or
    differs. Files no longer pending drop out, so the cursor holds only waiting changes."""
    try:
        last = json.loads(cursor) if cursor else {}
    except ValueError:
        last = {}
    if not isinstance(last, dict):
        last = {}
    seen: dict[str, list] = {}
    for key, state in pending.items():
        entry = last.get(key)
        if not (
            isinstance(entry, list)
            and len(entry) == 2
            and entry[0] == state
            and isinstance(entry[1], int)
        ):
            entry = [state, now]  # new, or not as the last tick saw it
        seen[key] = entry
    return seen


@dg.sensor(
    jobs=[update_index_job, reindex_job],
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="Adds, re-runs and removes `documents` partitions as files appear, change or "
    "disappear under the source folders.",
)
def source_changes(context: dg.SensorEvaluationContext, settings: LexkbSettings) -> dg.SensorResult:
    try:
        found = {s.key: s.sha256 for s in src.discover(settings.sources)}
    except ValueError as exc:
        return dg.SensorResult(skip_reason=str(exc))
    known = set(context.instance.get_dynamic_partitions(DOCUMENTS))
    scanned = _last_scan(settings)
    added = sorted(found.keys() - known)
    changed = sorted(k for k in found.keys() & known if scanned.get(k) != found[k])
    removed = sorted(known - found.keys())
    pending = {k: found[k] for k in added + changed} | dict.fromkeys(removed, REMOVED)
    seen = _first_seen(context.cursor, pending, time.time_ns())
    cursor = json.dumps(seen, sort_keys=True)
    runs = [
        dg.RunRequest(
            job_name=update_index_job.name,
            partition_key=k,
            run_key=f"{k}@{found[k]}#{seen[k][1]}",
        )
        for k in added + changed
    ]
    if removed and not runs:
        latest = max(seen[k][1] for k in removed)
        runs.append(
            dg.RunRequest(
                job_name=reindex_job.name, run_key=f"{REMOVED}:{','.join(removed)}#{latest}"
            )
        )
    partition_requests: list[
        dg.AddDynamicPartitionsRequest | dg.DeleteDynamicPartitionsRequest
    ] = []
    if added:
        partition_requests.append(documents_partitions.build_add_request(added))
    if removed:
        partition_requests.append(documents_partitions.build_delete_request(removed))
    if not runs and not partition_requests:
        return dg.SensorResult(
            skip_reason="no source file was added, changed or removed", cursor=cursor
        )
    context.log.info(f"added {added}, changed {changed}, removed {removed}")
    return dg.SensorResult(
        run_requests=runs, dynamic_partitions_requests=partition_requests, cursor=cursor
    )


@dg.schedule(
    cron_schedule="0 3 * * *",
    job=update_index_job,
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Daily full rebuild: every known document partition, then the index.",
)
def daily_rebuild(context: dg.ScheduleEvaluationContext) -> dg.RunRequest | dg.SkipReason:
    # In the instance's order, not by name: Dagster resolves a range of dynamic partitions
    # between the two keys' places in the order they were added, so a range by name from
    # partitions added out of name order (manual, rules, annex) selects nothing.
    keys = context.instance.get_dynamic_partitions(DOCUMENTS)
    if not keys:
        return dg.SkipReason("no documents yet: let the sensor or `lexkb build` scan the sources")
    return dg.RunRequest(
        run_key=None,
        tags={
            "dagster/asset_partition_range_start": keys[0],
            "dagster/asset_partition_range_end": keys[-1],
        },
    )
