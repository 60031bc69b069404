"""Dagster entry point (workspace.yaml loads this module)."""

from __future__ import annotations

import dagster as dg

from assets.checks import TABLE_CHECKS
from assets.documents import document_chunks, document_elements_asset
from assets.embeddings import chunk_embeddings, topic_clusters
from assets.index_tables import citation_edges, clause_types, defined_terms, search_tables
from assets.partitions import WRITER_TAGS
from assets.parts import PART_CHECKS
from assets.progress import progress_logger
from assets.resources import (
    EmbedderSettings,
    LexkbSettings,
    default_provider,
    default_root,
    default_sources,
)
from assets.sources import source_files
from pipelines.automation import daily_rebuild, reindex_job, source_changes, update_index_job
from pipelines.dbt import dbt_models, dbt_starts_early
from pipelines.partitioned import PARTITIONED_ASSETS, build_index_in_parts
from pipelines.publishing import published_snapshot

# Everything after the scan, in the order a build runs it.
BUILD_ASSETS = [
    document_elements_asset,
    document_chunks,
    search_tables,
    citation_edges,
    clause_types,
    defined_terms,
    chunk_embeddings,
    topic_clusters,
    dbt_models,
    published_snapshot,
]

scan_sources_job = dg.define_asset_job(
    "scan_sources",
    selection=[source_files],
    description="Find source files and register one `documents` partition per file.",
    tags=WRITER_TAGS,
)

build_index_job = dg.define_asset_job(
    "build_index",
    selection=BUILD_ASSETS,
    description="Parse, structure and index the selected documents, check the tables (Great "
    "Expectations, dbt), then publish a snapshot.",
    tags=WRITER_TAGS,
    hooks={dbt_starts_early},
)

defs = dg.Definitions(
    assets=[source_files, *BUILD_ASSETS, *PARTITIONED_ASSETS[2:]],
    asset_checks=[*TABLE_CHECKS, *PART_CHECKS],
    jobs=[scan_sources_job, build_index_job, update_index_job, reindex_job, build_index_in_parts],
    sensors=[source_changes],
    schedules=[daily_rebuild],
    loggers={"console": dg.colored_console_logger, "progress": progress_logger},
    resources={
        "settings": LexkbSettings(sources=default_sources(), root=default_root()),
        "embedder": EmbedderSettings(provider=default_provider()),
    },
)
