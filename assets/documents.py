"""Per-document work: parse each file in a worker process, then recover sections and chunks.

One partition per source file. Every partition of a run is attempted; a file that cannot be read,
or that breaks a limit, is quarantined with its reason instead of failing the whole build.
"""

import time

import dagster as dg
import polars as pl

from assets import warmup
from assets.partitions import documents_partitions
from assets.progress import PARSED
from assets.resources import EmbedderSettings, LexkbSettings
from assets.sources import source_files
from transforms.publishing.workdir import WorkDir
from transforms.reading import source_files as src
from transforms.reading.isolation import Outcome, parse_all
from transforms.reading.parse_plan import plan
from transforms.reading.quarantine import SourceError
from transforms.reading.source_parts import recover


def _sources_by_key(work: WorkDir) -> dict[str, src.SourceFile]:
    return {s.key: s for s in src.from_frame(pl.read_parquet(work.sources))}


@dg.asset(
    name="document_elements",
    group_name="ingest",
    deps=[source_files],
    partitions_def=documents_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    description="Elements of each source file, parsed in worker processes within limits and "
    "cached by file hash.",
)
def document_elements_asset(
    context: dg.AssetExecutionContext, settings: LexkbSettings, embedder: EmbedderSettings
) -> dg.MaterializeResult:
    work = settings.work
    parsing = plan(work, _sources_by_key(work), context.partition_keys)
    jobs, failed = parsing.jobs, parsing.failed
    started = time.perf_counter()
    done: list[Outcome] = []

    def report(outcome: Outcome) -> None:
        done.append(outcome)
        key = outcome.source.key
        where = f"{PARSED}[{len(done)}/{len(jobs)}] {key}"
        if outcome.error is None:
            work.clear_error(key)
            context.log.info(f"{where}: {outcome.rows} elements in {outcome.seconds:.1f}s")
        else:
            work.record_error(key, outcome.error, outcome.source.sha256)
            failed[key] = outcome.error.reason
            context.log.warning(f"{where}: quarantined: {outcome.error.reason}")

    if jobs:
        warmup.start(embedder.build)  # this process mostly waits while the workers parse
    parse_all(jobs, settings.limits, report)
    slowest = max(done, key=lambda o: o.seconds, default=None)
    return dg.MaterializeResult(
        metadata={
            "parsed": sum(1 for o in done if o.error is None),
            "cached": parsing.cached,
            "quarantined": len(failed),
            "failures": dg.MetadataValue.json(failed),
            "seconds": round(time.perf_counter() - started, 2),
            "slowest_file": slowest.source.key if slowest else "",
            "slowest_seconds": round(slowest.seconds, 2) if slowest else 0.0,
            "peak_worker_mb": round(max((o.peak_mb for o in done), default=0.0), 1),
        }
    )


@dg.asset(
    group_name="ingest",
    deps=[document_elements_asset],
    partitions_def=documents_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    description="Section tree and paragraph chunks of each document, with refs and pages.",
)
def document_chunks(
    context: dg.AssetExecutionContext, settings: LexkbSettings
) -> dg.MaterializeResult:
    work = settings.work
    by_key = _sources_by_key(work)
    totals = {"documents": 0, "sections": 0, "chunks": 0}
    skipped = {}
    quality: dict[str, float] = {}
    for key in context.partition_keys:
        source = by_key.get(key)
        error = work.error(key)
        if source is None or error is not None or not work.elements(source.sha256).is_file():
            skipped[key] = error or "no parsed elements"
            continue
        if (parts := work.current_part(source)) is None:
            try:
                parts = recover(source, work.elements(source.sha256))
            except SourceError as failure:
                work.record_error(key, failure, source.sha256)
                skipped[key] = failure.reason
                context.log.warning(f"{key}: quarantined: {failure.reason}")
                continue
            work.write_part(key, parts, source)
        _count(parts, totals, quality)
    lowest = sorted(quality.items(), key=lambda item: item[1])[:10]
    return dg.MaterializeResult(
        metadata={
            **totals,
            "quarantined": dg.MetadataValue.json(skipped),
            "min_extraction_quality": min(quality.values(), default=None),
            "lowest_extraction_quality": dg.MetadataValue.md(
                "| document | quality |\n| --- | --- |\n"
                + "\n".join(f"| {key} | {score:.3f} |" for key, score in lowest)
            ),
        }
    )


def _count(parts: tuple[pl.DataFrame, ...], totals: dict, quality: dict) -> None:
    for name, frame in zip(totals, parts, strict=True):
        totals[name] += frame.height
    for document_key, score in parts[0].select("document_key", "extraction_quality").rows():
        quality[document_key] = score
