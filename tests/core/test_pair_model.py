"""The runtime of the models trained here (lexkb.core.judge.pairs): an int8 ONNX pair model is
read only when its SHA-256 is the one stated, reads "first [SEP] second" with the local
embedder's tokenizer, and answers each pair in the order asked, however the batch is grouped.

The graph here is written by hand with onnx's helper (no torch at test or run time): it takes the
same inputs as the trained models (`ids`, `segments`, `mask`) and returns, per pair, logits that
are the count of real tokens and of second-text tokens, so each answer can be checked exactly.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from lexkb.core.judge.pairs import PairModel, PairModelError


def _counting_model(path) -> str:
    from onnx import TensorProto, helper, save

    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "length"])
        for name in ("ids", "segments", "mask")
    ]
    output = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 2])
    nodes = [
        helper.make_node("Cast", ["mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Cast", ["segments"], ["segments_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["segments_f", "mask_f"], ["second_f"]),
        helper.make_node("ReduceSum", ["mask_f", "axes"], ["tokens"], keepdims=0),
        helper.make_node("ReduceSum", ["second_f", "axes"], ["second"], keepdims=0),
        helper.make_node("Unsqueeze", ["tokens", "axes"], ["tokens_2d"]),
        helper.make_node("Unsqueeze", ["second", "axes"], ["second_2d"]),
        helper.make_node("Concat", ["tokens_2d", "second_2d"], ["logits"], axis=1),
    ]
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
    graph = helper.make_graph(nodes, "counting", inputs, [output], initializer=[axes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    save(model, str(path))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_each_pair_is_answered_in_order_with_probabilities(tmp_path):
    path = tmp_path / "counting.onnx"
    sha = _counting_model(path)
    pairs = [("a claim", "a much longer passage of several words " * 3), ("x", "y"), ("one", "two")]
    probabilities = PairModel(path, sha).probabilities(pairs)
    assert probabilities.shape == (3, 2)
    assert np.allclose(probabilities.sum(1), 1.0)
    # logits are (all tokens, second-text tokens): their gap is the first text's tokens with
    # [CLS] and [SEP], 4 for "a claim", 3 for "x" and "one", whatever the passage's length
    gaps = np.log(probabilities[:, 0] / probabilities[:, 1])
    assert np.allclose(gaps, [4.0, 3.0, 3.0], atol=1e-4)
    assert np.isclose(probabilities[1], probabilities[2]).all()  # same lengths, same answer


def test_a_long_second_text_is_cut_to_the_token_limit(tmp_path):
    path = tmp_path / "counting.onnx"
    sha = _counting_model(path)
    long = PairModel(path, sha, max_tokens=16).probabilities([("claim", "word " * 200)])
    short = PairModel(path, sha, max_tokens=16).probabilities([("claim", "word " * 12)])
    assert np.allclose(long, short)


def test_a_model_that_is_not_the_one_stated_is_refused(tmp_path):
    path = tmp_path / "counting.onnx"
    _counting_model(path)
    with pytest.raises(PairModelError, match="SHA-256"):
        PairModel(path, "0" * 64).probabilities([("a", "b")])
    with pytest.raises(PairModelError, match="not found"):
        PairModel(tmp_path / "missing.onnx").probabilities([("a", "b")])


# The models shipped ---------------------------------------------------------------------------
def test_the_shipped_files_are_the_ones_their_cards_state():
    from lexkb.core.judge import shipped

    for name, sha in (
        ("support", shipped.SUPPORT_SHA256),
        ("relevance", shipped.RELEVANCE_SHA256),
    ):
        path = shipped.MODELS / f"{name}.onnx"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == sha
        assert sha in (shipped.MODELS / f"{name}.md").read_text(encoding="utf-8")


def test_the_support_model_tells_support_from_contradiction_and_silence():
    from lexkb.core.judge.shipped import SupportClass, support

    span = (
        "The Receiving Party may disclose Confidential Information to its employees who need "
        "to know it for the Purpose."
    )
    p = support(
        "The Receiving Party may share some Confidential Information with its employees.",
        [span],
    )[0]
    assert p.argmax() == SupportClass.ENTAILMENT
    p = support(
        "Receiving Party shall not share some Confidential Information with some of Receiving "
        "Party's employees.",
        [span],
    )[0]
    assert p.argmax() == SupportClass.CONTRADICTION
    p = support("The Agreement is governed by the laws of England.", [span])[0]
    assert p.argmax() == SupportClass.NOT_MENTIONED


def test_the_relevance_model_prefers_the_passage_that_answers():
    from lexkb.core.judge.shipped import answers

    chances = answers(
        "How long must a firm keep records of client money reconciliations?",
        [
            "A firm must keep records of each client money reconciliation for at least six "
            "years from the date it was made.",
            "The Regulator may publish a notice of a decision to impose a financial penalty.",
        ],
    )
    assert chances[0] > 0.5 > chances[1]
