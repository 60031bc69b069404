"""The default local embedder (MiniLM int8 on onnxruntime) and the hybrid search built on it."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from lexkb import Index, embedders
from lexkb import snapshot as snap
from lexkb.embedders import EmbedderError, LocalEmbedder, VoyageEmbedder
from lexkb.index import FUSION_DEPTH, _fuse
from pipelines.resources import EmbedderSettings
from tests.voyage_fake import KEY
from transforms.embeddings import paragraph_lines

PASSAGES = [
    "A PFP Operator offering an exit facility must tell its clients how the facility works.",
    "Client money must be held in a segregated account at an eligible bank.",
    "The auditor shall document the reconciliations inspected.",
    "Records must be kept for six years from the date they were made.",
]


@pytest.fixture(scope="module")
def local() -> LocalEmbedder:
    return LocalEmbedder()


def test_vectors_are_unit_length_and_keep_input_order(local):
    batched = local.embed_documents(PASSAGES)
    assert batched.shape == (4, 384) and batched.dtype == np.float32
    assert np.allclose(np.linalg.norm(batched, axis=1), 1.0, atol=1e-5)
    # Texts are batched by length; each vector must still land on its own text.
    one_by_one = np.vstack([local.embed_documents([p]) for p in PASSAGES])
    assert np.allclose(batched, one_by_one, atol=1e-4)
    assert np.allclose(local.embed_query(PASSAGES[2]), batched[2], atol=1e-4)


def test_a_paraphrased_question_finds_its_passage(local):
    vectors = local.embed_documents(PASSAGES)
    for question, expected in (
        ("what must a platform operator disclose about leaving an investment early", 0),
        ("where should a firm keep its customers' funds", 1),
        ("how long do we need to retain our files", 3),
    ):
        assert int(np.argmax(vectors @ local.embed_query(question))) == expected


def test_a_model_file_that_does_not_match_its_hash_is_refused(tmp_path, monkeypatch):
    model, tokenizer, sha256 = embedders.local_model_files()
    damaged = tmp_path / "model.onnx"
    data = bytearray(model.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    monkeypatch.setattr(embedders, "local_model_files", lambda: (damaged, tokenizer, sha256))
    with pytest.raises(EmbedderError, match="does not match its published SHA-256"):
        LocalEmbedder().embed_query("client money")


def test_settings_choose_the_embedder(monkeypatch):
    monkeypatch.delenv("VOYAGE_API_KEY", raising=False)
    assert isinstance(EmbedderSettings().build(), LocalEmbedder)
    assert EmbedderSettings(provider="none").build() is None
    with pytest.raises(EmbedderError, match="VOYAGE_API_KEY is not set"):
        EmbedderSettings(provider="voyage").build()
    monkeypatch.setenv("VOYAGE_API_KEY", KEY)
    assert isinstance(EmbedderSettings().build(), VoyageEmbedder)
    assert isinstance(EmbedderSettings(provider="local").build(), LocalEmbedder)
    with pytest.raises(ValueError, match="unknown embedder provider"):
        EmbedderSettings(provider="openai").build()


def test_the_default_build_is_hybrid_with_the_local_model(built_root, index, monkeypatch):
    monkeypatch.delenv("VOYAGE_API_KEY", raising=False)
    assert snap.load(built_root).manifest["embedder"]["name"] == LocalEmbedder.name
    results = index.search("how long must a firm keep its records", k=5)
    assert results.mode == "hybrid" and not results.warnings
    assert any(h.ref == "4.4.1" for h in results)
    assert (
        Index.open(built_root, embedder=LocalEmbedder()).query_embedder.name == LocalEmbedder.name
    )
    with pytest.raises(snap.SnapshotError, match="a query embedder voyage:voyage-law-2"):
        monkeypatch.setenv("VOYAGE_API_KEY", KEY)
        Index.open(built_root, embedder=VoyageEmbedder())


def test_fusion_standardises_each_ranking_over_their_candidates():
    keyword = np.zeros(1000)
    dense = np.zeros(1000)
    keyword[:300] = np.linspace(10, 1, 300)  # row 0 best by keyword
    dense[:] = np.linspace(0, 1, 1000)  # row 999 best by vector
    dense[5] = 2.0  # row 5: best by vector and near the top by keyword
    fused = _fuse(keyword, dense)
    candidates = np.flatnonzero(fused > 0)
    expected = set(range(FUSION_DEPTH)) | set(range(801, 1000)) | {5}
    assert set(candidates.tolist()) == expected
    assert int(np.argmax(fused)) == 5
    # Outside both candidate lists nothing scores, however good its other score.
    assert fused[250] == 0 and keyword[250] > 0


def test_only_paragraphs_of_several_substantial_lines_are_split():
    listed = "A firm must give:\n(a)\tthe fees it charges for custody;\n(b)\tits complaints policy."
    assert paragraph_lines(listed) == [
        "(a)\tthe fees it charges for custody;",
        "(b)\tits complaints policy.",
    ]
    assert paragraph_lines("One line of text that is long enough.") == []
    assert paragraph_lines("Heading\n(a)\nThe only line of substance here.") == []


def test_a_list_paragraph_scores_its_best_line(built_root, index):
    lines = pl.read_parquet(snap.load(built_root).table_path("line_embeddings"))
    chunk_id = lines["chunk_id"][0]
    hit = index.lookup(chunk_id).hit
    line = paragraph_lines(hit.text)[1]
    scores = index.dense_scores(line)
    whole = float(
        index.query_embedder.embed_documents([hit.text])[0] @ index.query_embedder.embed_query(line)
    )
    # The paragraph scores as its line (the same text: cosine 1), well above its whole vector.
    assert scores[index._by_id[chunk_id]] == pytest.approx(1.0, abs=1e-3)
    assert whole < 0.95


def test_vectors_are_mapped_from_raw_arrays_and_match_the_parquet_tables(built_root, index):
    snapshot = snap.load(built_root, verify=True)
    assert {"vectors.npy", "line_vectors.npy"} <= set(snapshot.manifest["files"])
    assert isinstance(index._vectors, np.memmap) and not index._vectors.flags.writeable
    # The same snapshot without its raw arrays decodes the Parquet tables instead.
    files = {
        name: entry
        for name, entry in snapshot.manifest["files"].items()
        if not name.endswith(".npy")
    }
    decoded = Index(snap.Snapshot(snapshot.path, {**snapshot.manifest, "files": files}))
    assert not isinstance(decoded._vectors, np.memmap)
    assert np.array_equal(np.asarray(index._vectors), decoded._vectors)
    assert np.array_equal(np.asarray(index._line_vectors), decoded._line_vectors)
    question = "how long must reconciliation records be kept"
    assert [h.chunk_id for h in index.search(question)] == [
        h.chunk_id for h in decoded.search(question)
    ]
