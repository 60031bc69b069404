"""The tables a build stages in ROOT/work/tables between its steps, and publishes from there.

`search_tables` stages the tables over every document with their settings (settings.json);
later steps add the tables they derive from them (edges, clauses, definitions, embeddings,
topics, dbt's standards) and the embedder's description (embedder.json). Publishing takes every
Parquet file staged, so a table derived from older tables must be gone before new ones are
staged.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from transforms.reading.source_files import SourceFile

TABLE_DIR = "tables"
SETTINGS_FILE = "settings.json"
EMBEDDER_FILE = "embedder.json"
# What decided the clause labels (lexkb.core.clauses.labels.decider), written by clause_types when
# a model decided them; a snapshot without it has its contracts classified again at query time.
CLAUSE_MODEL_FILE = "clause_model.json"
# Written again by citation_edges, chunk_embeddings, clause_types, defined_terms, topic_clusters
# and the dbt model `standards`.
DERIVED = (
    "edges",
    "standards",
    "embeddings",
    "line_embeddings",
    "clauses",
    "definitions",
    "topics",
)


def with_inputs(
    settings: dict,
    sources: list[SourceFile],
    quarantined: list[dict],
    ignored: dict[str, str],
    metadata_errors: dict[str, str],
) -> dict:
    """The tables' settings with what they were built from: each source file (for the
    snapshot's manifest; its path only so that publishing can keep a copy), each file left out
    and why, and the catalog entries ignored."""
    return {
        **settings,
        "sources": [
            {"key": s.key, "sha256": s.sha256, "format": s.format, "path": str(s.path)}
            for s in sources
        ],
        "quarantined": {r["source"]: r["error"] for r in quarantined},
        "ignored_files": ignored,
        "metadata_errors": metadata_errors,
    }


def stage(out: Path, tables: dict[str, pl.DataFrame], settings: dict) -> None:
    """Write `tables` and their settings to `out`, removing first what was derived from the
    tables they replace: none of it may reach a snapshot of these."""
    out.mkdir(parents=True, exist_ok=True)
    for name in [f"{table}.parquet" for table in DERIVED] + [EMBEDDER_FILE, CLAUSE_MODEL_FILE]:
        (out / name).unlink(missing_ok=True)
    for name, frame in tables.items():
        frame.write_parquet(out / f"{name}.parquet")
    (out / SETTINGS_FILE).write_text(json.dumps(settings, indent=2), encoding="utf-8")


def settings(out: Path) -> dict:
    """The staged tables' settings (BM25 parameters, the catalog's aliases, the inputs)."""
    return json.loads((out / SETTINGS_FILE).read_text(encoding="utf-8"))


def for_publishing(out: Path) -> tuple[dict[str, pl.DataFrame], dict, list[dict]]:
    """Every staged table; the settings a snapshot records, the embedder's description and
    what decided the clause labels among them; and the source files, which the manifest lists apart from the settings."""
    recorded = settings(out)
    sources = recorded.pop("sources")
    recorded["embedder"] = json.loads((out / EMBEDDER_FILE).read_text(encoding="utf-8"))
    if (decided := out / CLAUSE_MODEL_FILE).is_file():
        recorded["clause_model"] = json.loads(decided.read_text(encoding="utf-8"))
    tables = {p.stem: pl.read_parquet(p) for p in sorted(out.glob("*.parquet"))}
    return tables, recorded, sources
