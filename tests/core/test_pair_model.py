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


def test_a_first_text_that_fills_the_room_is_cut_too(tmp_path):
    """`only_second` alone raised when the first text left the second no room (a question of
    about 1,300 characters failed every ask): the first is cut to leave the second half of
    the room, or all it needs; below that, the encoding is `only_second`'s, as trained."""
    from tokenizers import Tokenizer

    from lexkb.core.embed.embedders import local_model_files

    path = tmp_path / "counting.onnx"
    model = PairModel(path, _counting_model(path), max_tokens=16)  # room: 16 - 3 = 13
    both_long, long_first = model.encode([("word " * 40, "word " * 40), ("word " * 40, "two")])
    assert len(both_long.ids) == 16 and both_long.type_ids.count(1) == 6 + 1  # half, [SEP]
    assert len(long_first.ids) == 16 and long_first.type_ids.count(1) == 1 + 1  # all of it
    assert long_first.tokens[-2:] == ["two", "[SEP]"]
    assert np.isfinite(model.probabilities([("word " * 40, "word " * 40)])).all()

    trained = Tokenizer.from_file(str(local_model_files()[1]))
    trained.no_padding()
    trained.enable_truncation(16, strategy="only_second")
    for pair in [("a claim", "word " * 200), ("word " * 7, "word " * 40), ("x", "y")]:
        (ours,) = model.encode([pair])
        theirs = trained.encode(*pair)
        assert (ours.ids, ours.type_ids) == (theirs.ids, theirs.type_ids), pair


def test_the_longest_accepted_texts_are_read_by_the_shipped_models():
    from lexkb.core.judge.shipped import answers, support

    passage = "(b) Records of each client money reconciliation must be kept for seven years."
    question = "How long must a firm keep the records of each client money reconciliation? " * 30
    chances = answers(question[:2000], [passage, passage * 40])
    assert chances.shape == (2,) and np.isfinite(chances).all()
    read = support("a " * 999, [passage, passage * 40])
    assert read.shape == (2, 3) and np.allclose(read.sum(1), 1.0)
