"""The merge of a partitioned build: what needs every part, read one part at a time.

It holds the tables that have a row per document or per citation (documents, edges, clause
labels, definitions, topics), BM25's document frequencies over the union of the parts'
vocabularies, and the ids of every chunk for the edge check: never the chunks' text or
vectors. Those stay in the parts' folders, which become the snapshot's shards
(transforms.publishing.publish.publish_sharded).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

import polars as pl

from lexkb.core.store.schema import CLAUSES, DEFINITIONS, empty_frame
from transforms.indexing.bm25 import BM25Params
from transforms.parts import cross_edges, sampled_topics, shard_files
from transforms.parts.part_tables import (
    CLAUSES_FILE,
    DEFINITIONS_FILE,
    DOCUMENTS_FILE,
    PartReport,
    part_path,
)
from transforms.parts.plan import Plan, plan_dir
from transforms.publishing import checks_worker
from transforms.publishing import table_checks as tc
from transforms.publishing.workdir import WorkDir
from transforms.reading.quarantine import quarantine_frame

# The merge's tables: frames, or scans of their files (`staged_lazily`).
Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


@dataclass(frozen=True)
class Merged(Generic[Frame]):
    """The global tables and settings of a partitioned build, the parts' folders in row order,
    and the edges that crossed parts."""

    tables: dict[str, Frame]
    settings: dict
    parts: list[Path]
    crossing: int


def merge(work: WorkDir, plan: Plan, reports: list[PartReport]) -> Merged[pl.DataFrame]:
    """Global tables over the parts `reports` describes (in the plan's order)."""
    order = {p.name: n for n, p in enumerate(plan.parts)}
    reports = sorted(reports, key=lambda r: order[r.name])
    folders = [part_path(work, r.name) for r in reports]
    offsets, start = [], 0
    for report in reports:
        offsets.append(start)
        start += report.chunks
    documents = pl.concat([pl.read_parquet(f / DOCUMENTS_FILE) for f in folders])
    edges, crossing = cross_edges.merged_edges(
        list(zip(folders, offsets, strict=True)), documents, plan.aliases
    )
    params = BM25Params()
    terms, groups, group_settings = shard_files.global_bm25(folders, params)
    tables = {
        "documents": documents,
        "edges": edges,
        "bm25_terms": terms,
        "bm25_groups": groups,
        "quarantine": quarantine_frame(plan.quarantined),
        "clauses": _concat(folders, CLAUSES_FILE) if folders else empty_frame(CLAUSES),
        "definitions": _concat(folders, DEFINITIONS_FILE) if folders else empty_frame(DEFINITIONS),
        "topics": sampled_topics.topic_table(folders),
    }
    settings = {
        "bm25": {**params.settings(), "groups": group_settings},
        "aliases": plan.aliases,
        "quarantined": {r["source"]: r["error"] for r in plan.quarantined},
        "ignored_files": plan.ignored,
        "metadata_errors": plan.metadata_errors,
        "embedder": next((r.embedder for r in reports if r.embedder), None),
    }
    return Merged(tables, settings, folders, crossing)


def _concat(folders: list[Path], name: str) -> pl.DataFrame:
    return pl.concat([pl.read_parquet(f / name) for f in folders])


def check_edges(merged: Merged) -> tc.SuiteResult:
    """Both ends of every edge exist: the edge suite of the one-process build, against the ids
    of every part's chunks (a column of ids, not the chunks)."""
    ids = pl.concat(
        [pl.read_parquet(f / cross_edges.UNITS_FILE, columns=["chunk_id"]) for f in merged.parts]
    )
    return checks_worker.run(tc.check_edges, merged.tables["edges"], ids)


def dbt_inputs(target: Path, parts: list[Path]) -> dict[str, list[Path]]:
    """The dbt project's sources as Parquet files: the parts' sections and chunks, and the
    documents and edges as `stage` wrote them to `target`, all as they are."""
    return {
        "documents": [target / "documents.parquet"],
        "edges": [target / "edges.parquet"],
        "sections": [f / "sections.parquet" for f in parts],
        "chunks": [f / "chunks.parquet" for f in parts],
    }


MERGED_DIR = "merged"
MERGED_FILE = "merged.json"


def merged_path(work: WorkDir) -> Path:
    return plan_dir(work) / MERGED_DIR


def stage(merged: Merged[pl.DataFrame], target: Path) -> None:
    """Write the merge's tables and settings for the steps after it (its checks, publishing)."""
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for name, frame in merged.tables.items():
        frame.write_parquet(target / f"{name}.parquet")
    described = {
        "settings": merged.settings,
        "parts": [str(p) for p in merged.parts],
        "crossing": merged.crossing,
    }
    (target / MERGED_FILE).write_text(json.dumps(described), encoding="utf-8")


def staged(target: Path) -> Merged[pl.DataFrame]:
    """What `stage` wrote."""
    return _staged(target, pl.read_parquet)


def staged_lazily(target: Path) -> Merged[pl.LazyFrame]:
    """What `stage` wrote, its tables scanned (`pl.LazyFrame`), each read where it is used:
    publishing reads one at a time rather than holding all of them, which grow with the
    corpus's citations and terms."""
    return _staged(target, pl.scan_parquet)


def _staged(target: Path, read: Callable[[Path], Frame]) -> Merged[Frame]:
    described = json.loads((target / MERGED_FILE).read_text(encoding="utf-8"))
    tables = {p.stem: read(p) for p in sorted(target.glob("*.parquet"))}
    return Merged(
        tables, described["settings"], [Path(p) for p in described["parts"]], described["crossing"]
    )
