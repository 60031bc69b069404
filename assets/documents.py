"""Per-document work: parse with unstructured, then recover sections and paragraph chunks.

One partition per source file. Every partition of a run is attempted; a file that cannot be read
is recorded with its reason and left out of the index instead of failing the whole build.
"""

import time

import dagster as dg
import polars as pl

from assets.sources import source_files
from pipelines.partitions import documents_partitions
from pipelines.resources import LexkbSettings
from transforms import sources as src
from transforms.elements import SourceError, document_elements
from transforms.structure import structure_document
from transforms.workdir import WorkDir


def _sources_by_key(work: WorkDir) -> dict[str, src.SourceFile]:
    return {s.key: s for s in src.from_frame(pl.read_parquet(work.sources))}


@dg.asset(
    name="document_elements",
    group_name="ingest",
    deps=[source_files],
    partitions_def=documents_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    description="unstructured elements of each source file, cached by file hash.",
)
def document_elements_asset(
    context: dg.AssetExecutionContext, lexkb: LexkbSettings
) -> dg.MaterializeResult:
    work = WorkDir(lexkb.root)
    by_key = _sources_by_key(work)
    keys = context.partition_keys
    parsed, cached, failed = 0, 0, {}
    for number, key in enumerate(keys, start=1):
        source = by_key.get(key)
        if source is None:
            failed[key] = "not among the current source files; materialize source_files"
            continue
        target = work.elements(source.sha256)
        if target.is_file():
            cached += 1
            work.clear_error(key)
            continue
        started = time.perf_counter()
        try:
            frame = document_elements(source)
        except SourceError as exc:
            work.record_error(key, str(exc))
            failed[key] = str(exc)
            context.log.warning(f"[{number}/{len(keys)}] {key}: skipped: {exc}")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        frame.write_parquet(target)
        work.clear_error(key)
        parsed += 1
        context.log.info(
            f"[{number}/{len(keys)}] {key}: {frame.height} elements "
            f"in {time.perf_counter() - started:.1f}s"
        )
    return dg.MaterializeResult(
        metadata={
            "parsed": parsed,
            "cached": cached,
            "failed": len(failed),
            "failures": dg.MetadataValue.json(failed),
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
    context: dg.AssetExecutionContext, lexkb: LexkbSettings
) -> dg.MaterializeResult:
    work = WorkDir(lexkb.root)
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
        parts = structure_document(source, pl.read_parquet(work.elements(source.sha256)))
        if not (parts[2]["chunk_level"] == "paragraph").any():
            # A file that parses to nothing is a bad file, reported like one, not an empty
            # document in the index.
            skipped[key] = "no paragraph of text could be read from this file"
            work.record_error(key, skipped[key])
            context.log.warning(f"{key}: skipped: {skipped[key]}")
            continue
        work.write_part(key, parts)
        for name, frame in zip(totals, parts, strict=True):
            totals[name] += frame.height
        for document_key, score in parts[0].select("document_key", "extraction_quality").rows():
            quality[document_key] = score
    lowest = sorted(quality.items(), key=lambda item: item[1])[:10]
    return dg.MaterializeResult(
        metadata={
            **totals,
            "skipped": dg.MetadataValue.json(skipped),
            "min_extraction_quality": min(quality.values(), default=None),
            "lowest_extraction_quality": dg.MetadataValue.md(
                "| document | quality |\n| --- | --- |\n"
                + "\n".join(f"| {key} | {score:.3f} |" for key, score in lowest)
            ),
        }
    )
