"""Blocking checks: a build whose tables are unsound publishes nothing and CURRENT stays put."""

from __future__ import annotations

import dagster as dg
import polars as pl
import pytest

from lexkb import Index
from lexkb import snapshot as snap
from pipelines.build import failed_checks, run_build
from pipelines.dbt import dbt_resource
from pipelines.definitions import defs
from pipelines.resources import EmbedderSettings, LexkbSettings


def _drop_a_paragraph(tables):
    chunks = pl.read_parquet(tables / "chunks.parquet")
    row = chunks["chunk_level"].to_list().index("paragraph")
    chunks.filter(pl.int_range(pl.len()) != row).write_parquet(tables / "chunks.parquet")


def _break_a_hash(tables):
    chunks = pl.read_parquet(tables / "chunks.parquet")
    chunks.with_columns(
        pl.when(pl.int_range(pl.len()) == 5)
        .then(pl.col("content") + " (altered)")
        .otherwise(pl.col("content"))
        .alias("content")
    ).write_parquet(tables / "chunks.parquet")


def _dangle_an_edge(tables):
    edges = pl.read_parquet(tables / "edges.parquet")
    edges.with_columns(
        pl.when(pl.int_range(pl.len()) == 0)
        .then(pl.lit("chk-does-not-exist"))
        .otherwise(pl.col("target_chunk_id"))
        .alias("target_chunk_id")
    ).write_parquet(tables / "edges.parquet")


def _lose_a_document(tables):
    documents = pl.read_parquet(tables / "documents.parquet")
    documents.filter(pl.col("document_key") != "records-retention-act").write_parquet(
        tables / "documents.parquet"
    )


def _give_a_section_line_vectors(tables):
    chunks = pl.read_parquet(tables / "chunks.parquet")
    section = chunks.filter(pl.col("chunk_level") == "section")["chunk_id"][0]
    lines = pl.read_parquet(tables / "line_embeddings.parquet")
    lines.with_columns(
        pl.when(pl.int_range(pl.len()) == 0)
        .then(pl.lit(section))
        .otherwise(pl.col("chunk_id"))
        .alias("chunk_id")
    ).write_parquet(tables / "line_embeddings.parquet")


@pytest.mark.parametrize(
    ("corrupt", "check"),
    [
        (_drop_a_paragraph, "documents_have_plausible_chunks"),
        (_break_a_hash, "chunks_are_sound"),
        (_dangle_an_edge, "edges_are_sound"),
        (_lose_a_document, "no_document_lost"),
        (_give_a_section_line_vectors, "embeddings_are_sound"),
    ],
)
def test_a_failed_blocking_check_stops_publishing(corpus_copy, tmp_path, corrupt, check):
    root = tmp_path / "root"
    good = run_build([corpus_copy], root)
    # What a person can do in the UI: the tables are built, something damages them, then the
    # checks and the publishing step run.
    corrupt(root / "work" / "tables")
    selection = dg.AssetSelection.assets(
        "published_snapshot"
    ) | dg.AssetSelection.checks_for_assets("search_tables", "citation_edges", "chunk_embeddings")
    result = dg.materialize(
        [*defs.assets, *defs.asset_checks],
        instance=dg.DagsterInstance.ephemeral(),
        resources={
            "lexkb": LexkbSettings(sources=[str(corpus_copy)], root=str(root)),
            "dbt": dbt_resource,
            "embedder": EmbedderSettings(),
        },
        selection=selection,
        raise_on_error=False,
    )
    assert not result.success
    assert check in failed_checks(result)
    assert "published_snapshot" not in {
        e.asset_key.path[-1] for e in result.get_asset_materialization_events()
    }
    assert (root / "CURRENT").read_text().strip() == good.version
    assert [p.name for p in (root / "snapshots").iterdir()] == [good.version]
    assert len(Index.open(root, verify=True)) == good.chunks


def test_a_source_that_stops_parsing_keeps_the_last_good_snapshot(corpus_copy, tmp_path):
    root = tmp_path / "root"
    good = run_build([corpus_copy], root)
    (corpus_copy / "records-retention-act.txt").write_bytes(b"\xff\xfe\x00broken")
    report = run_build([corpus_copy], root)
    assert report.blocked and "no_document_lost" in report.blocked
    assert "records-retention-act" in report.blocked["no_document_lost"]
    assert report.version == good.version and not report.published_new
    assert snap.load(root).version == good.version
