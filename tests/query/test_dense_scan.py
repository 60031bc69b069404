"""The int8 scan (lexkb/dense_scan.py) and the integer query model (lexkb/core/embed/integer_model.py):
candidates that hold the exact best rows, exact cosines for them, and searches through the scan
that return what exact search returns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lexkb import dense_scan
from lexkb.index import Index
from tests.support.rankings import assert_same_ranking

QUESTIONS = [
    "how long must client money reconciliation records be kept",
    "what must the auditor document",
    "who may access personal data",
    "fees charged for custody",
]


def _unit(rows: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((rows, 32)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def synthetic():
    """300 rows, every third with 1-4 lines, and the exact row scores for a few queries."""
    vectors = _unit(300, 1)
    counts = np.where(np.arange(300) % 3 == 0, np.arange(300) % 4 + 1, 0)
    owners = np.repeat(np.arange(300), counts)
    line_vectors = _unit(owners.size, 2)
    line_owners, line_starts = np.unique(owners, return_index=True)
    scan = dense_scan.Int8Scan(vectors, line_vectors, line_owners, line_starts)
    queries = _unit(5, 3)
    exact = []
    for query in queries:
        scores = vectors @ query
        np.maximum.at(scores, owners, line_vectors @ query)
        exact.append(scores)
    return scan, queries, exact


def test_int8_scores_are_close_to_the_true_cosines(synthetic) -> None:
    scan, queries, exact = synthetic
    for query, truth in zip(queries, exact, strict=True):
        scanned = scan.scan(query)
        assert np.abs(scanned.rows - truth).max() < 0.02


def test_candidates_hold_the_exact_best_rows_and_get_exact_cosines(synthetic) -> None:
    scan, queries, exact = synthetic
    keep = np.ones(300, dtype=bool)
    for query, truth in zip(queries, exact, strict=True):
        scanned = scan.scan(query)
        rows = scanned.best_rows(keep, depth=40)
        assert rows.size == 40 and np.all(np.diff(rows) > 0)
        assert set(np.argsort(-truth)[:20].tolist()) <= set(rows.tolist())
        assert np.allclose(scanned.exact(rows), truth[rows], atol=1e-5)


def test_candidates_respect_the_rows_kept(synthetic) -> None:
    scan, queries, exact = synthetic
    keep = np.arange(300) % 2 == 1
    rows = scan.scan(queries[0]).best_rows(keep, depth=25)
    assert rows.size == 25 and keep[rows].all()
    kept_truth = np.where(keep, exact[0], -np.inf)
    assert set(np.argsort(-kept_truth)[:10].tolist()) <= set(rows.tolist())


@pytest.fixture(scope="module")
def exact_hits(built_root: Path) -> dict:
    """Hits from exact search: the sample is below the scan's crossover."""
    index = Index.open(built_root)
    assert index.dense.int8_scan() is None
    return {
        (q, mode, doc): index.search(q, k=5, mode=mode, min_relevance=0.0, filters=filters).hits
        for q in QUESTIONS
        for mode in ("hybrid", "vector")
        for doc, filters in ((None, None), ("records", {"document": "records-retention-act"}))
    }


def test_searches_through_the_scan_match_exact_search(
    built_root: Path, exact_hits: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dense_scan, "MIN_VECTORS", 0)
    monkeypatch.setattr(dense_scan, "DEPTH", 20)
    index = Index.open(built_root)
    assert index.dense.int8_scan() is not None
    for (question, mode, doc), truth in exact_hits.items():
        filters = {"document": "records-retention-act"} if doc else None
        found = index.search(question, k=5, mode=mode, min_relevance=0.0, filters=filters).hits
        assert_same_ranking(found, truth)
        if doc:
            assert found and all(h.document_key == "records-retention-act" for h in found)


def test_the_integer_query_model_multiplies_in_integers_close_to_the_float_one() -> None:
    import onnx

    from lexkb.core.embed.embedders import LocalEmbedder, local_model_files
    from lexkb.core.embed.integer_model import integer_products

    model, _, _ = local_model_files()
    original = onnx.load(str(model))
    rewritten = onnx.load(str(model))
    integer_products(rewritten)
    float_products = sum(n.op_type == "MatMul" for n in original.graph.node)
    integer = sum(n.op_type == "MatMulInteger" for n in rewritten.graph.node)
    assert integer >= 30  # the six layers' weight products
    assert sum(n.op_type == "MatMul" for n in rewritten.graph.node) == float_products - integer
    texts = QUESTIONS + ["The Regulator may impose a fine on an Authorised Person."]
    floats = LocalEmbedder().embed_documents(texts)
    queries = np.array([LocalEmbedder(serving=True).embed_query(t) for t in texts])
    cosines = np.sum(floats * queries, axis=1)
    assert cosines.min() > 0.98 and cosines.max() < 0.99999  # close, and not the float model


def test_fused_attention_and_gelu_give_the_unfused_models_token_states() -> None:
    """On the float model, where nothing rounds between layers: with integer products a
    difference in the last bit can move an activation's uint8 rounding, so there the fused and
    unfused query vectors agree only to the integer model's own noise (mean cosine 0.99996, and
    the same 0.9925 to the float model's; BENCHMARKS.md "Fused attention and GELU"). A padded
    batch too: the fused attention must mask the padding as the export's Where did."""
    import onnx
    import onnxruntime
    from tokenizers import Tokenizer

    from lexkb.core.embed.embedders import LOCAL_HEADS, local_model_files, runtime_model
    from lexkb.core.embed.onnx_fusions import fuse_attention, fuse_gelu

    model, vocabulary, _ = local_model_files()
    served = runtime_model(model.read_bytes(), integer=True)
    ops = [n.op_type for n in onnx.load_from_string(served).graph.node]
    assert ops.count("MatMulInteger") >= 30
    assert ops.count("MultiHeadAttention") == 6 and ops.count("Gelu") == 6
    assert "Softmax" not in ops and "Erf" not in ops
    fused = onnx.load(str(model))
    assert fuse_attention(fused, LOCAL_HEADS) == 6 and fuse_gelu(fused) == 6
    tokenizer = Tokenizer.from_file(str(vocabulary))
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    encodings = tokenizer.encode_batch(QUESTIONS + ["Fines."])
    ids = np.array([e.ids for e in encodings])
    mask = np.array([e.attention_mask for e in encodings])
    assert mask.min() == 0  # the batch has padding
    feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    states = [
        onnxruntime.InferenceSession(m, providers=["CPUExecutionProvider"]).run(None, feed)[0]
        for m in (model.read_bytes(), fused.SerializeToString())
    ]
    real = mask.astype(bool)
    a, b = states[0][real], states[1][real]
    cosines = np.sum(a * b, axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    assert cosines.min() > 0.99999
