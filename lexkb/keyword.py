"""Keyword (BM25) scoring over the snapshot's postings, held as CSR arrays.

The build wrote each term's BM25 weight per chunk (`bm25_terms`, `bm25_postings`), so a query
costs one bincount over the postings of its words: one slice of chunk rows and weights per
term, found by the term's offsets. Queries must be tokenized as the chunks were, so a snapshot
of another tokenizer is refused at open. A sharded snapshot stores term frequencies per shard,
weighted and merged into the same arrays at open (lexkb.sharded_bm25).

The same postings give a hit's lexical relevance features (lexkb.relevance): its BM25 score as a
share of the most the query's words could score, and the IDF-weighted share of them it holds.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
import polars as pl

from lexkb import relevance, sharded_bm25
from lexkb.core.store import snapshot as snap
from lexkb.core.text.tokenize import TOKENIZER_VERSION, tokenize


class Postings(NamedTuple):
    """Postings as CSR arrays: term t's are rows[indptr[t]:indptr[t + 1]] (sorted) with their
    weights; `ceiling[t]` is its highest weight, what it can add to any row (lexkb.keyword_ranking)."""

    indptr: np.ndarray
    rows: np.ndarray
    weights: np.ndarray
    ceiling: np.ndarray

    @classmethod
    def of(
        cls, term_ids: np.ndarray, rows: np.ndarray, weights: np.ndarray, terms: int
    ) -> Postings:
        """From postings sorted by (term, row)."""
        counts = np.bincount(term_ids, minlength=terms)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        ceiling = np.zeros(terms, dtype=np.float32)
        held = np.flatnonzero(counts)
        if held.size:
            ceiling[held] = np.maximum.reduceat(weights, indptr[held])
        return cls(indptr, rows, weights, ceiling)


class QueryTerms(NamedTuple):
    """A query's words as the postings see them (Keyword.terms)."""

    tokens: list[str]
    # The term of each known token in the order a row's score adds them: rarest first (IDF
    # descending, then term id), a repeated word's tokens together. One order for every way of
    # scoring (all rows, some rows, pruned: lexkb.keyword_ranking), so each gives a row the
    # same float; rarest first, so the words a pruned ranking sets aside come last.
    summed: np.ndarray
    # The most the query's words could cover: the IDF of each token, a word the index lacks at
    # the IDF of a word seen nowhere (the relevance features' denominator, lexkb.relevance).
    idf_total: float


class Keyword:
    """The BM25 postings of every chunk, and those of paragraphs apart (`paragraph_postings`)."""

    def __init__(
        self,
        snapshot: snap.Snapshot,
        n_rows: int,
        paragraph_mask: np.ndarray,
        levels: pl.Series,
    ) -> None:
        """`levels`: each chunk row's level, the BM25 group a sharded snapshot weights it in."""
        tokenizer = snapshot.manifest.get("bm25", {}).get("tokenizer")
        if tokenizer != TOKENIZER_VERSION:
            raise snap.SnapshotError(
                f"snapshot was tokenized with {tokenizer!r}, this lexkb uses {TOKENIZER_VERSION!r}"
            )
        self.n_rows = n_rows
        terms = snapshot.read_table("bm25_terms", columns=["term_id", "term", "idf"]).sort(
            "term_id"
        )
        self.term_ids: dict[str, int] = dict(zip(terms["term"], terms["term_id"], strict=True))
        self.idf = terms["idf"].to_numpy().astype(np.float64)
        # The same in plain Python, and each term's place in the order a score adds the
        # query's words (IDF descending, then term id): a query's few terms are looked up and
        # sorted by these, where numpy's calls on a dozen values cost more than the work.
        self._idf = self.idf.tolist()
        self._summing_place = _summing_places(self.idf)
        if snapshot.sharded:
            term_ids, rows, weights = sharded_bm25.postings(snapshot, terms["term"], levels)
        else:
            table = snapshot.read_table("bm25_postings", ["term_id", "chunk_row", "weight"])
            rows = table["chunk_row"].to_numpy().astype(np.int32, copy=False)
            weights = table["weight"].to_numpy().astype(np.float32, copy=False)
            term_ids = table["term_id"].to_numpy().astype(np.int64)
        # Sorted by (term, row), as the build writes them: a term's rows are then searchable.
        if np.any(np.diff(term_ids * n_rows + rows) < 0):
            raise snap.SnapshotError("bm25_postings are not sorted by term and chunk row")
        self.postings = Postings.of(term_ids, rows, weights, len(self.term_ids))
        self.indptr, self.rows, self.weights = self.postings[:3]
        # A search without filters reads paragraphs only: their postings apart (56% of
        # ObliQA's, 2 MB) are summed without touching section chunks' and zeroing them after.
        own = paragraph_mask[rows]
        self.paragraph_postings = Postings.of(
            term_ids[own], rows[own], weights[own], len(self.term_ids)
        )
        self.unseen_idf = relevance.unseen_idf(int(paragraph_mask.sum()))

    def terms(self, tokens: list[str]) -> QueryTerms:
        """The query's tokens, its known terms in the order a score adds them, and its IDF total.
        In plain Python: a query has a few tokens, where each numpy call costs a microsecond."""
        term_ids, idf = self.term_ids, self._idf
        asked = [term_ids[t] for t in tokens if t in term_ids]
        summed = np.array(sorted(asked, key=self._summing_place.__getitem__), dtype=np.int64)
        # Each distinct known term (in term order) times the number of tokens saying it, then
        # the words the index lacks.
        known = sum(idf[t] * asked.count(t) for t in sorted(set(asked)))
        total = known + (len(tokens) - len(asked)) * self.unseen_idf
        return QueryTerms(tokens, summed, float(total) or 1.0)

    def scores(
        self,
        terms: QueryTerms,
        postings: Postings | None = None,
        coverage: bool = False,
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """One bincount over the postings of the query's words, added in `terms.summed`'s
        order; a word the query repeats counts each time, as a bag of words does. `postings`:
        all chunks' by default. With `coverage`, also each row's sum of the IDFs of the query
        words it holds (counted as often as the query says them), for relevance features:
        a second bincount over the same rows costs less than looking the hits' postings up."""
        indptr, all_rows, all_weights, _ = postings or self.postings
        asked = terms.summed
        if not asked.size:
            empty = np.zeros(self.n_rows, dtype=np.float32)
            return empty, (empty.copy() if coverage else None)
        rows, weights = gathered(postings or self.postings, asked)
        scores = np.bincount(rows, weights=weights, minlength=self.n_rows).astype(np.float32)
        if not coverage:
            return scores, None
        idf = np.repeat(self.idf[asked], indptr[asked + 1] - indptr[asked])
        return scores, np.bincount(rows, weights=idf, minlength=self.n_rows)

    def row_scores(
        self, terms: QueryTerms, rows: np.ndarray, postings: Postings | None = None
    ) -> np.ndarray:
        """`scores` for some rows only (any order), as the bincount adds them, so each row gets
        the same float32."""
        rows = np.asarray(rows, dtype=np.int64)
        total = np.zeros(rows.size, dtype=np.float64)
        added(postings or self.postings, terms.summed, rows, total)
        return total.astype(np.float32)

    def coverage(
        self, terms: QueryTerms, rows: np.ndarray, postings: Postings | None = None
    ) -> np.ndarray:
        """`scores`' coverage for some rows only: each row's sum of the IDFs of the query words
        it holds, added in the same order as the bincount adds them (so the same float64). A
        search needs it for its hits alone; counted over every row it was a third of a
        keyword search at 30x ObliQA (docs/scaling.md). `postings`: any that hold the rows
        (a search without filters looks its paragraphs up in theirs, the shorter lists)."""
        rows = np.asarray(rows, dtype=np.int64)
        total = np.zeros(rows.size, dtype=np.float64)
        added(postings or self.postings, terms.summed, rows, total, self.idf)
        return total

    def paragraph_rows(self, tokens: list[str]) -> np.ndarray:
        """The paragraph rows that hold every one of `tokens` (sorted): a word-for-word test of
        where a name is written, without scoring."""
        indptr, rows = self.paragraph_postings.indptr, self.paragraph_postings.rows
        held: np.ndarray | None = None
        for token in dict.fromkeys(tokens):
            term = self.term_ids.get(token)
            if term is None:
                return np.zeros(0, dtype=np.int64)
            own = rows[indptr[term] : indptr[term + 1]]
            held = own if held is None else np.intersect1d(held, own, assume_unique=True)
        return np.zeros(0, dtype=np.int64) if held is None else held.astype(np.int64)

    def term_idf(self, terms: list[str]) -> np.ndarray:
        """The IDF of each term (from lexkb.core.text.tokenize); a term no chunk holds gets the
        IDF of a word seen nowhere, the highest there is."""
        return np.array(
            [self.idf[self.term_ids[t]] if t in self.term_ids else self.unseen_idf for t in terms]
        )

    def features(
        self,
        query: str,
        rows: np.ndarray,
        similarity: np.ndarray | None = None,
        terms: QueryTerms | None = None,
        sums: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> np.ndarray:
        """The relevance features (lexkb.relevance.FEATURES) of chunk `rows`, ranked best first,
        for `query`; `similarity` holds their dense scores (None where there are none).
        `sums`: the rows' BM25 scores and IDF coverage from `scores`, when the search has them
        (else counted here over all postings)."""
        rows = np.asarray(rows, dtype=np.int64)
        if not rows.size:
            return np.zeros((0, len(relevance.FEATURES)))
        terms = terms if terms is not None else self.terms(tokenize(query))
        total = terms.idf_total
        if sums is None:
            keyword, covered = self.scores(terms, coverage=True)
            assert covered is not None  # asked for
            sums = (keyword[rows], covered[rows])
        matrix = np.empty((rows.size, 4))
        matrix[:, 0] = np.nan if similarity is None else similarity
        np.divide(sums[0], total, out=matrix[:, 1])
        np.divide(sums[1], total, out=matrix[:, 2])
        matrix[:, 3] = _log_rank(rows.size)
        return matrix


def _summing_places(idf: np.ndarray) -> list[int]:
    """Each term's place in the order a score adds a query's words: IDF descending, then term
    id (QueryTerms.summed)."""
    places = np.empty(idf.size, dtype=np.int64)
    places[np.lexsort((np.arange(idf.size), -idf))] = np.arange(idf.size)
    return places.tolist()


@lru_cache(maxsize=64)
def _log_rank(size: int) -> np.ndarray:
    """log(rank) for ranks 1..size: the same few lengths recur, search after search."""
    return np.log(np.arange(size) + 1)


def gathered(postings: Postings, terms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (int64) rows and (float64) weights of `terms`' postings, one term after another:
    what a bincount adds in that order. Both are widened here, where they are copied anyway:
    numpy's bincount and indexing widen int32 rows and float32 weights again at each use,
    more slowly."""
    spans = list(
        zip(postings.indptr[terms].tolist(), postings.indptr[terms + 1].tolist(), strict=True)
    )
    if not spans:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    rows = np.concatenate([postings.rows[a:b] for a, b in spans], dtype=np.int64)
    weights = np.concatenate([postings.weights[a:b] for a, b in spans], dtype=np.float64)
    return rows, weights


def added(
    postings: Postings,
    terms: np.ndarray,
    rows: np.ndarray,
    total: np.ndarray,
    values: np.ndarray | None = None,
) -> None:
    """Add each of `terms`' weight at `rows` (any order) to `total`, term after term: what a
    bincount over their postings adds at those rows, in the same order. With `values` (one per
    term), add the term's value wherever its postings hold the row instead. One searchsorted
    per term finds the rows in its postings; the rest is done for every term at once."""
    if not rows.size or not terms.size:
        return
    starts = postings.indptr[terms]
    ends = postings.indptr[terms + 1]
    at = np.empty((terms.size, rows.size), dtype=np.int64)
    # Searched as the postings' own dtype: int64 rows would make numpy widen each term's rows.
    wanted = rows.astype(postings.rows.dtype)
    for n, (start, end) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        at[n] = np.searchsorted(postings.rows[start:end], wanted)
    at += starts[:, None]
    held = at < ends[:, None]
    np.minimum(at, postings.rows.size - 1, out=at)
    held &= postings.rows[at] == rows
    if values is None:
        added_per_term = np.where(held, postings.weights[at], 0.0)
    else:
        added_per_term = np.where(held, values[terms][:, None], 0.0)
    # A running sum down the terms adds them to `total` one after another, as a bincount does
    # (a sum along the axis might pair them otherwise); adding 0.0 leaves a float as it is.
    total[:] = np.cumsum(np.vstack([total, added_per_term]), axis=0)[-1]
