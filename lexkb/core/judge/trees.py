"""A gradient-boosted tree ensemble read from plain arrays: no LightGBM at run time.

training/ranker_fit.py fits the ensemble with LightGBM and writes every tree as arrays in one
JSON file: per node its feature, threshold and children (a child below 0 is leaf ~child), per
leaf its value. Scoring walks all trees at once, one level per step, so twenty candidates
through three hundred trees cost a few numpy operations per level, not a loop per tree. The
file is refused unless its SHA-256 is the one its caller states.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


class TreesError(RuntimeError):
    """The ensemble's file is missing, damaged or not the one shipped."""


@dataclass(frozen=True)
class Trees:
    """Every tree's nodes padded to one width: `feature`, `threshold`, `left`, `right` are
    (trees, nodes); `leaf` is (trees, leaves). A tree that is one leaf has no nodes: its
    root is leaf 0 (`root_leaf`)."""

    features: tuple[str, ...]
    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    leaf: np.ndarray
    root_leaf: np.ndarray
    depth: int

    @classmethod
    def read(cls, path: Path, sha256: str) -> Trees:
        if not path.is_file():
            raise TreesError(f"model file not found: {path}")
        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != sha256:
            raise TreesError(f"{path.name} is not the model shipped (SHA-256 differs)")
        return cls.of(json.loads(data))

    @classmethod
    def of(cls, model: dict[str, Any]) -> Trees:
        trees = model["trees"]
        nodes = max(1, *(len(t["feature"]) for t in trees))
        leaves = max(len(t["leaf"]) for t in trees)

        def padded(key: str, width: int, dtype: type, fill: float) -> np.ndarray:
            out: np.ndarray = np.full((len(trees), width), fill, dtype=dtype)
            for n, tree in enumerate(trees):
                out[n, : len(tree[key])] = tree[key]
            return out

        return cls(
            features=tuple(model["features"]),
            feature=padded("feature", nodes, np.int64, 0),
            threshold=padded("threshold", nodes, np.float64, 0.0),
            left=padded("left", nodes, np.int64, -1),
            right=padded("right", nodes, np.int64, -1),
            leaf=padded("leaf", leaves, np.float64, 0.0),
            root_leaf=np.array([not t["feature"] for t in trees], dtype=bool),
            depth=int(model["depth"]),
        )

    def scores(self, rows: np.ndarray) -> np.ndarray:
        """The ensemble's raw score of each row of `rows` (samples, features)."""
        rows = np.asarray(rows, dtype=np.float64)
        count, trees = rows.shape[0], self.feature.shape[0]
        if not count:
            return np.zeros(0)
        at = np.zeros((trees, count), dtype=np.int64)  # node index; below 0: leaf ~at
        at[self.root_leaf] = -1
        tree = np.arange(trees)[:, None]
        sample = np.arange(count)[None, :]
        for _ in range(self.depth):
            inner = at >= 0
            if not inner.any():
                break
            node = np.where(inner, at, 0)
            values = rows[sample, self.feature[tree, node]]
            step = np.where(
                values <= self.threshold[tree, node], self.left[tree, node], self.right[tree, node]
            )
            at = np.where(inner, step, at)
        summed: np.ndarray = self.leaf[tree, ~at].sum(axis=0)
        return summed
