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

from typing import NamedTuple

import numpy as np
import polars as pl

from lexkb import relevance, sharded_bm25
from lexkb.core.store import snapshot as snap
from lexkb.core.text.tokenize import TOKENIZER_VERSION, tokenize

# Term offsets, chunk rows and weights: one term's postings are rows[offsets[t]:offsets[t + 1]].
Postings = tuple[np.ndarray, np.ndarray, np.ndarray]


class QueryTerms(NamedTuple):
    """A query's words as the postings see them (Keyword.terms)."""

    tokens: list[str]
    ids: np.ndarray  # its distinct terms the index holds
    per_token: np.ndarray  # each token's position in `ids`, -1 for a word the index lacks


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
        if snapshot.sharded:
            term_ids, self.rows, self.weights = sharded_bm25.postings(
                snapshot, terms["term"], levels
            )
        else:
            postings = snapshot.read_table("bm25_postings", ["term_id", "chunk_row", "weight"])
            self.rows = postings["chunk_row"].to_numpy().astype(np.int32, copy=False)
            self.weights = postings["weight"].to_numpy().astype(np.float32, copy=False)
            term_ids = postings["term_id"].to_numpy().astype(np.int64)
        counts = np.bincount(term_ids, minlength=len(self.term_ids))
        self.indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        # Sorted by (term, row), as the build writes them: a term's rows are then searchable.
        if np.any(np.diff(term_ids * n_rows + self.rows) < 0):
            raise snap.SnapshotError("bm25_postings are not sorted by term and chunk row")
        # A search without filters reads paragraphs only: their postings apart (56% of
        # ObliQA's, 2 MB) are summed without touching section chunks' and zeroing them after.
        own = paragraph_mask[self.rows]
        self.paragraph_postings: Postings = (
            np.concatenate([[0], np.cumsum(np.bincount(term_ids[own], minlength=len(counts)))]),
            self.rows[own],
            self.weights[own],
        )
        self.unseen_idf = relevance.unseen_idf(int(paragraph_mask.sum()))

    def terms(self, tokens: list[str]) -> QueryTerms:
        """The query's tokens, its distinct known terms in term order, and where each token is."""
        known = sorted(
            (t for t in dict.fromkeys(tokens) if t in self.term_ids), key=self.term_ids.get
        )
        column = {t: i for i, t in enumerate(known)}
        per_token = np.array([column.get(t, -1) for t in tokens], dtype=np.int64)
        ids = np.array([self.term_ids[t] for t in known], dtype=np.int64)
        return QueryTerms(tokens, ids, per_token)

    def scores(
        self,
        terms: QueryTerms,
        postings: Postings | None = None,
        coverage: bool = False,
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """One bincount over the postings of the query's words; a word the query repeats
        counts each time, as a bag of words does. `postings` (term offsets, rows, weights):
        all chunks' by default. With `coverage`, also each row's sum of the IDFs of the query
        words it holds (counted as often as the query says them), for relevance features:
        a second bincount over the same rows costs less than looking the hits' postings up."""
        indptr, all_rows, all_weights = postings or (self.indptr, self.rows, self.weights)
        asked = terms.ids[terms.per_token[terms.per_token >= 0]]
        spans = list(zip(indptr[asked].tolist(), indptr[asked + 1].tolist(), strict=True))
        if not spans:
            empty = np.zeros(self.n_rows, dtype=np.float32)
            return empty, (empty.copy() if coverage else None)
        rows = np.concatenate([all_rows[a:b] for a, b in spans])
        weights = np.concatenate([all_weights[a:b] for a, b in spans])
        scores = np.bincount(rows, weights=weights, minlength=self.n_rows).astype(np.float32)
        if not coverage:
            return scores, None
        lengths = np.array([b - a for a, b in spans])
        idf = np.repeat(self.idf[asked], lengths)
        return scores, np.bincount(rows, weights=idf, minlength=self.n_rows)

    def coverage(self, terms: QueryTerms, rows: np.ndarray) -> np.ndarray:
        """`scores`' coverage for some rows only: each row's sum of the IDFs of the query words
        it holds, added in the same order as the bincount adds them (so the same float64). A
        search needs it for its hits alone; counted over every row it was a third of a
        keyword search at 30x ObliQA (docs/scaling.md)."""
        rows = np.asarray(rows, dtype=np.int64)
        total = np.zeros(rows.size, dtype=np.float64)
        if not rows.size:
            return total
        for term in terms.ids[terms.per_token[terms.per_token >= 0]].tolist():
            span = self.rows[self.indptr[term] : self.indptr[term + 1]]
            if not span.size:
                continue
            at = np.minimum(np.searchsorted(span, rows), span.size - 1)
            total[span[at] == rows] += self.idf[term]
        return total

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
        cosine: np.ndarray | None = None,
        terms: QueryTerms | None = None,
        sums: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> np.ndarray:
        """The relevance features (lexkb.relevance.FEATURES) of chunk `rows`, ranked best first,
        for `query`; `cosine` holds every chunk's dense score (NaN where there is none).
        `sums`: the rows' BM25 scores and IDF coverage from `scores`, when the search has them
        (else counted here over all postings)."""
        rows = np.asarray(rows, dtype=np.int64)
        if not rows.size:
            return np.zeros((0, len(relevance.FEATURES)))
        terms = terms if terms is not None else self.terms(tokenize(query))
        # Each distinct known term counts as often as the query says it; a word the index
        # lacks adds only its IDF (the highest) to the total (lexkb.relevance).
        known = terms.per_token >= 0
        counts = np.bincount(terms.per_token[known], minlength=terms.ids.size).astype(np.float64)
        term_idf = self.idf[terms.ids]
        total = float(term_idf @ counts + np.count_nonzero(~known) * self.unseen_idf) or 1.0
        if sums is None:
            keyword, covered = self.scores(terms, coverage=True)
            sums = (keyword[rows], covered[rows])
        fraction, coverage = sums[0] / total, sums[1] / total
        similarity = cosine[rows] if cosine is not None else np.full(rows.size, np.nan)
        return np.column_stack([similarity, fraction, coverage, np.log(np.arange(rows.size) + 1)])
