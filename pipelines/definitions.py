"""Dagster entry point (workspace.yaml loads this module)."""

from __future__ import annotations

import dagster as dg

from assets.checks import TABLE_CHECKS
from assets.documents import document_chunks, document_elements_asset
from assets.index import citation_edges, published_snapshot, search_tables
from assets.sources import source_files
from pipelines.resources import LexkbSettings, default_root, default_sources

scan_sources_job = dg.define_asset_job(
    "scan_sources",
    selection=[source_files],
    description="Find source files and register one `documents` partition per file.",
)

build_index_job = dg.define_asset_job(
    "build_index",
    selection=[
        document_elements_asset,
        document_chunks,
        search_tables,
        citation_edges,
        published_snapshot,
    ],
    description="Parse, structure and index the selected documents, then publish a snapshot.",
)

defs = dg.Definitions(
    assets=[
        source_files,
        document_elements_asset,
        document_chunks,
        search_tables,
        citation_edges,
        published_snapshot,
    ],
    asset_checks=TABLE_CHECKS,
    jobs=[scan_sources_job, build_index_job],
    resources={"lexkb": LexkbSettings(sources=default_sources(), root=default_root())},
)
