"""The dbt project over a real published snapshot, through the dbt command line."""

from __future__ import annotations

import os
import subprocess

import duckdb
import polars as pl

from lexkb import snapshot as snap
from tests.conftest import REPO


def test_dbt_build_summarises_the_graph_per_document(built_root, tmp_path):
    snapshot = snap.load(built_root)
    database = tmp_path / "models.duckdb"
    env = {
        **os.environ,
        "LEXKB_SNAPSHOT": str(snapshot.path),
        "LEXKB_DBT_DATABASE": str(database),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }
    result = subprocess.run(
        [
            str(REPO / ".venv/bin/dbt"),
            "build",
            "--project-dir",
            "dbt_project",
            "--profiles-dir",
            "dbt_project",
            "--target-path",
            str(tmp_path / "target"),
            "--log-path",
            str(tmp_path / "logs"),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert "ERROR=0" in result.stdout
    with duckdb.connect(str(database), read_only=True) as con:
        summary = pl.from_arrow(con.sql("select * from graph_by_document").arrow())
    edges = pl.read_parquet(snapshot.table_path("edges"))
    expected = edges.group_by("source_document_id").agg(
        pl.len().alias("citations"),
        (pl.col("reference_type") == "external").sum().alias("external_edges"),
    )
    got = summary.select(
        pl.col("document_id").alias("source_document_id"), "citations", "external_edges"
    ).filter(pl.col("citations") > 0)
    assert got.sort("source_document_id").equals(
        expected.cast({"citations": pl.Int64, "external_edges": pl.Int64}).sort(
            "source_document_id"
        )
    )
    rulebook = summary.filter(pl.col("document_key") == "lrb-chapter-4-client-assets").row(
        0, named=True
    )
    assert rulebook["most_cited_ref"] == "4.3.1"
    assert rulebook["cited_by_other_documents"] > 0
