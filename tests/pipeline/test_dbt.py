"""The dbt project: inside the Dagster build (models as assets, tests as checks) and on its own."""

from __future__ import annotations

import os
import shutil
import subprocess

import duckdb
import polars as pl

from lexkb.core.store import snapshot as snap
from tests.conftest import REPO
from transforms.publishing.dbt_sources import export_standards, load_sources


def test_dbt_models_are_published_with_the_snapshot(built_root, index):
    snapshot = snap.load(built_root)
    standards = pl.read_parquet(snapshot.table_path("standards"))
    documents = {d["document_key"]: d for d in index.documents()}
    assert set(standards["document_key"]) == set(documents)
    assert documents["lsa-230-audit-documentation"]["number"] == "LSA 230"
    assert documents["lrb-chapter-4-client-assets"]["number"] == "LRB"
    assert documents["lrb-chapter-4-client-assets"]["version"] == "2026.1"
    assert all(d["paragraph_count"] == d["chunk_count"] for d in documents.values())
    # The job ran dbt's models in its own database under the work folder.
    with duckdb.connect(str(built_root / "work" / "models.duckdb"), read_only=True) as con:
        tables = {
            row[0] for row in con.sql("select table_name from information_schema.tables").fetchall()
        }
    assert {"document_stats", "section_stats", "graph_by_document"} <= tables


def _dbt_build(tmp_path, tables, database=None) -> subprocess.CompletedProcess:
    """`dbt build --project-dir dbt_project` from the repository root, as a user runs it, after
    loading the build's tables into the models' database (transforms.publishing.dbt_sources)."""
    database = database or tmp_path / "models.duckdb"
    load_sources(tables, database)
    env = {**os.environ, "LEXKB_DBT_DATABASE": str(database)}
    env["DBT_SEND_ANONYMOUS_USAGE_STATS"] = "false"
    command = [str(REPO / ".venv/bin/dbt"), "build", "--project-dir", "dbt_project"]
    command += ["--target-path", str(tmp_path / "target"), "--log-path", str(tmp_path / "logs")]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)


def test_dbt_build_on_its_own(built_root, tmp_path):
    tables = tmp_path / "tables"
    shutil.copytree(built_root / "work" / "tables", tables)
    (tables / "standards.parquet").unlink()
    database = tmp_path / "models.duckdb"
    result = _dbt_build(tmp_path, tables, database)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "ERROR=0" in result.stdout
    export_standards(database, tables)
    assert pl.read_parquet(tables / "standards.parquet").height == 5
    with duckdb.connect(str(database), read_only=True) as con:
        summary = pl.from_arrow(con.sql("select * from graph_by_document").arrow())
    edges = pl.read_parquet(tables / "edges.parquet")
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


def test_a_failing_dbt_test_is_reported(built_root, tmp_path):
    tables = tmp_path / "tables"
    shutil.copytree(built_root / "work" / "tables", tables)
    edges = pl.read_parquet(tables / "edges.parquet")
    edges.with_columns(pl.lit("sideways").alias("reference_type")).write_parquet(
        tables / "edges.parquet"
    )
    result = _dbt_build(tmp_path, tables)
    assert result.returncode != 0
    assert "accepted_values_stg_edges_reference_type" in result.stdout


def _broken_edges(tables) -> None:
    edges = pl.read_parquet(tables / "edges.parquet")
    edges.with_columns(pl.lit("sideways").alias("reference_type")).write_parquet(
        tables / "edges.parquet"
    )


def test_dbt_gives_the_same_verdicts_in_its_worker_and_in_this_process(built_root, tmp_path):
    """`lexkb build` runs dbt in a warm worker (transforms.publishing.dbt_runner); a run from the Dagster UI
    runs it in its own process. Both must build and test the same nodes the same way, here on a
    table with a broken edge type, so a failure must come back from either."""
    from transforms.publishing import dbt_runner

    tables = tmp_path / "tables"
    shutil.copytree(built_root / "work" / "tables", tables)
    _broken_edges(tables)
    outcomes = {}
    for place in ("here", "worker"):
        (tmp_path / place).mkdir()
        database = tmp_path / place / "models.duckdb"  # the name the manifest's relations use
        run = dbt_runner.worker.run if place == "worker" else (lambda task, *a: task(*a))
        outcomes[place] = run(
            dbt_runner._build, str(tables), str(database), str(tmp_path / place / "target")
        )
        if place == "here":
            dbt_runner.worker.start()
    assert dbt_runner.worker.run(os.getpid) != os.getpid()
    here, there = outcomes["here"], outcomes["worker"]
    assert not here.success and not there.success
    verdicts = {(r.name, r.resource_type, r.status, r.failures) for r in here.results}
    assert verdicts == {(r.name, r.resource_type, r.status, r.failures) for r in there.results}
    failed = {r.name for r in here.results if not r.passed}
    assert any(name.startswith("accepted_values_stg_edges_reference_type") for name in failed)
    assert len(here.results) == 31 and sum(r.resource_type == "model" for r in here.results) == 8


def test_an_early_dbt_run_is_collected_only_while_its_inputs_are_unchanged(built_root, tmp_path):
    """The build starts dbt as soon as its tables are staged and collects that run in the dbt
    step (transforms.publishing.dbt_runner.start_early). A table rewritten in between must be run again:
    here the early run saw sound edges, and the collected outcome must see the broken ones."""
    from transforms.publishing import dbt_runner

    dbt_runner.worker.start()
    tables, database, target = tmp_path / "tables", tmp_path / "models.duckdb", tmp_path / "t"
    shutil.copytree(built_root / "work" / "tables", tables)

    dbt_runner.start_early(tables, database, target)
    early = dbt_runner._early[1]
    collected = dbt_runner.build(tables, database, target)
    assert collected is early.result() and collected.success
    assert dbt_runner._early is None

    dbt_runner.start_early(tables, database, target)
    assert dbt_runner._early[1].result().success  # the early run read sound edges
    _broken_edges(tables)
    collected = dbt_runner.build(tables, database, target)
    assert not collected.success
    failed = {r.name for r in collected.results if not r.passed}
    assert any(name.startswith("accepted_values_stg_edges_reference_type") for name in failed)


def test_dbt_starts_early_after_its_last_input():
    """The hook starts dbt when `citation_edges` succeeds: that must be the last asset dbt reads,
    and it must run before the steps dbt does not need, and dbt's own step after them."""
    import dagster as dg

    from pipelines.dbt import LAST_INPUT, dbt_models
    from pipelines.definitions import defs

    graph = defs.resolve_asset_graph()
    inputs = set().union(*(graph.get(key).parent_keys for key in dbt_models.keys))
    inputs -= set(dbt_models.keys)
    assert inputs == {dg.AssetKey("search_tables"), dg.AssetKey(LAST_INPUT)}
    assert dg.AssetKey("search_tables") in graph.get(dg.AssetKey(LAST_INPUT)).parent_keys
    plan = defs.resolve_job_def("build_index")
    priority = {
        node.name: int(node.tags.get("dagster/priority", 0)) for node in plan.graph.node_defs
    }
    assert priority[LAST_INPUT] > priority["chunk_embeddings"] > priority[dbt_models.op.name]
