"""The partitioned build (pipelines.partitioned): the sample corpus built in parts, in-process
and on a real local Dask cluster of two worker processes, answers exactly as the one-process
build of the same sources; a rebuild after one file changed redoes only that file's part."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from lexkb import Index
from pipelines.in_process import run_build
from tests.conftest import CORPUS
from tests.support.dask_cluster import two_workers
from tests.support.same_answers import assert_same_rankings, unversioned

pytestmark = pytest.mark.build

# Parts of at most this many chunks split the sample's five documents over four parts.
PART_CHUNKS = 20


def same_answers(one: Index, parted: Index) -> None:
    """Every search mode ranks the same chunks with the same scores, and lookups agree."""
    assert parted.snapshot.sharded and not one.snapshot.sharded
    assert one.tables.chunks["chunk_id"].equals(parted.tables.chunks["chunk_id"])
    assert_same_rankings(one, parted)
    for ref in ("section 7", "Rule 4.2"):
        assert unversioned(one.get(ref).to_dict()) == unversioned(parted.get(ref).to_dict())


@pytest.fixture(scope="module")
def parted_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("parted")
    report = run_build([CORPUS], root, parts=PART_CHUNKS)
    assert report.published_new and report.chunks > 0
    return root


def test_a_build_in_parts_answers_as_one_build(index: Index, parted_root: Path) -> None:
    from transforms.parts import merge
    from transforms.parts.plan import load_plan
    from transforms.publishing.workdir import WorkDir

    parted = Index.open(parted_root)
    plan, _ = load_plan(WorkDir(parted_root))
    assert len(parted.snapshot.shards) == len(plan.parts) >= 3
    # Runs of whole documents in the sources' order, each within the bound unless one document
    # alone is larger.
    assert [d for p in plan.parts for d in p.documents] == index.tables.documents[
        "document_id"
    ].to_list()
    assert all(p.chunks <= PART_CHUNKS or len(p.documents) == 1 for p in plan.parts)
    same_answers(index, parted)
    # Citations from one part to another were resolved by the merge, to the same edges.
    assert merge.staged(merge.merged_path(WorkDir(parted_root))).crossing > 0
    assert parted.tables.edges.equals(index.tables.edges)
    assert parted.tables.documents.equals(index.tables.documents)


def test_a_rebuild_redoes_only_the_changed_part(tmp_path: Path) -> None:
    sources = tmp_path / "corpus"
    shutil.copytree(CORPUS, sources)
    root = tmp_path / "root"
    first = run_build([sources], root, embedder="none", parts=PART_CHUNKS)
    changed = sources / "records-retention-act.txt"
    changed.write_text(
        changed.read_text(encoding="utf-8") + "\n\nThis paragraph was added later.\n",
        encoding="utf-8",
    )
    second = run_build([sources], root, embedder="none", parts=PART_CHUNKS)
    assert second.version != first.version
    from transforms.parts.part_tables import REPORT_FILE, part_path
    from transforms.parts.plan import load_plan
    from transforms.publishing.workdir import WorkDir

    plan, _ = load_plan(WorkDir(root))
    rebuilt = [
        p.name
        for p in plan.parts
        if (part_path(WorkDir(root), p.name) / REPORT_FILE).stat().st_mtime_ns
        > (root / "snapshots" / first.version / "manifest.json").stat().st_mtime_ns
    ]
    holder = next(p.name for p in plan.parts if "records-retention-act.txt" in p.sources)
    assert rebuilt == [holder]
    index = Index.open(root)
    assert index.search("added later", k=1, mode="keyword").hits[0].document_key == (
        "records-retention-act"
    )


def test_the_parts_run_on_a_dask_cluster(tmp_path: Path, index: Index) -> None:
    from pipelines.distributed import dask_parts_job, run_on_dask

    root = tmp_path / "root"
    settings = {"config": {"sources": [str(CORPUS)], "root": str(root), "part_chunks": PART_CHUNKS}}
    with two_workers() as cluster, dg.instance_for_test(temp_dir=str(tmp_path)) as instance:
        workers = cluster.workers
        result = run_on_dask(dask_parts_job, cluster.address, {"settings": settings}, instance)
        assert result.success
        starts = [e for e in result.all_events if e.event_type_value == "STEP_START"]
        assert {e.step_key for e in starts} >= {"index_parts", "published_parts"}
        assert {e.pid for e in starts} <= workers and os.getpid() not in workers
        parts = result.asset_materializations_for_node("index_parts")[0].metadata
        # Four parts, each a Dask task, spread over both worker processes.
        assert parts["parts"].value >= 3 and parts["processes"].value == 2
    parted = Index.open(root)
    same_answers(index, parted)
    merged = pl.read_parquet(parted.snapshot.table_path("edges"))
    assert merged.equals(index.tables.edges)
