"""The Dagster jobs on the sample corpus: snapshot contract, incremental rebuilds, bad input."""

import json
import subprocess
import sys

import dagster as dg
import polars as pl
import pytest

from assets.partitions import documents_partitions
from assets.resources import EmbedderSettings, LexkbSettings
from lexkb import Index
from lexkb.core.store import snapshot as snap
from lexkb.core.store.schema import TABLES
from pipelines.definitions import defs
from pipelines.in_process import materialized_metadata, run_build
from tests.conftest import CORPUS, REPO
from transforms.edges.resolve import build_edges
from transforms.indexing.bm25 import build_bm25
from transforms.publishing.workdir import WorkDir

pytestmark = pytest.mark.build


def _chunks(root) -> pl.DataFrame:
    return pl.read_parquet(snap.load(root).table_path("chunks"))


def test_snapshot_has_every_table_and_a_verifiable_manifest(built_root):
    loaded = snap.load(built_root, verify=True)
    manifest = loaded.manifest
    assert (built_root / "CURRENT").read_text().strip() == manifest["snapshot_version"]
    for name in ("documents", "sections", "chunks", "bm25_terms", "bm25_postings"):
        table = pl.read_parquet(loaded.table_path(name))
        assert table.height == manifest["tables"][name]["rows"] > 0
    assert "index.duckdb" in manifest["files"]
    assert manifest["bm25"]["tokenizer"] and manifest["sources"]
    documents = {p.name for p in CORPUS.iterdir() if p.name != "catalog.yaml"}
    assert {s["key"] for s in manifest["sources"]} == documents
    # The PDF is kept in the snapshot (its pages are shown from it); no source names a path.
    pdfs = [s for s in manifest["sources"] if s["format"] == "pdf"]
    assert pdfs and all(s["file"] in manifest["files"] for s in pdfs)
    assert not any("path" in s for s in manifest["sources"])


def test_duckdb_file_exposes_the_same_tables(built_root):
    import duckdb

    loaded = snap.load(built_root)
    con = duckdb.connect(str(loaded.path / "index.duckdb"), read_only=True)
    count = con.execute("SELECT count(*) FROM chunks").fetchone()[0]
    refs = con.execute("SELECT ref FROM chunks WHERE ref = 'Article 5(1)'").fetchall()
    tables = {name for (name,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    con.close()
    # Every table but the vectors, which SQL reads from their Parquet files.
    assert tables == set(TABLES) - {"embeddings", "line_embeddings"}
    assert count == loaded.manifest["tables"]["chunks"]["rows"]
    assert refs == [("Article 5(1)",)]


def test_chunks_have_contract_columns(built_root):
    chunks = _chunks(built_root)
    assert chunks["chunk_id"].n_unique() == chunks.height
    assert chunks.filter(pl.col("content").str.strip_chars() == "").height == 0
    pdf = chunks.filter(pl.col("document_key") == "lsa-230-audit-documentation")
    assert pdf["page"].null_count() == 0
    assert set(chunks["document_key"]) == {
        "lsa-230-audit-documentation",
        "lrb-chapter-4-client-assets",
        "data-handling-regulation",
        "records-retention-act",
        "LKB-FAQ",
    }


def test_changed_file_reparses_only_its_own_partition(corpus_copy, tmp_path):
    root = tmp_path / "root"
    instance = dg.DagsterInstance.ephemeral()
    first = run_build([corpus_copy], root, instance=instance)
    work = WorkDir(root)
    keys = [p.name for p in corpus_copy.iterdir() if p.name != "catalog.yaml"]
    written = {k: (work.part_dir(k) / "chunks.parquet").stat().st_mtime_ns for k in keys}
    md = corpus_copy / "data-handling-regulation.md"
    md.write_text(md.read_text().replace("ten years", "twelve years"))
    settings = LexkbSettings(sources=[str(corpus_copy)], root=str(root))
    defs.resolve_job_def("scan_sources").execute_in_process(
        instance=instance, resources={"settings": settings}
    )
    result = defs.resolve_job_def("build_index").execute_in_process(
        instance=instance,
        resources={"settings": settings},
        tags={
            "dagster/asset_partition_range_start": "client-assets-faq.jsonl",
            "dagster/asset_partition_range_end": "records-retention-act.txt",
        },
    )
    elements = materialized_metadata(result, "document_elements")
    assert elements["parsed"] == 1 and elements["cached"] == 4
    # Only the changed file's structure was recovered again; the others' parts were reused.
    rewritten = {
        k for k in keys if (work.part_dir(k) / "chunks.parquet").stat().st_mtime_ns != written[k]
    }
    assert rewritten == {md.name}
    # Its changed paragraph (and the section holding it) were tokenized and read for citations
    # again; every other text's terms and readings were kept from the first build.
    assert materialized_metadata(result, "search_tables")["texts_tokenized"] == 2
    assert materialized_metadata(result, "citation_edges")["paragraphs_read"] == 1
    published = materialized_metadata(result, "published_snapshot")
    assert published["published_new"] and published["version"] != first.version
    # What was kept gives the tables a build from nothing gives.
    snapshot = snap.load(root)
    tables = {n: pl.read_parquet(snapshot.table_path(n)) for n in ("chunks", "documents")}
    fresh = build_edges(tables["chunks"], tables["documents"], snapshot.manifest["aliases"])
    published_edges = pl.read_parquet(snapshot.table_path("edges"))
    assert sorted(published_edges.select(fresh.columns).rows(), key=str) == sorted(
        fresh.rows(), key=str
    )
    _, postings = build_bm25(
        tables["chunks"]["content"].to_list(), groups=tables["chunks"]["chunk_level"].to_list()
    )
    published_postings = pl.read_parquet(snapshot.table_path("bm25_postings"))
    assert published_postings.select(postings.columns).equals(postings)
    chunks = _chunks(root)
    changed = chunks.filter(pl.col("content").str.contains("twelve years"))
    assert changed["chunk_level"].sort().to_list() == ["paragraph", "section"]
    # The chart in the UI counts every paragraph once.
    chart = materialized_metadata(result, "search_tables")["paragraph_length_chart"]
    counted = sum(int(line.split("|")[2]) for line in chart.splitlines()[2:])
    assert counted == chunks.filter(pl.col("chunk_level") == "paragraph").height


def test_broken_file_is_skipped_and_reported_while_the_rest_publishes(corpus_copy, tmp_path):
    (corpus_copy / "scanned.pdf").write_bytes(b"%PDF-1.4 garbage")
    report = run_build([corpus_copy], tmp_path / "root")
    assert set(report.quarantined) == {"scanned.pdf"}
    assert "truncated PDF" in report.quarantined["scanned.pdf"]
    snapshot = snap.load(tmp_path / "root", verify=True)
    assert "scanned.pdf" in snapshot.manifest["quarantined"]
    quarantine = pl.read_parquet(snapshot.table_path("quarantine"))
    assert quarantine.select("source_name", "stage").rows() == [("scanned.pdf", "parse")]
    assert quarantine["kind"][0] in ("damaged_pdf", "truncated")
    assert _chunks(tmp_path / "root")["document_key"].n_unique() == 5


def test_removed_file_drops_its_partition_and_chunks(corpus_copy, tmp_path):
    root = tmp_path / "root"
    instance = dg.DagsterInstance.ephemeral()
    run_build([corpus_copy], root, instance=instance)
    (corpus_copy / "records-retention-act.txt").unlink()
    run_build([corpus_copy], root, instance=instance)
    assert "records-retention-act.txt" not in instance.get_dynamic_partitions(
        documents_partitions.name
    )
    assert "records-retention-act" not in set(_chunks(root)["document_key"])


def test_partition_by_partition_materialization_gives_the_same_chunks(built_root, tmp_path):
    """What a person does in the UI: scan, materialize each partition on its own, then the index."""
    root = tmp_path / "ui"
    instance = dg.DagsterInstance.ephemeral()
    resources = {
        "settings": LexkbSettings(sources=[str(CORPUS)], root=str(root)),
        "embedder": EmbedderSettings(),
    }
    assets = defs.assets
    dg.materialize(assets, instance=instance, resources=resources, selection="source_files")
    for key in instance.get_dynamic_partitions(documents_partitions.name):
        dg.materialize(
            assets,
            instance=instance,
            resources=resources,
            partition_key=key,
            selection=["document_elements", "document_chunks"],
        )
    dg.materialize(
        assets,
        instance=instance,
        resources=resources,
        selection=dg.AssetSelection.assets("published_snapshot").upstream()
        - dg.AssetSelection.assets("source_files", "document_elements", "document_chunks"),
    )
    ours = _chunks(root).select("chunk_id", "content_hash", "ref")
    assert ours.equals(_chunks(built_root).select("chunk_id", "content_hash", "ref"))


def test_workspace_loads_in_dagster():
    result = subprocess.run(
        [str(REPO / ".venv/bin/dagster"), "definitions", "validate", "-w", "workspace.yaml"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={"DAGSTER_HOME": str(REPO / "dagster_home"), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr[-2000:]


def test_opening_and_searching_leaves_the_snapshot_untouched(built_root):
    """Services open snapshots read-only: nothing is created, changed or touched by a reader,
    except its lease (ROOT/leases/<version>), which tells pruning the snapshot is in use."""

    def state() -> dict:
        return {
            p: (p.stat().st_mtime_ns, p.stat().st_size)
            for p in built_root.rglob("*")
            if "leases" not in p.relative_to(built_root).parts
        }

    before = state()
    lease = built_root / "leases" / snap.load(built_root).version
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "lexkb.cli",
            "search",
            "client money",
            "--index",
            str(built_root),
            "--json",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout)["hits"]
    assert state() == before
    assert lease.is_file()
    snap.load(built_root, verify=True)


def test_catalog_and_sidecar_metadata(corpus_copy, tmp_path):
    (corpus_copy / "records-retention-act.meta.yaml").write_text(
        "title: Records Retention Act 2026\nshort_name: RRA\n", encoding="utf-8"
    )
    run_build([corpus_copy], tmp_path / "root")
    index = Index.open(tmp_path / "root")
    documents = {d["document_key"]: d for d in index.documents()}
    assert set(documents) == {
        "LKB-FAQ",
        "data-handling-regulation",
        "lrb-chapter-4-client-assets",
        "lsa-230-audit-documentation",
        "records-retention-act",
    }
    assert documents["records-retention-act"]["title"] == "Records Retention Act 2026"
    assert documents["records-retention-act"]["aliases"] == ["Records Retention Act"]
    assert index.get("RRA § 103(b)").hit.document_key == "records-retention-act"


def test_broken_catalog_is_reported_and_the_build_still_publishes(corpus_copy, tmp_path):
    (corpus_copy / "catalog.yaml").write_text("documents: [unclosed\n", encoding="utf-8")
    report = run_build([corpus_copy], tmp_path / "root")
    errors = snap.load(tmp_path / "root").manifest["metadata_errors"]
    assert list(errors) == [str(corpus_copy / "catalog.yaml")]
    assert "while parsing" in errors[str(corpus_copy / "catalog.yaml")]
    assert report.chunks > 0
    documents = {d["document_key"]: d for d in Index.open(tmp_path / "root").documents()}
    assert documents["lrb-chapter-4-client-assets"]["short_name"] is None


_DBT_SPECS = """
import json, re, sys
if sys.argv[1] == "with-dbt-core":
    import dbt.version  # dagster-dbt then imports dbt-core as it normally does
from pipelines.dbt import dbt_models
def metadata(spec):  # objects without a repr of their own print their address
    return sorted((k, re.sub("0x[0-9a-f]+", "", repr(v))) for k, v in spec.metadata.items())
print(json.dumps({
    "dbt_core_imported": "dbt.version" in sys.modules,
    "specs": sorted(
        repr((s.key, s.group_name, sorted(map(repr, s.deps)), sorted(s.tags.items()),
              sorted(s.kinds), metadata(s)))
        for s in dbt_models.specs
    ),
    "checks": sorted(repr((c.key, c.blocking, c.additional_deps)) for c in dbt_models.check_specs),
}))
"""


def test_dbt_assets_are_the_same_without_dbt_core_in_the_building_process():
    """pipelines.dbt imports dagster-dbt with dbt-core hidden (transforms.publishing.dbt_runner); the
    assets and checks it defines must be those it defines with dbt-core imported."""
    runs = {
        mode: json.loads(
            subprocess.run(
                [sys.executable, "-c", _DBT_SPECS, mode],
                capture_output=True,
                text=True,
                check=True,
                cwd=REPO,
            ).stdout.splitlines()[-1]
        )
        for mode in ("hidden", "with-dbt-core")
    }
    assert runs["hidden"]["dbt_core_imported"] is False
    assert runs["with-dbt-core"]["dbt_core_imported"] is True
    assert len(runs["hidden"]["specs"]) == 8 and len(runs["hidden"]["checks"]) > 10
    assert runs["hidden"]["specs"] == runs["with-dbt-core"]["specs"]
    assert runs["hidden"]["checks"] == runs["with-dbt-core"]["checks"]
