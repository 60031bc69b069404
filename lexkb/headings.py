"""BM25 over each paragraph's heading path: a keyword field beside its own words.

A paragraph rarely says what it is about; its headings do (Bribery Act "11 Penalties" over
"An individual guilty of an offence ... is liable ..."). A person asks by the heading's words,
so the heading path (lexkb.core.text.heading_path) scores as a field of its own, added to the
paragraph's BM25 at HEADING_WEIGHT. Read into every paragraph's own postings instead, the
heading made the paragraphs under one heading alike and cost ObliQA keyword Recall@10 0.780 ->
0.734; as a lightly weighted field it leaves a paragraph's own words to tell siblings apart.

Built on first use from the chunks table (a few thousand distinct paths for ObliQA, under a
second). A search that scores every row sums the field from per-row postings (each heading
word's weight at every row under a path holding it), as it sums the words' own; one that scores
some rows reads their paths' scores.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import polars as pl

from lexkb.core.text.heading_path import heading_context
from lexkb.core.text.tokenize import tokenize

# The heading field's weight against the paragraph's own BM25. On the people's questions written
# here (benchmarks/questions/people/) 0.25 and 0.5 tie (first hit 0.42, first ten 0.78-0.79;
# 0 gives 0.39 / 0.76); 0.25 costs ObliQA's held-out hybrid less (R@10 0.808 -> 0.804, MAP@10
# 0.675 -> 0.669; at 0.5 0.761 / 0.626). BENCHMARKS.md "People's questions".
HEADING_WEIGHT = 0.25
_K1, _B = 0.9, 0.6  # as the paragraphs' own BM25 (transforms.indexing.bm25.BM25Params)


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
        self._row_postings = (
            _RowPostings(self.postings, self.path_of_row),
            _RowPostings(self.postings, self.path_of_paragraph),
        )

    def for_query(self, tokens: list[str], paragraphs_only: bool = False) -> HeadingScores:
        """The query's heading field, to read per row; with `paragraphs_only`, 0 for every row
        but a paragraph."""
        return HeadingScores(
            self,
            [token for token in tokens if token in self.postings],
            self.path_of_paragraph if paragraphs_only else self.path_of_row,
            self._row_postings[paragraphs_only],
        )

    def by_path(self, tokens: list[str]) -> np.ndarray:
        """The heading-path BM25 of `tokens` (words some heading holds) per distinct path, the
        last for rows without one, rounded to float32 once per path."""
        if not tokens:  # no heading holds a word of the query: the field adds nothing
            return np.zeros(self.size + 1, dtype=np.float32)
        paths = np.concatenate([self.postings[token][0] for token in tokens])
        weights = np.concatenate([self.postings[token][1] for token in tokens])
        # One bincount adds the tokens' weights in their order, as adding them token by token
        # does, at a third of the cost.
        return np.bincount(paths, weights=weights, minlength=self.size + 1).astype(np.float32)

    def scores(self, tokens: list[str]) -> np.ndarray:
        """Each chunk row's heading-path BM25 for the query's tokens (0 for a row without one)."""
        return self.for_query(tokens).by_path[self.path_of_row]


class _RowPostings:
    """Each heading word's weight at every row under a path that holds it (rows without a path
    hold none): the field's postings per row, so that a query sums it over every row with one
    bincount, as the words' own postings are summed (lexkb.keyword). A word's are laid out on
    its first query and kept: a corpus many times ObliQA's would hold tens of megabytes of them
    for words nobody asks."""

    def __init__(
        self, postings: dict[str, tuple[np.ndarray, np.ndarray]], path_of_row: np.ndarray
    ) -> None:
        self._paths = postings
        held = np.flatnonzero(path_of_row >= 0)
        # Rows ordered by path: path p's are _rows[_starts[p]:_starts[p] + _counts[p]].
        self._rows = held[np.argsort(path_of_row[held], kind="stable")].astype(np.int32)
        paths = max((p.size and int(p.max()) + 1 for p, _ in postings.values()), default=0)
        self._counts = np.bincount(path_of_row[held], minlength=paths)
        self._starts = np.cumsum(self._counts) - self._counts
        self.rows = len(path_of_row)
        self._laid_out: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def of(self, word: str) -> tuple[np.ndarray, np.ndarray]:
        """The rows under `word`'s paths (int32) and its weight at each (float64)."""
        found = self._laid_out.get(word)
        if found is None:
            paths, weights = self._paths[word]
            spans = self._counts[paths]
            owner = np.repeat(np.arange(paths.size), spans)
            offset = np.arange(owner.size) - (np.cumsum(spans) - spans)[owner]
            found = (self._rows[self._starts[paths][owner] + offset], weights[owner])
            self._laid_out[word] = found
        return found

    def gathered(
        self, tokens: list[str], row_type: type[np.integer] = np.int32
    ) -> tuple[np.ndarray, np.ndarray]:
        """`tokens`' rows (as `row_type`) and weights (float64), one token after another: the
        order in which a row's sum adds them (every token a heading word)."""
        found = [self.of(token) for token in tokens]
        if not found:
            return np.zeros(0, dtype=row_type), np.zeros(0)
        rows = np.concatenate([r for r, _ in found], dtype=row_type)
        return rows, np.concatenate([w for _, w in found])

    def summed(self, tokens: list[str]) -> np.ndarray:
        """Each row's sum of `tokens`' weights (float64), added in the tokens' order: for every
        row, the same float its path's sum is."""
        rows, weights = self.gathered(tokens, np.int64)
        return np.bincount(rows, weights=weights, minlength=self.rows)


@dataclass(frozen=True)
class HeadingScores:
    """One query's heading field over `headings`, for its words a heading holds (`tokens`):
    a score per distinct path (`by_path`, counted on first use), read per row through
    `path_of_row`, or summed over every row from the field's per-row postings
    (`row_postings`) when every row is read."""

    headings: Headings
    tokens: list[str]
    path_of_row: np.ndarray
    row_postings: _RowPostings

    @cached_property
    def by_path(self) -> np.ndarray:
        return self.headings.by_path(self.tokens)

    @property
    def weight(self) -> float:
        """What the field's scores are multiplied by before they join the words' (read when
        asked, as `added_to` reads it)."""
        return HEADING_WEIGHT

    def weighted(self, rows: np.ndarray | None = None) -> np.ndarray:
        """What the field adds to the ranked score of `rows` (every row when None): float32,
        as a search adds it."""
        paths = self.path_of_row if rows is None else self.path_of_row[rows]
        # Weighted per path, then read per row by np.take: the same floats as weighting each
        # row, at a third of the cost over every row.
        return np.take(self._weighted, paths)

    def added_to(self, body: np.ndarray) -> np.ndarray:
        """`body` (float32, a score per row) plus the field at every row, as `body +
        weighted()` gives it, bit for bit: each row's path sum, rounded and weighted as
        `_weighted` does. Summed from per-row postings, it reads a twelfth of ObliQA's rows'
        worth of postings where reading every row's path cost twice as much."""
        if not self.tokens:
            return body.copy()
        field = self.row_postings.summed(self.tokens).astype(np.float32)
        field *= np.float32(HEADING_WEIGHT)
        field += body
        return field

    @cached_property
    def _weighted(self) -> np.ndarray:
        return np.float32(HEADING_WEIGHT) * self.by_path

    @cached_property
    def ceiling(self) -> float:
        """The most the field adds to any row."""
        return float(np.float32(HEADING_WEIGHT) * self.by_path.max())
