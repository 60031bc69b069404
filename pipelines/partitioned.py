"""The partitioned build's snapshot and its job: parts as steps, a small merge, shards published.

`build_index_in_parts` parses and structures each document as `build_index` does, then builds
the index part by part (assets.parts) and publishes a sharded snapshot (one shard per part,
lexkb.core.store.shards) that `Index.open` reads as one. In-process it suits a laptop; with
dagster-dask's executor (pipelines.distributed) each part is a task on a cluster's workers.
dbt's models run on the parts' files, read by DuckDB within a memory limit, before publishing.
"""

import dagster as dg
import polars as pl

from assets.documents import document_chunks, document_elements_asset
from assets.partitions import WRITER_TAGS
from assets.parts import index_parts, merged_parts, part_plan
from assets.resources import LexkbSettings
from lexkb.core.store import snapshot as snap
from transforms.parts import merge
from transforms.parts.memory import peak_rss
from transforms.publishing import dbt_runner
from transforms.publishing.dbt_sources import export_standards
from transforms.publishing.publish import publish_sharded
from transforms.reading import source_files as src

DATABASE_FILE = "models.duckdb"


@dg.asset(
    group_name="index",
    deps=[merged_parts],
    description="The sharded snapshot of a partitioned build under ROOT/snapshots, pointed at by "
    "ROOT/CURRENT; dbt's models (the catalog of standards) are built and tested first.",
)
def published_parts(
    context: dg.AssetExecutionContext, settings: LexkbSettings
) -> dg.MaterializeResult:
    work = settings.work
    staged = merge.merged_path(work)
    # The merge's tables stay in their files: DuckDB reads them for dbt, publishing one at a time.
    merged = merge.staged_lazily(staged)
    with peak_rss() as peak:
        database = work.path / DATABASE_FILE
        outcome = dbt_runner.build_files(
            merge.dbt_inputs(staged, merged.parts), database, work.path / "dbt-target"
        )
        if not outcome.success:
            failed = [f"{r.name}: {r.status}" for r in outcome.results if not r.passed]
            raise dg.Failure(f"dbt build failed: {'; '.join(failed) or outcome.error}")
        export_standards(database, staged)
        tables = {**merged.tables, "standards": pl.scan_parquet(staged / "standards.parquet")}
        sources = [
            {"key": s.key, "sha256": s.sha256, "format": s.format, "path": str(s.path)}
            for s in src.from_frame(pl.read_parquet(work.sources))
        ]
        result = publish_sharded(
            settings.root_path,
            merged.parts,
            tables,
            merged.settings,
            sources,
            keep=settings.keep_snapshots,
            remote=settings.root if settings.remote else None,
        )
    context.log.info(
        f"{'published' if result.created else 'content unchanged; CURRENT stays'} "
        f"{result.version}; publishing peak {peak.mb} MiB"
    )
    return dg.MaterializeResult(
        metadata={
            "version": result.version,
            "path": dg.MetadataValue.path(str(result.path)),
            "published_new": result.created,
            "shards": len(merged.parts),
            "chunks": sum(snap.parquet_rows(part / "chunks.parquet") for part in merged.parts),
            "documents": snap.parquet_rows(staged / "documents.parquet"),
            "quarantined": dg.MetadataValue.json(merged.settings["quarantined"]),
            "ignored_files": dg.MetadataValue.json(merged.settings["ignored_files"]),
            "peak_mb": peak.mb,
        }
    )


PARTITIONED_ASSETS = [
    document_elements_asset,
    document_chunks,
    part_plan,
    index_parts,
    merged_parts,
    published_parts,
]

build_index_in_parts = dg.define_asset_job(
    "build_index_in_parts",
    selection=PARTITIONED_ASSETS,
    description="Parse and structure the selected documents, build the index part by part, "
    "merge, check, and publish a sharded snapshot.",
    tags=WRITER_TAGS,
)
