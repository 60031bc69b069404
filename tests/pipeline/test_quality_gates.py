"""Blocking checks: a build whose tables are unsound publishes nothing and CURRENT stays put."""

from __future__ import annotations

import dagster as dg
import polars as pl
import pytest

from assets.resources import EmbedderSettings, LexkbSettings
from lexkb import Index
from lexkb.core.store import snapshot as snap
from pipelines.definitions import defs
from pipelines.in_process import failed_checks, run_build


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


@pytest.mark.build
@pytest.mark.parametrize(
    ("corrupt", "check"),
    [
        (_drop_a_paragraph, "documents_are_sound"),
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
            "settings": LexkbSettings(sources=[str(corpus_copy)], root=str(root)),
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


@pytest.mark.build
def test_a_file_that_breaks_is_quarantined_and_the_rest_publishes(corpus_copy, tmp_path):
    root = tmp_path / "root"
    good = run_build([corpus_copy], root)
    pdf = corpus_copy / "lsa-230-audit-documentation.pdf"
    pdf.write_bytes(pdf.read_bytes()[: len(pdf.read_bytes()) // 3])
    report = run_build([corpus_copy], root)
    assert not report.blocked and report.published_new and report.version != good.version
    assert "truncated PDF" in report.quarantined["lsa-230-audit-documentation.pdf"]
    index = Index.open(root)
    keys = {d["document_key"] for d in index.documents()}
    assert "lsa-230-audit-documentation" not in keys and len(keys) == 4
    quarantine = pl.read_parquet(index.snapshot.table_path("quarantine"))
    assert quarantine["source_name"].to_list() == ["lsa-230-audit-documentation.pdf"]


@pytest.mark.build
def test_one_implausible_document_is_quarantined_not_the_build(corpus_copy, tmp_path):
    # Ten megabytes without a line break used to fail the paragraph-length check and block
    # every publish; it is cut into paragraphs now. A file of only bullets and digits still
    # makes no paragraph worth indexing and is quarantined by the per-document check.
    (corpus_copy / "one-line.txt").write_text("The rule applies. " * 30000, encoding="utf-8")
    (corpus_copy / "dots.md").write_text("\n\n".join(["1."] * 40), encoding="utf-8")
    report = run_build([corpus_copy], tmp_path / "root", embedder="none")
    assert not report.blocked and report.documents == 6
    assert report.quarantined["dots.md"].startswith(("failed the check", "no paragraph"))
    chunks = pl.read_parquet(snap.load(tmp_path / "root").table_path("chunks"))
    lengths = chunks.filter(
        (pl.col("document_key") == "one-line") & (pl.col("chunk_level") == "paragraph")
    )["content"].str.len_chars()
    assert lengths.len() > 100 and lengths.max() <= 4000


def test_reference_checks_name_the_rows_that_dangle():
    from transforms.publishing.table_checks import check_edges, check_sections

    chunks = pl.DataFrame({"chunk_id": ["a", "b"]})
    edges = pl.DataFrame(
        {
            "source_chunk_id": ["a", "b", "x"],
            "target_chunk_id": ["b", None, "a"],
            "reference_text": ["Rule 1", "FSMR 2", "Rule 3"],
            "reference_type": ["internal", "outside", "internal"],
            "weight": [1.0, 0.5, 1.0],
        }
    )
    result = check_edges(edges, chunks)
    failed = {e.description: e for e in result.failures()}
    assert list(failed) == ["every source chunk exists"]
    assert failed["every source chunk exists"].failing_rows[0]["reference_text"] == "Rule 3"
    sections = pl.DataFrame(
        {
            "section_id": ["s1", "s2", "s3"],
            "document_id": ["d", "d", "d"],
            "parent_id": [None, "s1", "s9"],
            "title": ["One", "Two", "Three"],
        }
    )
    failed = check_sections(sections).failures()
    assert [e.description for e in failed] == ["every parent section exists"]
    assert failed[0].failing_rows == [{"section_id": "s3", "document_id": "d", "title": "Three"}]


def test_checks_run_in_their_worker_with_the_same_verdicts():
    import os

    from transforms.publishing import checks_worker
    from transforms.publishing.table_checks import check_sections

    sections = pl.DataFrame(
        {
            "section_id": ["s1", "s2"],
            "document_id": ["d", "d"],
            "parent_id": [None, "s9"],
            "title": ["One", "Two"],
        }
    )
    checks_worker.start()
    assert checks_worker.started()
    assert checks_worker.run(os.getpid) != os.getpid()
    there = checks_worker.run(check_sections, sections)
    here = check_sections(sections)
    assert there == here and not there.success
