"""Approximate candidates (lexkb/core/store/ann.py): a snapshot past the threshold carries an HNSW graph that
`Index.open` maps, and searches through it return what exact search returns on a corpus small
enough for the graph to be exhaustive; selective filters search exactly."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from lexkb.core.store import ann
from lexkb.index import Index
from tests.conftest import CORPUS
from tests.support.rankings import assert_same_ranking

pytestmark = pytest.mark.build

QUESTIONS = [
    "how long must client money reconciliation records be kept",
    "what must the auditor document",
    "who may access personal data",
    "fees charged for custody",
]


@pytest.fixture(scope="module")
def graph_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from pipelines.in_process import run_build

    sources = tmp_path_factory.mktemp("ann-sources")
    for name in (
        "records-retention-act.txt",
        "data-handling-regulation.md",
        "lrb-chapter-4-client-assets.docx",
    ):
        shutil.copy(CORPUS / name, sources / name)
    root = tmp_path_factory.mktemp("ann-root")
    patch = pytest.MonkeyPatch()
    patch.setenv("LEXKB_ANN_MIN_VECTORS", "1")
    try:
        run_build([sources], root, embedder="local")
    finally:
        patch.undo()
    return root


def test_the_graph_is_published_and_mapped(graph_root: Path) -> None:
    index = Index.open(graph_root)
    assert ann.FILE in index.snapshot.manifest["files"]
    assert index.dense.ann is not None


@pytest.mark.parametrize("mode", ["hybrid", "vector"])
def test_graph_candidates_match_exact_search(graph_root: Path, mode: str) -> None:
    graph = Index.open(graph_root)
    exact = Index.open(graph_root)
    exact.dense.ann = None
    for question in QUESTIONS:
        found = graph.search(question, k=5, mode=mode, min_relevance=0.0)
        truth = exact.search(question, k=5, mode=mode, min_relevance=0.0)
        assert_same_ranking(found.hits, truth.hits)


def test_scoring_some_rows_equals_scoring_all(graph_root: Path) -> None:
    index = Index.open(graph_root)
    vector = index.dense.query_vector(QUESTIONS[0])
    rows = np.arange(len(index))
    # Rows with lines among them: their score is the best of the whole and its lines.
    assert index.dense.line_owners.size
    assert np.allclose(
        index.dense.cosine_rows(vector, rows), index.dense_scores(QUESTIONS[0]), atol=1e-5
    )
    picked = np.sort(np.random.default_rng(3).choice(rows, size=min(7, rows.size), replace=False))
    assert np.allclose(
        index.dense.cosine_rows(vector, picked),
        index.dense_scores(QUESTIONS[0])[picked],
        atol=1e-5,
    )


def test_below_the_threshold_there_is_no_graph(index) -> None:
    assert ann.FILE not in index.snapshot.manifest["files"] and index.dense.ann is None


def test_graph_keys_map_back_to_the_rows_that_own_them(graph_root: Path) -> None:
    """Line vectors are stored under keys past the chunk rows; a near line must nominate the
    paragraph that owns it. With a shallow search the graph's rows are the exact top rows."""
    index = Index.open(graph_root)
    for question in QUESTIONS:
        vector = index.dense.query_vector(question)
        exact = index.dense_scores(question)
        top = set(np.argsort(-exact)[:3].tolist())
        nominated = set(index.dense.ann.rows(vector, depth=12).tolist())
        assert top <= nominated
        assert len(nominated) <= 12
    # Every vector is reachable: a search as deep as the graph nominates every row.
    every = len(index) + len(index.dense.line_vectors)
    assert index.dense.ann.rows(vector, depth=every).tolist() == list(range(len(index)))
    # A line's own text nominates its paragraph through the line's key.
    row = int(index.dense.line_owners[0])
    first = index.dense.line_vectors[index.dense.line_starts[0]]
    assert row in index.dense.ann.rows(np.asarray(first), depth=1).tolist()


def test_a_forked_child_searches_with_threads_of_its_own(graph_root: Path) -> None:
    """The graph's search runs in the process's worker threads; a child forked after the
    parent's first hybrid search (a server forking its workers) starts its own instead of
    waiting on threads it does not have."""
    import multiprocessing

    index = Index.open(graph_root)
    question = QUESTIONS[0]
    expected = [h.chunk_id for h in index.search(question, mode="hybrid").hits]
    context = multiprocessing.get_context("fork")
    reader, writer = context.Pipe(duplex=False)

    def child() -> None:
        writer.send([h.chunk_id for h in index.search(question, mode="hybrid").hits])

    process = context.Process(target=child, daemon=True)
    process.start()
    try:
        assert reader.poll(60), "the forked child's hybrid search did not finish"
        assert reader.recv() == expected
    finally:
        process.kill()
        process.join(10)
    assert expected
