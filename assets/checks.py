"""Asset checks that gate publishing: the Great Expectations suites of transforms.publishing.table_checks.

They are blocking: when one fails, `published_snapshot` is not materialized in that run and
CURRENT keeps pointing at the last good snapshot. The failing rows go into the check's metadata.
"""

from __future__ import annotations

import json

import dagster as dg
import polars as pl

from assets.embeddings import chunk_embeddings
from assets.index_tables import citation_edges, search_tables
from assets.resources import LexkbSettings
from lexkb.core.store import snapshot as snap
from transforms.publishing import checks_worker
from transforms.publishing import table_checks as tc
from transforms.publishing.staging import EMBEDDER_FILE
from transforms.reading import source_files as src


def _table(settings: LexkbSettings, name: str, columns: list[str] | None = None) -> pl.DataFrame:
    return pl.read_parquet(settings.tables / f"{name}.parquet", columns=columns)


def check_result(result: tc.SuiteResult) -> dg.AssetCheckResult:
    metadata: dict[str, dg.RawMetadataValue] = {
        "rows": result.rows,
        "expectations": dg.MetadataValue.md(
            "| expectation | passed | failing rows |\n| --- | --- | --- |\n"
            + "\n".join(
                f"| {e.description} | {'yes' if e.success else 'NO'} | {e.unexpected_count} |"
                for e in result.expectations
            )
        ),
    }
    for expectation in result.failures():
        metadata[f"failing: {expectation.description}"] = dg.MetadataValue.json(
            expectation.failing_rows
        )
    return dg.AssetCheckResult(
        passed=result.success, severity=dg.AssetCheckSeverity.ERROR, metadata=metadata
    )


@dg.asset_check(
    asset=search_tables,
    blocking=True,
    description="Chunk ids unique and present, hashes match the text, no empty chunk, "
    "paragraph refs unique per document (Great Expectations).",
)
def chunks_are_sound(settings: LexkbSettings) -> dg.AssetCheckResult:
    return check_result(checks_worker.run(tc.check_chunks, _table(settings, "chunks")))


@dg.asset_check(
    asset=search_tables,
    blocking=True,
    description="Section ids unique and present; every parent section exists.",
)
def sections_are_sound(settings: LexkbSettings) -> dg.AssetCheckResult:
    return check_result(checks_worker.run(tc.check_sections, _table(settings, "sections")))


@dg.asset_check(
    asset=search_tables,
    blocking=True,
    description="Document ids unique; every paragraph a document counts is in the chunks table. "
    "(A document whose paragraphs are implausible was quarantined before this check.)",
)
def documents_are_sound(settings: LexkbSettings) -> dg.AssetCheckResult:
    return check_result(
        checks_worker.run(
            tc.check_documents, _table(settings, "documents"), _table(settings, "chunks")
        )
    )


@dg.asset_check(
    asset=search_tables,
    blocking=True,
    description="No document of the current snapshot is lost unless its source file was removed.",
)
def no_document_lost(settings: LexkbSettings) -> dg.AssetCheckResult:
    return continuity(settings, _table(settings, "documents"), _table(settings, "quarantine"))


def continuity(
    settings: LexkbSettings, documents: pl.DataFrame, quarantine: pl.DataFrame
) -> dg.AssetCheckResult:
    """The continuity suite of `documents` (this build's, with its `quarantine`) against the
    documents of the snapshot CURRENT names: what the one-process and partitioned builds both
    check before publishing."""
    try:
        previous = snap.load(settings.root_path).read_table(
            "documents", columns=["document_id", "document_key", "source_name", "source_sha256"]
        )
    except (snap.SnapshotError, KeyError):
        previous = None  # first build, or an unreadable CURRENT: nothing to compare with
    shas = {s.key: s.sha256 for s in src.from_frame(pl.read_parquet(settings.work.sources))}
    quarantined = set(quarantine["source_name"])
    return check_result(
        checks_worker.run(tc.check_continuity, previous, documents, shas, quarantined)
    )


@dg.asset_check(
    asset=citation_edges,
    blocking=True,
    description="Both ends of every edge exist; types and weights are in range.",
)
def edges_are_sound(settings: LexkbSettings) -> dg.AssetCheckResult:
    return check_result(
        checks_worker.run(tc.check_edges, _table(settings, "edges"), _table(settings, "chunks"))
    )


@dg.asset_check(
    asset=chunk_embeddings,
    blocking=True,
    description="Every chunk has a vector, every line vector a paragraph; all of the declared "
    "dimension and unit length.",
)
def embeddings_are_sound(settings: LexkbSettings) -> dg.AssetCheckResult:
    out = settings.tables
    embedder = json.loads((out / EMBEDDER_FILE).read_text(encoding="utf-8"))
    return check_result(
        checks_worker.run(
            tc.check_embeddings,
            tc.vector_measures(_table(settings, "embeddings", ["chunk_id", "vector"])),
            tc.vector_measures(_table(settings, "line_embeddings")),
            _table(settings, "chunks", ["chunk_id", "chunk_level"]),
            embedder,
        )
    )


TABLE_CHECKS = [
    chunks_are_sound,
    sections_are_sound,
    documents_are_sound,
    no_document_lost,
    edges_are_sound,
    embeddings_are_sound,
]
