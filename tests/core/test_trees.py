"""A tree ensemble read from plain arrays (lexkb.core.judge.trees): the scores walk each tree
as written, a one-leaf tree adds its leaf, and a file that is not the one stated is refused."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from lexkb.core.judge.trees import Trees, TreesError

# Tree 0: x0 <= 0.5 ? (x1 <= 2 ? 1.0 : 2.0) : 3.0. Tree 1: one leaf, 0.25.
MODEL = {
    "features": ["a", "b"],
    "depth": 2,
    "trees": [
        {"feature": [0, 1], "threshold": [0.5, 2.0], "left": [1, ~0], "right": [~2, ~1],
         "leaf": [1.0, 2.0, 3.0]},
        {"feature": [], "threshold": [], "left": [], "right": [], "leaf": [0.25]},
    ],
}  # fmt: skip


def test_scores_walk_every_tree_as_written():
    trees = Trees.of(MODEL)
    rows = np.array([[0.0, 1.0], [0.5, 3.0], [0.6, 0.0], [-1.0, 2.0]])
    assert trees.scores(rows).tolist() == [1.25, 2.25, 3.25, 1.25]
    assert trees.scores(np.zeros((0, 2))).size == 0


def test_a_file_other_than_the_one_stated_is_refused(tmp_path: Path):
    path = tmp_path / "ranker.json"
    path.write_text(json.dumps(MODEL), encoding="utf-8")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert Trees.read(path, digest).features == ("a", "b")
    with pytest.raises(TreesError, match="not the model shipped"):
        Trees.read(path, "0" * 64)
    with pytest.raises(TreesError, match="not found"):
        Trees.read(tmp_path / "missing.json", digest)


def test_the_shipped_ranker_reads_the_features_lexkb_computes():
    from lexkb.answers.ranking.candidate_features import FEATURES
    from lexkb.core.judge.shipped import ranker_model

    assert ranker_model().features == FEATURES
