"""The partitioned build's index: planned into parts, a task per part, a small merge.

`part_plan` splits the corpus into runs of whole documents of bounded size; `index_parts`
builds each part (transforms.parts.part_tables) as a task on a Dask cluster when the build has one,
else one after another; `merged_parts` reads the parts one at a time for what needs them all
(transforms.parts.merge). The parts are Dask tasks submitted by the `index_parts` step rather
than Dagster steps of their own because dagster-dask's executor plans every step before the run
starts and does not run dynamic outputs (dagster-io/dagster#9785). Every part reads and writes the
root's work folder, so the workers need it on a shared filesystem, as the one-process build's
steps on Dask do. Each step and part reports the peak resident memory of its process while it
ran (transforms.parts.memory): what bounds a worker is the part size, not the corpus.
"""

import json
import os
from dataclasses import asdict

import dagster as dg

from assets.checks import check_result, continuity
from assets.documents import document_chunks
from assets.resources import EmbedderSettings, LexkbSettings
from transforms.parts import merge
from transforms.parts.memory import peak_rss
from transforms.parts.part_tables import REPORT_FILE, PartReport, build_part, part_path
from transforms.parts.plan import load_plan, make_plan
from transforms.reading.source_parts import PartMissing


def _part_task(root: str, name: str, provider: str, model: str) -> dict:
    """One part, as a Dask task runs it: the embedder is made in the worker (each worker
    process loads the model once), and the report carries the task's peak memory."""
    settings = LexkbSettings(sources=[], root=root)
    plan, planned = load_plan(settings.work)
    embedder = EmbedderSettings(provider=provider, model=model).build()
    with peak_rss() as peak:
        report = build_part(settings.work, plan, planned, plan.part(name), embedder)
    return {**asdict(report), "peak_mb": peak.mb, "pid": os.getpid()}


def _run_parts(address: str, root: str, names: list[str], embedder: EmbedderSettings) -> list[dict]:
    """Every part's report, in plan order, on a Dask cluster when there is one (dask.distributed
    schedules them; nothing here does): the scheduler at `address` (LexkbSettings.
    parts_cluster); else, when this step is itself a Dask task (dagster-dask's executor), the
    cluster it runs on; else one after another in this process (a laptop)."""
    arguments = (root, embedder.provider, embedder.model)
    if address:
        from distributed import Client

        with Client(address) as client:
            return _gathered(client, names, arguments)
    try:
        from distributed import get_worker, worker_client

        get_worker()
    except (ImportError, ValueError):
        return [_part_task(root, name, *arguments[1:]) for name in names]
    # This step is itself a task on a cluster: leave its thread to the parts while they run.
    with worker_client() as client:
        return _gathered(client, names, arguments)


def _gathered(client, names: list[str], arguments: tuple) -> list[dict]:
    root, provider, model = arguments
    futures = [
        client.submit(
            _part_task, root, name, provider, model, key=f"lexkb-part-{name}-{root}", pure=False
        )
        for name in names
    ]
    return client.gather(futures)


@dg.asset(
    group_name="index",
    deps=[document_chunks],
    description="The parts of a partitioned build: runs of whole documents, each of bounded "
    "size (ROOT/work/partitioned/plan.json).",
)
def part_plan(
    context: dg.AssetExecutionContext, settings: LexkbSettings, embedder: EmbedderSettings
) -> dg.MaterializeResult:
    model = embedder.build()
    try:
        with peak_rss() as peak:
            plan = make_plan(
                settings.work,
                settings.sources,
                max_chunks=settings.part_chunks,
                salt=model.name if model is not None else "none",
            )
    except PartMissing as missing:
        raise dg.Failure(
            f"{missing.key} has no chunks yet: materialize document_chunks for its partition"
        ) from None
    if not plan.parts:
        summary = "; ".join(f"{r['source']}: {r['error']}" for r in plan.quarantined[:20])
        raise dg.Failure(
            f"nothing to publish: every source file was quarantined ({len(plan.quarantined)}): "
            f"{summary or 'no source files'}"
        )
    context.log.info(f"{len(plan.parts)} parts of at most {settings.part_chunks} chunks")
    return dg.MaterializeResult(
        metadata={
            "parts": len(plan.parts),
            "chunks": sum(p.chunks for p in plan.parts),
            "quarantined": len(plan.quarantined),
            "peak_mb": peak.mb,
        }
    )


@dg.asset(
    group_name="index",
    deps=[part_plan],
    description="Each part's tables, postings, vectors, citations and checks, a Dask task per "
    "part (ROOT/work/partitioned/parts).",
)
def index_parts(
    context: dg.AssetExecutionContext,
    settings: LexkbSettings,
    embedder: EmbedderSettings,
) -> dg.MaterializeResult:
    plan, _ = load_plan(settings.work)
    names = [p.name for p in plan.parts]
    reports = _run_parts(settings.parts_cluster, str(settings.root_path), names, embedder)
    for report in reports:
        context.log.info(
            f"{report['name']}: {report['chunks']} chunks, "
            f"{'kept' if report['reused'] else 'built'}, {report['embedded']} texts embedded, "
            f"peak {report['peak_mb']} MiB (process {report['pid']})"
        )
    return dg.MaterializeResult(
        metadata={
            "parts": len(reports),
            "reused": sum(r["reused"] for r in reports),
            "embedded": sum(r["embedded"] for r in reports),
            "part_peak_mb": dg.MetadataValue.json({r["name"]: r["peak_mb"] for r in reports}),
            "max_part_peak_mb": max(r["peak_mb"] for r in reports),
            "processes": len({r["pid"] for r in reports}),
        }
    )


@dg.asset(
    group_name="index",
    deps=[index_parts],
    description="What needs every part, read one part at a time: BM25's global statistics, "
    "edges across parts, topics, the documents (ROOT/work/partitioned/merged).",
)
def merged_parts(
    context: dg.AssetExecutionContext, settings: LexkbSettings
) -> dg.MaterializeResult:
    plan, _ = load_plan(settings.work)
    reports = [
        PartReport(**json.loads((part_path(settings.work, p.name) / REPORT_FILE).read_text()))
        for p in plan.parts
    ]
    with peak_rss() as peak:
        merged = merge.merge(settings.work, plan, reports)
        merge.stage(merged, merge.merged_path(settings.work))
    context.log.info(
        f"merged {len(reports)} parts: {merged.tables['edges'].height} edges "
        f"({merged.crossing} citations across parts), peak {peak.mb} MiB"
    )
    return dg.MaterializeResult(
        metadata={
            "parts": len(reports),
            "documents": merged.tables["documents"].height,
            "edges": merged.tables["edges"].height,
            "crossing": merged.crossing,
            "peak_mb": peak.mb,
        }
    )


@dg.asset_check(
    asset=merged_parts,
    blocking=True,
    description="Every part passed the chunk, section, document and embedding suites.",
)
def parts_are_sound(settings: LexkbSettings) -> dg.AssetCheckResult:
    plan, _ = load_plan(settings.work)
    failing = {}
    for part in plan.parts:
        report = json.loads((part_path(settings.work, part.name) / REPORT_FILE).read_text())
        for suite, failures in report["failed_checks"].items():
            failing[f"{part.name} {suite}"] = failures
    return dg.AssetCheckResult(
        passed=not failing,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={f"failing: {k}": dg.MetadataValue.json(v) for k, v in failing.items()}
        | {"parts": len(plan.parts)},
    )


@dg.asset_check(
    asset=merged_parts,
    blocking=True,
    description="Both ends of every edge exist; types and weights are in range.",
)
def part_edges_are_sound(settings: LexkbSettings) -> dg.AssetCheckResult:
    merged = merge.staged(merge.merged_path(settings.work))
    return check_result(merge.check_edges(merged))


@dg.asset_check(
    asset=merged_parts,
    blocking=True,
    description="No document of the current snapshot is lost unless its source file was removed.",
)
def no_part_document_lost(settings: LexkbSettings) -> dg.AssetCheckResult:
    merged = merge.staged(merge.merged_path(settings.work))
    return continuity(settings, merged.tables["documents"], merged.tables["quarantine"])


PART_CHECKS = [parts_are_sound, part_edges_are_sound, no_part_document_lost]
