"""The read-only index a service loads: keyword search, reference lookup, document listing.

Everything lives in memory after `Index.open`: chunk metadata as a polars frame and the BM25
postings as CSR arrays (one slice of chunk rows and weights per term), so a query costs a few numpy
operations over the postings of its terms. Nothing here imports Dagster or unstructured.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from datetime import date
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

import numpy as np
import polars as pl

from lexkb import dense_scan, relevance
from lexkb import limits as check
from lexkb.annotations import Annotations
from lexkb.core.embed.embedders import Embedder, embedder_for
from lexkb.core.store import ann, object_store, vector_files
from lexkb.core.store import snapshot as snap
from lexkb.core.store.index_root import LEASE_MINUTES, touch_lease
from lexkb.core.text.refs import document_names, title_code, title_name
from lexkb.core.text.tokenize import TOKENIZER_VERSION, tokenize
from lexkb.core.vocabulary import ChunkLevel, MatchKind, SearchMode
from lexkb.filters import DOCUMENT_FILTERS, document_ids
from lexkb.filters import validate as validate_filters
from lexkb.graph import CitationGraph, Step
from lexkb.lookup import Resolver
from lexkb.results import SCORE_DIGITS, GraphHit, Hit, Lookup, SearchResults

MODES = tuple(SearchMode)
# Hybrid = weighted z-score fusion over the union of each ranking's best FUSION_DEPTH rows: each
# side's scores are standardised over those candidates, the dense side weighted DENSE_WEIGHT. On
# ObliQA it beats reciprocal rank fusion (k=60) on Recall@10 and MAP@10; the weight was chosen on
# half the dev questions and checked on the other half (BENCHMARKS.md).
FUSION_DEPTH = 200
DENSE_WEIGHT = 1.0
CHUNK_LEVELS = tuple(ChunkLevel)
QUERY_VECTORS = 256  # query embeddings kept per open index
UNSCORED = -2.0  # cosine of a row an approximate search did not score (below any real one)
# What a Hit reads of its chunk (Index._hit_rows), in this order.
_HIT_COLUMNS = (
    "chunk_id",
    "document_id",
    "document_key",
    "document_title",
    "chunk_level",
    "ref",
    "section_path",
    "page",
    "content",
    "content_hash",
    "parent_chunk_id",
)
# What a bare reference means: the paragraph when one has that ref, else the section ("Article 6").
_LOOKUP_LEVELS = (ChunkLevel.PARAGRAPH, ChunkLevel.SECTION)


class _QueryTerms(NamedTuple):
    """A query's words as the postings see them (Index._terms)."""

    tokens: list[str]
    ids: np.ndarray  # its distinct terms the index holds
    per_token: np.ndarray  # each token's position in `ids`, -1 for a word the index lacks


class Index:
    """Open with `Index.open(root_or_snapshot)`; safe to share between threads for reading."""

    def __init__(
        self,
        snapshot: snap.Snapshot,
        embedder: Embedder | None = None,
        limits: check.QueryLimits = check.DEFAULT_LIMITS,
    ) -> None:
        self.snapshot = snapshot
        self.limits = limits
        self._lease_touched = time.monotonic()
        self._remote: object_store.ObjectRoot | None = None
        self._query_vectors: dict[str, np.ndarray] = {}
        self._query_lock = threading.Lock()
        self._scan: dense_scan.Int8Scan | None = None
        self._scan_lock = threading.Lock()
        tokenizer = snapshot.manifest.get("bm25", {}).get("tokenizer")
        if tokenizer != TOKENIZER_VERSION:
            raise snap.SnapshotError(
                f"snapshot was tokenized with {tokenizer!r}, this lexkb uses {TOKENIZER_VERSION!r}"
            )
        self._documents = pl.read_parquet(snapshot.table_path("documents"))
        # A hit names its document as a footnote would: by the name a long official title gives
        # the act ("General Data Protection Regulation"), else by the title.
        titles = {
            doc_id: title_name(title) or title
            for doc_id, title in zip(
                self._documents["document_id"], self._documents["title"], strict=True
            )
        }
        self._chunks = pl.read_parquet(snapshot.table_path("chunks")).with_columns(
            pl.col("document_id").replace_strict(titles, default=None).alias("document_title")
        )
        terms = pl.read_parquet(
            snapshot.table_path("bm25_terms"), columns=["term_id", "term", "idf"]
        ).sort("term_id")
        self._term_ids: dict[str, int] = dict(zip(terms["term"], terms["term_id"], strict=True))
        self._idf = terms["idf"].to_numpy().astype(np.float64)
        postings = pl.read_parquet(
            snapshot.table_path("bm25_postings"), columns=["term_id", "chunk_row", "weight"]
        )
        self._rows = postings["chunk_row"].to_numpy().astype(np.int32, copy=False)
        self._weights = postings["weight"].to_numpy().astype(np.float32, copy=False)
        term_ids = postings["term_id"].to_numpy().astype(np.int64)
        counts = np.bincount(term_ids, minlength=len(self._term_ids))
        self._indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        # Sorted by (term, row), as the build writes them: a term's rows are then searchable.
        if np.any(np.diff(term_ids * self._chunks.height + self._rows) < 0):
            raise snap.SnapshotError("bm25_postings are not sorted by term and chunk row")
        self._by_id = {cid: row for row, cid in enumerate(self._chunks["chunk_id"])}
        levels = self._chunks["chunk_level"].to_numpy()
        self._level_rows = {level: np.flatnonzero(levels == level) for level in CHUNK_LEVELS}
        self._paragraph_mask = levels == "paragraph"
        self._outside_paragraphs = np.flatnonzero(~self._paragraph_mask)
        # A search without filters reads paragraphs only: their postings apart (56% of
        # ObliQA's, 2 MB) are summed without touching section chunks' and zeroing them after.
        own = self._paragraph_mask[self._rows]
        self._paragraph_postings = (
            np.concatenate([[0], np.cumsum(np.bincount(term_ids[own], minlength=len(counts)))]),
            self._rows[own],
            self._weights[own],
        )
        self._unseen_idf = relevance.unseen_idf(int(self._paragraph_mask.sum()))
        self._aliases = self._document_aliases()
        self._resolver: Resolver | None = None
        self._document_ids = set(self._documents["document_id"])
        self._source_urls = dict(
            zip(self._documents["document_id"], self._documents["source_url"], strict=True)
        )
        self._metadata = {
            row.pop("document_id"): {
                k: (v.isoformat() if isinstance(v, date) else v) for k, v in row.items()
            }
            for row in self._documents.select(
                "document_id",
                "document_type",
                "authority_level",
                "author",
                "tags",
                "parties",
                "published",
                "effective",
                "version",
                "deprecated",
            ).to_dicts()
        }
        self._edges = pl.read_parquet(snapshot.table_path("edges"))
        self.annotations = Annotations(snapshot)
        # Read now, like every other table: after open the index needs no file of its snapshot,
        # so a prune or rollback can never take one from under a long-lived reader.
        self._standards = pl.read_parquet(
            snapshot.table_path("standards"),
            columns=["document_id", "number", "version", "paragraph_count"],
        )
        self.graph = CitationGraph(self._edges, self._by_id, len(self))
        self.embedder_name, self._vectors = self._load_vectors()
        self.query_embedder = self._query_embedder(embedder)

    def _load_vectors(self) -> tuple[str | None, np.ndarray | None]:
        """The embedder's name and chunk vectors by row; line vectors go to `_line_vectors`,
        sorted by the row that owns them (`_line_owners`, each from `_line_starts`). Mapped from
        the snapshot's raw arrays (lexkb.core.store.vector_files), or decoded from its Parquet tables when
        it predates them."""
        self._line_owners = self._line_starts = np.zeros(0, dtype=np.int64)
        self._ann: ann.Candidates | None = None
        info = self.snapshot.manifest.get("embedder")
        if not info:
            return None, None
        lines = pl.read_parquet(self.snapshot.table_path("line_embeddings"), columns=["chunk_id"])
        owners = np.array([self._by_id[c] for c in lines["chunk_id"]], dtype=np.int64)
        order = vector_files.line_order(owners)
        self._line_owners, self._line_starts = np.unique(owners[order], return_index=True)
        if vector_files.CHUNK_VECTORS in self.snapshot.manifest["files"]:
            vectors, self._line_vectors = vector_files.read(self.snapshot.path)
            if ann.FILE in self.snapshot.manifest["files"]:
                self._ann = ann.Candidates(
                    self.snapshot.path / ann.FILE,
                    len(self),
                    ann.line_owner_per_vector(
                        self._line_owners, self._line_starts, len(self._line_vectors)
                    ),
                )
            return info["name"], vectors
        table = pl.read_parquet(self.snapshot.table_path("embeddings"))
        vectors = np.zeros((len(self), info["dimension"]), dtype=np.float32)
        rows = np.array([self._by_id[c] for c in table["chunk_id"]], dtype=np.int64)
        if rows.size:
            vectors[rows] = table["vector"].to_numpy().astype(np.float32, copy=False)
        line_table = pl.read_parquet(
            self.snapshot.table_path("line_embeddings"), columns=["vector"]
        )
        self._line_vectors = np.ascontiguousarray(
            line_table["vector"].to_numpy().astype(np.float32, copy=False)[order]
            if owners.size
            else np.zeros((0, info["dimension"]), dtype=np.float32)
        )
        return info["name"], vectors

    def dense_scores(self, query: str) -> np.ndarray:
        """Cosine similarity of every chunk row to `query`. A multi-line paragraph scores the best
        of its whole text and each of its lines, so a question about one item of a list is not
        diluted by the others (transforms.embeddings)."""
        vector = self._query_vector(query)
        scores = self._vectors @ vector
        if self._line_owners.size:
            best = np.maximum.reduceat(self._line_vectors @ vector, self._line_starts)
            scores[self._line_owners] = np.maximum(scores[self._line_owners], best)
        return scores

    def cosines(self, query: str, rows: np.ndarray) -> np.ndarray:
        """`dense_scores` for some rows only (sorted or not), reading just their vectors."""
        return self._cosine_rows(self._query_vector(query), np.asarray(rows, dtype=np.int64))

    def _search_cosine(
        self, query: str, keep: np.ndarray, keyword_best: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Cosines for a search, and the rows scored (sorted; None when all were): every row
        exactly on small snapshots; on larger ones the rows an int8 scan (lexkb.dense_scan) or,
        past its crossover, a graph (lexkb.core.store.ann) nominates and the keyword side's best, exactly,
        and UNSCORED elsewhere."""
        vector = self._query_vector(query)
        scanned = None
        if self._ann is not None and np.count_nonzero(keep) >= ann.MIN_KEPT_SHARE * len(self):
            rows = self._ann.rows(vector)
        else:
            scan = self._int8_scan()
            if scan is None:
                return self.dense_scores(query), None
            scanned = scan.scan(vector)
            rows = scanned.best_rows(keep)
        if keyword_best is not None:
            rows = np.union1d(rows, keyword_best)
        cosine = np.full(len(self), UNSCORED, dtype=np.float32)
        cosine[rows] = (
            scanned.exact(rows) if scanned is not None else self._cosine_rows(vector, rows)
        )
        return cosine, rows

    def _int8_scan(self) -> dense_scan.Int8Scan | None:
        """The snapshot's int8 scan, made on first use; None below its crossover."""
        if self._scan is not None:
            return self._scan
        if len(self._vectors) + len(self._line_vectors) < dense_scan.MIN_VECTORS:
            return None
        with self._scan_lock:
            if self._scan is None:
                # Candidates are read row by row: a column-major snapshot (written before the
                # scan) is copied to row-major once.
                self._vectors = np.ascontiguousarray(self._vectors)
                self._line_vectors = np.ascontiguousarray(self._line_vectors)
                self._scan = dense_scan.Int8Scan(
                    self._vectors, self._line_vectors, self._line_owners, self._line_starts
                )
        return self._scan

    def _cosine_rows(self, vector: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """dense_scores for some rows only: own vector, or the best line where it is higher.
        Products by einsum, on this thread: a few hundred rows are too few for OpenBLAS's
        threads to pay for waking, and once woken they spin and slow the next embedding."""
        scores = np.einsum("ij,j->i", self._vectors[rows], vector).astype(np.float32, copy=False)
        owners = self._line_owners
        if not owners.size or not rows.size:
            return scores
        at = np.minimum(np.searchsorted(owners, rows), owners.size - 1)
        has = owners[at] == rows
        if not has.any():
            return scores
        ends = np.append(self._line_starts[1:], len(self._line_vectors))
        starts = self._line_starts[at[has]]
        positions, offsets = dense_scan.spans(starts, ends[at[has]] - starts)
        best = np.maximum.reduceat(
            np.einsum("ij,j->i", self._line_vectors[positions], vector), offsets
        )
        scores[has] = np.maximum(scores[has], best)
        return scores

    def _query_vector(self, query: str) -> np.ndarray:
        """The query's embedding, kept for the last QUERY_VECTORS queries: answering a question
        scores it for the search and again for its evidence, and a model call costs far more
        than the lookup."""
        with self._query_lock:
            vector = self._query_vectors.pop(query, None)
        if vector is None:
            vector = self.query_embedder.embed_query(query)
        with self._query_lock:
            self._query_vectors[query] = vector
            while len(self._query_vectors) > QUERY_VECTORS:
                self._query_vectors.pop(next(iter(self._query_vectors)))
        return vector

    def _query_embedder(self, embedder: Embedder | None) -> Embedder | None:
        """The embedder for queries: the one given, which must be the snapshot's, or the
        snapshot's own when it can run here (Voyage AI needs VOYAGE_API_KEY)."""
        if self.embedder_name is None:
            return None
        if embedder is not None:
            if embedder.name != self.embedder_name:
                raise snap.SnapshotError(
                    f"snapshot {self.version} was embedded with {self.embedder_name}; "
                    f"a query embedder {embedder.name} would compare unrelated vectors"
                )
            return embedder
        return embedder_for(self.embedder_name)

    @classmethod
    def open(
        cls,
        location: str | Path,
        verify: bool = False,
        embedder: Embedder | None = None,
        limits: check.QueryLimits = check.DEFAULT_LIMITS,
    ) -> Index:
        """`location` is an index root (follows CURRENT), one snapshot directory, or an
        `s3://` root (lexkb.core.store.object_store: CURRENT's snapshot copied once, verified). Opening
        leaves a lease (`ROOT/leases/<version>`) so pruning spares this snapshot while the
        index is in use (queries renew it). `embedder` embeds queries; it must be the one the
        snapshot was built with. `limits` bound every argument (lexkb.limits)."""
        remote = None
        if object_store.is_remote(location):
            remote = object_store.ObjectRoot(str(location))
            location = remote.fetch()
        snapshot = snap.load(location, verify=verify)
        index = cls(snapshot, embedder, limits)
        index._remote = remote
        index._touch_leases()
        return index

    def _touch_leases(self) -> None:
        touch_lease(self.snapshot.path)
        if self._remote is not None:
            self._remote.touch_lease(self.version)

    def _renew_lease(self) -> None:
        """Queries renew the lease, at most once a minute, so `snapshots list` and prune see a
        snapshot in use for as long as a service queries it."""
        if time.monotonic() - self._lease_touched > min(60.0, LEASE_MINUTES * 30):
            self._lease_touched = time.monotonic()
            self._touch_leases()

    @property
    def version(self) -> str:
        return self.snapshot.version

    def __len__(self) -> int:
        return self._chunks.height

    # search ---------------------------------------------------------------------------------
    def search(
        self,
        query: str,
        k: int = 10,
        mode: str | None = None,
        filters: Mapping[str, object] | None = None,
        expand: bool = False,
        decay: float = 0.7,
        today: date | None = None,
        min_relevance: float | None = None,
    ) -> SearchResults:
        """The k best chunks for `query`. With `expand`, the chunks each of the first k hits
        cites or is cited by join the ranking at the hit's score x decay x edge weight, so a
        paragraph the best hits depend on can displace a weaker keyword match. `filters`: see
        lexkb.filters (relative periods count back from `today`, by default the date now).

        `mode`: `hybrid` fuses BM25 and dense scores (see DENSE_WEIGHT), `vector` ranks by cosine
        similarity, `keyword` by BM25. The default is hybrid when the snapshot has embeddings
        and a query embedder is available. A dense mode that cannot run falls back to keyword
        with a warning in the results.

        Every hit carries a calibrated `relevance` (lexkb.relevance). With `min_relevance`,
        hits below it are dropped. Without it, a hybrid or vector search whose best hit is
        below relevance.RELEVANCE_FLOOR returns nothing: a dense ranking orders every paragraph
        however unrelated, so its first hit is not evidence that anything matched."""
        limits = self.limits
        query = check.text(query, "query", limits.max_query_chars)
        k = check.count(k, "k", 1, limits.max_k)
        if mode is not None and mode not in MODES:
            raise check.QueryError(f"unknown search mode {mode!r}; modes are {MODES}")
        if expand:
            decay = check.fraction(decay, "decay")
        if min_relevance is not None:
            min_relevance = check.fraction(min_relevance, "min_relevance", low_open=False)
        filters = validate_filters(filters) if filters is not None else None
        self._renew_lease()
        keep = self._filter_mask(filters, today) if filters else self._paragraph_mask
        if filters and filters.get("chunk_level") is None:
            keep = keep & self._paragraph_mask
        used, warnings = self._mode(mode)
        terms = self._terms(tokenize(query))
        if not terms.ids.size:
            # Nothing the query says occurs in this index: a dense ranking would still order
            # every paragraph by similarity to noise, so no mode returns hits.
            note = "none of the query's words occur in this index; no results"
            return SearchResults(query, used, [], [*warnings, note], self.version)
        # Rows outside the filters score 0, which `_top` never returns.
        dropped = self._outside_paragraphs if keep is self._paragraph_mask else ~keep
        keyword = covered = None
        if used != "vector" and keep is self._paragraph_mask:
            keyword, covered = self._bm25(terms, self._paragraph_postings, coverage=True)
        elif used != "vector":
            keyword, covered = self._bm25(terms, coverage=True)
            keyword[dropped] = 0.0
        cosine = candidates = None
        if used == "keyword":
            scores = keyword
        else:
            keyword_best = None if keyword is None else _best(keyword, FUSION_DEPTH)
            cosine, scored = self._search_cosine(query, keep, keyword_best)
            # Shifted by 2: positive wherever kept, as `_top` expects.
            dense = cosine + 2.0
            dense[dropped] = 0.0
            if used == "hybrid":
                scores, candidates = _fuse(keyword, dense, keyword_best, scored)
            else:
                scores, candidates = dense, scored
        order = _top(scores, k, candidates)
        via: dict[int, int] = {}
        if expand:
            scores = scores.copy()
            for seed in order.tolist():
                for other, _, edge in self.graph.neighbours(seed):
                    value = scores[seed] * decay * self.graph.weight(edge)
                    if keep[other] and value > scores[other]:
                        scores[other] = value
                        via[other] = seed
            order = _top(scores, k)
        order = self._definition_first(query, order, keep, k)
        shift = 2.0 if used == "vector" else 0.0  # report cosine similarity as the score
        if cosine is not None:
            # Rows a graph walk or a definition brought in may not have been candidates.
            unscored = order[cosine[order] == UNSCORED]
            cosine[unscored] = self._cosine_rows(self._query_vector(query), unscored)
        model = relevance.calibration_for(self.embedder_name, cosine is not None)
        sums = None if keyword is None else (keyword[order], covered[order])
        relevances = model.apply(self.relevance_features(query, order, cosine, terms, sums))
        floor = min_relevance
        if floor is None and used != "keyword":
            floor = relevance.RELEVANCE_FLOOR
            # The default floor judges the search by its best hit, and keeps the rest with it.
            keep_rows = np.full(order.size, relevances.max(initial=0.0) >= floor)
        else:
            keep_rows = relevances >= (floor or 0.0)
        if order.size and not keep_rows.any():
            warnings = [*warnings, f"no hit reaches relevance {floor}; no results"]
        order, relevances = order[keep_rows], relevances[keep_rows]
        hits = []
        for row, value in zip(order.tolist(), relevances.tolist(), strict=True):
            hit = self._hit(row, float(scores[row]) - shift, value)
            if row in via:
                hit = replace(hit, expanded_from=self._chunks["chunk_id"][via[row]])
            hits.append(hit)
        return SearchResults(query, used, hits, warnings, self.version)

    def clusters(self) -> list[dict]:
        """The snapshot's topic clusters, largest first: id, label (top words), paragraph count
        and the documents holding most of them."""
        return self.annotations.clusters(self._chunks)

    def definitions_of(self, term: str) -> list[Hit]:
        """The paragraphs defining `term` (any case), in the snapshot's order."""
        term = check.text(term, "term", self.limits.max_reference_chars)
        return [self._hit(self._by_id[c], None) for c in self.annotations.defining(term)]

    def _definition_first(
        self, query: str, order: np.ndarray, keep: np.ndarray, k: int
    ) -> np.ndarray:
        """A question about a term ("what is Client Money?") gets the paragraph defining it
        first: the one in the best hit's document when several documents define it."""
        rows = [self._by_id[c] for c in self.annotations.asked_definition(query)]
        rows = [r for r in rows if keep[r]]
        if not rows:
            return order
        documents = self._chunks["document_id"]
        lead = documents[int(order[0])] if order.size else None
        best = next((r for r in rows if documents[r] == lead), rows[0])
        rest = [r for r in order.tolist() if r != best]
        return np.array([best, *rest][:k], dtype=order.dtype)

    def _mode(self, mode: str | None) -> tuple[str, list[str]]:
        """The mode a search runs in, and why it is not the one asked for."""
        dense_ready = self._vectors is not None and self.query_embedder is not None
        if mode is None:
            mode = "hybrid" if self._vectors is not None else "keyword"
        if mode == "keyword" or dense_ready:
            return mode, []
        reason = (
            "this snapshot has no embeddings"
            if self._vectors is None
            else f"no query embedder for {self.embedder_name} here (Voyage needs VOYAGE_API_KEY)"
        )
        return "keyword", [f"{mode} search unavailable: {reason}; keyword results only"]

    def keyword_scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk row for `query` (zeros where no term matches)."""
        return self._bm25(self._terms(tokenize(query)))[0]

    def _terms(self, tokens: list[str]) -> _QueryTerms:
        known = sorted(
            (t for t in dict.fromkeys(tokens) if t in self._term_ids), key=self._term_ids.get
        )
        column = {t: i for i, t in enumerate(known)}
        per_token = np.array([column.get(t, -1) for t in tokens], dtype=np.int64)
        ids = np.array([self._term_ids[t] for t in known], dtype=np.int64)
        return _QueryTerms(tokens, ids, per_token)

    def _bm25(
        self,
        terms: _QueryTerms,
        postings: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
        coverage: bool = False,
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """One bincount over the postings of the query's words; a word the query repeats
        counts each time, as a bag of words does. `postings` (term offsets, rows, weights):
        all chunks' by default. With `coverage`, also each row's sum of the IDFs of the query
        words it holds (counted as often as the query says them), for relevance_features:
        a second bincount over the same rows costs less than looking the hits' postings up."""
        indptr, all_rows, all_weights = postings or (self._indptr, self._rows, self._weights)
        asked = terms.ids[terms.per_token[terms.per_token >= 0]]
        spans = list(zip(indptr[asked].tolist(), indptr[asked + 1].tolist(), strict=True))
        if not spans:
            empty = np.zeros(len(self), dtype=np.float32)
            return empty, (empty.copy() if coverage else None)
        rows = np.concatenate([all_rows[a:b] for a, b in spans])
        weights = np.concatenate([all_weights[a:b] for a, b in spans])
        scores = np.bincount(rows, weights=weights, minlength=len(self)).astype(np.float32)
        if not coverage:
            return scores, None
        lengths = np.array([b - a for a, b in spans])
        idf = np.repeat(self._idf[asked], lengths)
        return scores, np.bincount(rows, weights=idf, minlength=len(self))

    def term_idf(self, terms: list[str]) -> np.ndarray:
        """The IDF of each term (from lexkb.core.text.tokenize); a term no chunk holds gets the IDF of a
        word seen nowhere, the highest there is."""
        return np.array(
            [
                self._idf[self._term_ids[t]] if t in self._term_ids else self._unseen_idf
                for t in terms
            ]
        )

    @property
    def unseen_idf(self) -> float:
        return self._unseen_idf

    @property
    def paragraph_count(self) -> int:
        return int(self._paragraph_mask.sum())

    def rows(self, chunk_ids: list[str]) -> np.ndarray:
        """The row of each chunk id, in order (what relevance_features and dense scores use)."""
        return np.array([self._by_id[c] for c in chunk_ids], dtype=np.int64)

    def vocabulary_texts(self) -> list[str]:
        """Everything the index says in words: its paragraphs, section headings and document
        titles and names, for vocabularies built over the whole index."""
        paragraphs = self._chunks.filter(pl.col("chunk_level") == "paragraph")["content"]
        headings = self._chunks["section_path"].explode().drop_nulls().unique(maintain_order=True)
        names = pl.concat([self._documents["title"], self._documents["short_name"]]).drop_nulls()
        return [*paragraphs.to_list(), *headings.to_list(), *names.to_list()]

    def relevance_features(
        self,
        query: str,
        rows: np.ndarray,
        cosine: np.ndarray | None = None,
        terms: _QueryTerms | None = None,
        sums: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> np.ndarray:
        """The relevance features (lexkb.relevance.FEATURES) of chunk `rows`, ranked best first,
        for `query`; `cosine` holds every chunk's dense score (NaN where there is none).
        `sums`: the rows' BM25 scores and IDF coverage from `_bm25`, when the search has them
        (else counted here over all postings)."""
        rows = np.asarray(rows, dtype=np.int64)
        if not rows.size:
            return np.zeros((0, len(relevance.FEATURES)))
        terms = terms if terms is not None else self._terms(tokenize(query))
        # Each distinct known term counts as often as the query says it; a word the index
        # lacks adds only its IDF (the highest) to the total (lexkb.relevance).
        known = terms.per_token >= 0
        counts = np.bincount(terms.per_token[known], minlength=terms.ids.size).astype(np.float64)
        term_idf = self._idf[terms.ids]
        total = float(term_idf @ counts + np.count_nonzero(~known) * self._unseen_idf) or 1.0
        if sums is None:
            keyword, covered = self._bm25(terms, coverage=True)
            sums = (keyword[rows], covered[rows])
        fraction, coverage = sums[0] / total, sums[1] / total
        similarity = cosine[rows] if cosine is not None else np.full(rows.size, np.nan)
        return np.column_stack([similarity, fraction, coverage, np.log(np.arange(rows.size) + 1)])

    def _filter_mask(self, filters: Mapping[str, object], today: date | None = None) -> np.ndarray:
        expr = pl.lit(True)
        if any(filters.get(key) is not None for key in DOCUMENT_FILTERS):
            ids = document_ids(
                self._documents, filters, self._resolve_document, today or date.today()
            )
            expr &= pl.col("document_id").is_in(ids)
        if (level := filters.get("chunk_level")) is not None:
            levels = [level] if isinstance(level, str) else list(level)
            unknown = set(levels) - set(CHUNK_LEVELS)
            if unknown:
                raise check.QueryError(
                    f"unknown chunk_level {sorted(unknown)}; levels are {CHUNK_LEVELS}"
                )
            expr &= pl.col("chunk_level").is_in(levels)
        expr &= self.annotations.filter(filters)
        if (section := filters.get("section")) is not None:
            # A heading path prefix ("4 CLIENT ASSETS > 4.3"), a heading, or a number ("4.3",
            # "Article 5"): the section so numbered and everything under it.
            prefix = str(section).casefold().strip()
            path = pl.col("section_path").list.eval(pl.element().str.to_lowercase())
            expr &= (
                path.list.join(" > ").str.starts_with(prefix)
                | path.list.eval(
                    (pl.element() == prefix) | pl.element().str.starts_with(prefix + " ")
                ).list.any()
            ).fill_null(False)
        return self._chunks.select(expr.alias("keep"))["keep"].to_numpy()

    # lookup ---------------------------------------------------------------------------------
    def get(self, identifier: str) -> Lookup:
        """A paragraph by chunk id or reference ("Article 6(1)(a)", "GDPR Art. 6(1)", "Rule
        4.3.1 of the Lexkb Rulebook", "LSA 230, para. A8"), with its section and neighbours, and
        how it matched (see Lookup). Never None: a reference that finds nothing comes back as
        `not_found` with its reason and the closest references."""
        text = check.text(identifier, "reference", self.limits.max_reference_chars).strip()
        self._renew_lease()
        if text in self._by_id:
            return self.lookup(text)
        found = self.resolver.find(text)
        if not found.rows:
            return Lookup(text, found.match, found.reason, closest=found.closest)
        context = self.lookup(self._chunks["chunk_id"][found.rows[0]])
        others = [self._hit(row, None) for row in found.rows[1:]]
        return replace(
            context, asked=text, match=found.match, reason=found.reason, alternatives=others
        )

    @property
    def resolver(self) -> Resolver:
        """Built on the first lookup: the reference grammar compiles the index's names."""
        if self._resolver is None:
            names: dict[str, list[str]] = {}
            for doc in self._documents.iter_rows(named=True):
                names[doc["document_id"]] = document_names(
                    doc["document_key"], doc["title"], doc["short_name"], doc["aliases"] or []
                )
            for name, key in self.snapshot.manifest.get("aliases", {}).items():
                doc_id = self._aliases.get(_alias_key(key)) or self._aliases.get(_alias_key(name))
                if doc_id:
                    names.setdefault(doc_id, []).append(name)
            display = {
                doc["document_id"]: _display_name(doc)
                for doc in self._documents.iter_rows(named=True)
            }
            self._resolver = Resolver(
                self._chunks["ref"].to_list(),
                self._chunks["chunk_level"].to_list(),
                self._chunks["document_id"].to_list(),
                self._chunks["content"].to_list(),
                self._aliases,
                names,
                display,
                _alias_key,
            )
        return self._resolver

    def hit(self, chunk_id: str) -> Hit:
        """One chunk as a citation, without a score; KeyError when the id is not in this index."""
        if chunk_id not in self._by_id:
            raise KeyError(f"no chunk {chunk_id!r} in this index")
        return self._hit(self._by_id[chunk_id], None)

    def reading_position(self, chunk_id: str) -> int:
        """Where the chunk stands in its document's reading order (comparable within one
        document)."""
        return self._by_id[chunk_id]

    def lookup(self, chunk_id: str) -> Lookup:
        """The chunk with this id and what surrounds it (match `exact`)."""
        if chunk_id not in self._by_id:
            raise KeyError(f"no chunk {chunk_id!r} in this index")
        row = self._by_id[chunk_id]
        level = self._chunks["chunk_level"][row]
        parent = self._chunks["parent_chunk_id"][row]
        section = self._hit(self._by_id[parent], None) if level == "paragraph" and parent else None
        same_level = self._level_rows[level] if level in self._level_rows else np.array([row])
        position = int(np.searchsorted(same_level, row))
        document = self._chunks["document_id"][row]

        def neighbour(at: int) -> Hit | None:
            if 0 <= at < same_level.size:
                other = int(same_level[at])
                if self._chunks["document_id"][other] == document:
                    return self._hit(other, None)
            return None

        cites, cited_by = [], []
        for other, direction, _ in self.graph.neighbours(row):
            group = cites if direction == "cites" else cited_by
            if all(h.chunk_id != self._chunks["chunk_id"][other] for h in group):
                group.append(self._hit(other, None))
        unresolved = (
            self._edges.filter(
                (pl.col("source_chunk_id") == chunk_id) & pl.col("target_chunk_id").is_null()
            )
            .select("reference_text", "reference_type", "cited_document")
            .to_dicts()
        )
        hit = self._hit(row, None)
        return Lookup(
            chunk_id,
            "exact",
            f"{chunk_id} is {hit.citation}",
            hit,
            section,
            neighbour(position - 1),
            neighbour(position + 1),
            cites,
            cited_by,
            unresolved,
        )

    def hop(
        self,
        chunk_id: str,
        max_hops: int = 3,
        decay: float = 0.7,
        min_score: float = 0.01,
        k: int = 30,
    ) -> list[GraphHit]:
        """Chunks reachable from `chunk_id` (or a reference) along citations in both
        directions, best first: each edge multiplies the score by decay x its weight, paths stop
        below `min_score` or after `max_hops` edges. Each result says how it was reached."""
        limits = self.limits
        chunk_id = check.text(chunk_id, "start", limits.max_reference_chars)
        max_hops = check.count(max_hops, "max_hops", 1, limits.max_hops)
        decay = check.fraction(decay, "decay")
        min_score = check.fraction(min_score, "min_score", low_open=False)
        k = check.count(k, "k", 1, limits.max_k)
        self._renew_lease()
        if chunk_id not in self._by_id:
            matches = self.resolve(chunk_id)
            if not matches:
                raise KeyError(f"no chunk or reference {chunk_id!r} in this index")
            if len(matches) > 1:
                listed = "; ".join(f"{h.citation} ({h.chunk_id})" for h in matches[:10])
                raise check.QueryError(
                    f"{chunk_id!r} is ambiguous: it names {len(matches)} paragraphs ({listed}); "
                    "name the document or pass a chunk id"
                )
            chunk_id = matches[0].chunk_id
        reached = self.graph.walk(self._by_id[chunk_id], max_hops, decay, min_score)
        ranked = sorted(reached.items(), key=lambda item: (-item[1][0], item[0]))[:k]
        return [
            GraphHit(
                self._hit(row, score), round(float(score), SCORE_DIGITS), self.path_steps(path)
            )
            for row, (score, _, path) in ranked
        ]

    def most_cited(self, n: int = 10) -> list[Hit]:
        """The paragraphs other paragraphs cite most: what the corpus itself treats as central."""
        return [self._hit(row, None) for row in self.graph.most_cited(n)]

    def path_steps(self, path: list[tuple[int, str, int]]) -> list[Step]:
        """A graph path of (row, direction, edge) as Steps that name their chunks."""
        ids, refs = self._chunks["chunk_id"], self._chunks["ref"]
        return [self.graph.step(d, e, ids[r], refs[r]) for r, d, e in path]

    def resolve(self, identifier: str) -> list[Hit]:
        """Every paragraph (or section) the identifier names, in document order: the exact units,
        or the paragraph holding a point ("Article 6(1)(a)" -> Article 6(1)). Never a mere
        neighbour: an enclosing unit is what `get` offers, marked as such."""
        text = check.text(identifier, "reference", self.limits.max_reference_chars).strip()
        self._renew_lease()
        if text in self._by_id:
            return [self._hit(self._by_id[text], None)]
        found = self.resolver.find(text)
        if found.match not in (MatchKind.EXACT, MatchKind.CONTAINS):
            return []
        return [self._hit(row, None) for row in sorted(found.rows)]

    def documents(self) -> list[dict]:
        """Every indexed document with its catalog entry from the dbt model `standards`: number
        ("LSA 230", a short name, or the key), title, version, paragraph count."""
        rows = (
            self._documents.drop("version")
            .join(self._standards, on="document_id", how="left")
            .sort("document_key")
            .to_dicts()
        )
        return [
            {k: (v.isoformat() if isinstance(v, date) else v) for k, v in r.items()} for r in rows
        ]

    def document_paragraphs(
        self, name: str, levels: tuple[str, ...] = ("paragraph",)
    ) -> tuple[dict, pl.DataFrame]:
        """A document (by key, title or code) and its chunks of `levels` in reading order."""
        name = check.text(name, "document", self.limits.max_reference_chars)
        doc_id = self._resolve_document(name)
        document = next(d for d in self.documents() if d["document_id"] == doc_id)
        paragraphs = self._chunks.filter(
            (pl.col("document_id") == doc_id) & pl.col("chunk_level").is_in(list(levels))
        ).sort("chunk_index")
        return document, paragraphs

    # helpers --------------------------------------------------------------------------------
    @cached_property
    def _hit_rows(self) -> list[tuple]:
        """What a hit reads of each chunk, one tuple per row in Hit's field order (score and
        relevance aside): a hit then costs one list lookup where a frame row costs about 10 µs.
        Built on the first hit, so opening stays fast."""
        return [
            (
                chunk_id,
                document_key,
                document_title,
                chunk_level,
                ref,
                tuple(section_path or ()),
                page,
                content,
                self._source_urls.get(document_id),
                self._metadata.get(document_id, {}),
                content_hash,
                parent_chunk_id,
            )
            for (
                chunk_id,
                document_id,
                document_key,
                document_title,
                chunk_level,
                ref,
                section_path,
                page,
                content,
                content_hash,
                parent_chunk_id,
            ) in self._chunks.select(_HIT_COLUMNS).iter_rows()
        ]

    def _hit(self, row: int, score: float | None, relevance: float | None = None) -> Hit:
        chunk = self._hit_rows[row]
        # Positional, in Hit's field order (see _hit_rows): keywords cost a tenth of a hit more.
        return Hit(
            *chunk[:5],
            list(chunk[5]),
            chunk[6],
            None if score is None else round(float(score), SCORE_DIGITS),
            chunk[7],
            None,
            *chunk[8:11],
            self.snapshot.version,
            None if relevance is None else round(float(relevance), 4),
            chunk[11],
        )

    def _document_aliases(self) -> dict[str, str]:
        """Names a user may put before a reference or use in a filter: the document's names
        (lexkb.core.text.refs.document_names), a title code's parts ("LSA", "230"), the catalog's aliases."""
        aliases: dict[str, str] = {}
        by_key = {}
        for doc in self._documents.iter_rows(named=True):
            by_key[doc["document_key"]] = doc["document_id"]
            names = document_names(
                doc["document_key"], doc["title"], doc["short_name"], doc["aliases"] or []
            )
            if code := title_code(doc["title"]):
                names += [code[1], code[0]]
            for name in names:
                aliases.setdefault(_alias_key(name), doc["document_id"])
        for name, key in self.snapshot.manifest.get("aliases", {}).items():
            if key in by_key:
                aliases.setdefault(_alias_key(name), by_key[key])
        return aliases

    def _resolve_document(self, name: str) -> str:
        doc_id = self._aliases.get(_alias_key(name))
        if doc_id is None and name in self._document_ids:
            doc_id = name
        if doc_id is None:
            known = ", ".join(sorted(self._documents["document_key"]))
            raise ValueError(f"no document called {name!r}; documents are: {known}")
        return doc_id


def _fuse(
    keyword: np.ndarray,
    dense: np.ndarray,
    keyword_best: np.ndarray | None = None,
    dense_rows: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Weighted z-score fusion over the rows either ranking puts in its best FUSION_DEPTH; every
    other row scores 0. Scores are shifted to stay positive, as `_top` expects. Returns the
    fused scores and the rows that can be positive. `keyword_best`: the keyword side's best,
    when known; `dense_rows`: the only rows (sorted) the dense side scored, when not all."""
    fused = np.zeros(keyword.shape[0], dtype=np.float64)
    if keyword_best is None:
        keyword_best = _best(keyword, FUSION_DEPTH)
    if dense_rows is None:
        dense_best = _best(dense, FUSION_DEPTH)
    else:
        dense_best = dense_rows[_best(dense[dense_rows], FUSION_DEPTH)]
    candidates = np.union1d(keyword_best, dense_best)
    if candidates.size:
        combined = _standardise(keyword[candidates]) + DENSE_WEIGHT * _standardise(
            dense[candidates]
        )
        fused[candidates] = combined - combined.min() + 1.0
    return fused, candidates


def _standardise(values: np.ndarray) -> np.ndarray:
    values = values.astype(np.float64)
    return (values - values.mean()) / (values.std() + 1e-9)


def _best(scores: np.ndarray, k: int) -> np.ndarray:
    """Rows of the k highest positive scores, in row order; of rows tied at the k-th score,
    the first. The k-th score is found by partitioning the values alone, which is faster than
    partitioning rows (a keyword search touches about half of ObliQA's rows)."""
    if scores.size <= k:
        return np.flatnonzero(scores > 0)
    kth = np.partition(scores, scores.size - k)[scores.size - k]
    if kth <= 0:
        return np.flatnonzero(scores > 0)
    rows = np.flatnonzero(scores >= kth)
    if rows.size > k:
        above = scores[rows] > kth
        tied = np.flatnonzero(~above)[: k - np.count_nonzero(above)]
        rows = np.sort(np.concatenate([rows[above], rows[tied]]))
    return rows


def _top(scores: np.ndarray, k: int, rows: np.ndarray | None = None) -> np.ndarray:
    """Rows of the k highest positive scores; ties break by row, so equal scores come back in
    document order. `rows` (sorted): the only rows that can score above 0, when known."""
    if rows is not None:
        return rows[_top(scores[rows], k)]
    candidates = _best(scores, k)
    return candidates[np.lexsort((candidates, -scores[candidates]))]


def _alias_key(name: str) -> str:
    return re.sub(r"[\s._-]+", "", name.casefold())


def _display_name(document: dict) -> str:
    """How a citation names the document: its code or short name, else the name a long title
    gives the act, else its title."""
    code = title_code(document["title"])
    return (
        document["short_name"]
        or (" ".join(code) if code else None)
        or title_name(document["title"])
        or document["title"]
        or document["document_key"]
    )
