"""BM25 over each paragraph's heading path: a keyword field beside its own words.

A paragraph rarely says what it is about; its headings do (Bribery Act "11 Penalties" over
"An individual guilty of an offence ... is liable ..."). A person asks by the heading's words,
so the heading path (lexkb.core.text.context) scores as a field of its own, added to the
paragraph's BM25 at HEADING_WEIGHT. Read into every paragraph's own postings instead, the
heading made the paragraphs under one heading alike and cost ObliQA keyword Recall@10 0.780 ->
0.734; as a lightly weighted field it leaves a paragraph's own words to tell siblings apart.

Built on first use from the chunks table (a few thousand distinct paths for ObliQA, under a
second); a query scores the distinct paths, then each paragraph takes its path's score.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import polars as pl

from lexkb.core.text.context import heading_context
from lexkb.core.text.tokenize import tokenize

# The heading field's weight against the paragraph's own BM25. On the people's questions written
# here (benchmarks/questions/people/) 0.25 and 0.5 tie (first hit 0.42, first ten 0.78-0.79;
# 0 gives 0.39 / 0.76); 0.25 costs ObliQA's held-out hybrid less (R@10 0.808 -> 0.804, MAP@10
# 0.675 -> 0.669; at 0.5 0.761 / 0.626). BENCHMARKS.md "People's questions".
HEADING_WEIGHT = 0.25
_K1, _B = 0.9, 0.6  # as the paragraphs' own BM25 (transforms.bm25.BM25Params)


class Headings:
    """Each chunk row's heading path as one BM25 document among the distinct paths."""

    def __init__(self, chunks: pl.DataFrame, paragraphs: np.ndarray) -> None:
        """`paragraphs`: a mask of the paragraph rows, which a search without filters ranks."""
        contexts = [heading_context(p) for p in chunks["section_path"].to_list()]
        distinct = sorted(set(contexts) - {""})
        number = {c: i for i, c in enumerate(distinct)}
        self.path_of_row = np.array([number.get(c, -1) for c in contexts], dtype=np.int64)
        # The same with every other row pathless (-1: it scores 0): a search over paragraphs
        # then needs no pass zeroing the rows it does not keep (lexkb.keyword_ranking).
        self.path_of_paragraph = np.where(paragraphs, self.path_of_row, -1)
        terms = [tokenize(c) for c in distinct]
        lengths = np.array([len(t) for t in terms], dtype=np.float64)
        average = float(lengths.mean()) if lengths.size and lengths.sum() else 1.0
        documents: dict[str, list[tuple[int, int]]] = {}
        for path, words in enumerate(terms):
            for word in set(words):
                documents.setdefault(word, []).append((path, words.count(word)))
        self.postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        size = len(distinct)
        for word, found in documents.items():
            paths = np.array([p for p, _ in found], dtype=np.int64)
            tf = np.array([n for _, n in found], dtype=np.float64)
            idf = np.log(1.0 + (size - len(found) + 0.5) / (len(found) + 0.5))
            norm = _K1 * (1.0 - _B + _B * lengths[paths] / average)
            self.postings[word] = (paths, idf * tf / (tf + norm))
        self.size = size

    def for_query(self, tokens: list[str], paragraphs_only: bool = False) -> HeadingScores:
        """The query's heading-path BM25 per distinct path, to read per row; with
        `paragraphs_only`, 0 for every row but a paragraph."""
        path_of_row = self.path_of_paragraph if paragraphs_only else self.path_of_row
        found = [self.postings[token] for token in tokens if token in self.postings]
        if not found:  # no heading holds a word of the query: the field adds nothing
            return HeadingScores(np.zeros(self.size + 1, dtype=np.float32), path_of_row)
        paths = np.concatenate([p for p, _ in found])
        weights = np.concatenate([w for _, w in found])
        # One bincount adds the tokens' weights in their order, as adding them token by token
        # does, at a third of the cost. The last path: rows without one.
        by_path = np.bincount(paths, weights=weights, minlength=self.size + 1)
        # Rounded once per path, then read per row: as rounding each row, cheaper.
        return HeadingScores(by_path.astype(np.float32), path_of_row)

    def scores(self, tokens: list[str]) -> np.ndarray:
        """Each chunk row's heading-path BM25 for the query's tokens (0 for a row without one)."""
        return self.for_query(tokens).by_path[self.path_of_row]


@dataclass(frozen=True)
class HeadingScores:
    """One query's heading field: a score per distinct path (`by_path`, the last for rows
    without one), read per row through `path_of_row`."""

    by_path: np.ndarray
    path_of_row: np.ndarray

    def weighted(self, rows: np.ndarray | None = None) -> np.ndarray:
        """What the field adds to the ranked score of `rows` (every row when None): float32,
        as a search adds it."""
        paths = self.path_of_row if rows is None else self.path_of_row[rows]
        # Weighted per path, then read per row by np.take: the same floats as weighting each
        # row, at a third of the cost over every row.
        return np.take(self._weighted, paths)

    @cached_property
    def _weighted(self) -> np.ndarray:
        return np.float32(HEADING_WEIGHT) * self.by_path

    @cached_property
    def ceiling(self) -> float:
        """The most the field adds to any row."""
        return float(np.float32(HEADING_WEIGHT) * self.by_path.max())
