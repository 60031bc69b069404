"""The read-only index a service loads: keyword search, reference lookup, document listing.

Everything lives in memory after `Index.open`, so a query costs a few numpy operations. Index is
the one object every surface (CLI, MCP server, services) queries: it checks each argument
against its limits, renews the snapshot's lease, and leaves each job to the module that holds
it:
- lexkb.search: a search's steps, in order, over the parts below;
- lexkb.tables: the snapshot's tables, with the row maps and masks every query reads;
- lexkb.keyword: BM25 postings and scoring, and the lexical relevance features;
- lexkb.dense: the vectors, the query's embedding and the cosines of a search;
- lexkb.fusion: the best rows of a ranking, and keyword and dense rankings fused;
- lexkb.filters: which chunk rows a search's filters keep;
- lexkb.lookup: chunks by id, by reference and along citations;
- lexkb.catalog: the document listing;
- lexkb.hits: chunk rows made into Hits.
Nothing here imports Dagster or unstructured.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from lexkb import defaults
from lexkb import limits as check
from lexkb.annotations import Annotations
from lexkb.catalog import Catalog
from lexkb.core.clauses.labels import decider
from lexkb.core.embed.embedders import Embedder
from lexkb.core.store import object_store
from lexkb.core.store import snapshot as snap
from lexkb.core.store.index_root import LEASE_MINUTES, touch_lease
from lexkb.core.text.tokenize import tokenize
from lexkb.core.vocabulary import ChunkLevel, SearchMode
from lexkb.dense import Dense
from lexkb.filters import validate as validate_filters
from lexkb.graph import CitationGraph, Step
from lexkb.hits import Hits
from lexkb.keyword import Keyword, QueryTerms
from lexkb.lookup import Finder, Resolver
from lexkb.results import GraphHit, Hit, Holding, Lookup, SearchResults
from lexkb.search import Searcher
from lexkb.tables import Tables

MODES = tuple(SearchMode)


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
        self._tables = tables = Tables(snapshot)
        self._chunks, self._by_id = tables.chunks, tables.by_id
        self._paragraph_mask = tables.paragraph_mask
        self._keyword = Keyword(
            snapshot, len(self), tables.paragraph_mask, tables.chunks["chunk_level"]
        )
        self.annotations = Annotations(snapshot)
        self.graph = CitationGraph(tables.edges, tables.by_id, len(self))
        self._dense = Dense(snapshot, tables.by_id, len(self), embedder)
        self._catalog = Catalog(tables)
        hits = Hits(
            tables.chunks, tables.source_urls, tables.metadata, snapshot.version, tables.unit_words
        )
        self._hit = hits.hit
        self._finder = Finder(tables, hits, self.graph, snapshot.manifest.get("aliases", {}))
        self._searcher = Searcher(
            tables, self._keyword, self._dense, self.graph, self.annotations, self._catalog, hits
        )

    @property
    def tables(self) -> Tables:
        """The snapshot's tables in memory (chunks, row maps, masks), for tools that read rows
        directly; read-only, as every query shares them."""
        return self._tables

    @property
    def dense(self) -> Dense:
        """The vectors and the query embedder (lexkb.dense), with the switches benchmarks use:
        `exact`, `use_lines`, `forget_queries`."""
        return self._dense

    def clause_labels(self, chunk_ids: list[str]) -> pl.DataFrame | None:
        """The build's clause labels of `chunk_ids` (chunk_id, clause_type, score), or
        None where the snapshot's labels were not decided by the clause model and settings this
        lexkb ships (lexkb.core.clauses.labels.decider): read, they spare `classify` embedding
        a contract again."""
        return self.annotations.clause_labels(chunk_ids, decider())

    @property
    def embedder_name(self) -> str | None:
        """The embedder the snapshot's vectors were made with; None when it has none."""
        return self._dense.embedder_name

    @property
    def query_embedder(self) -> Embedder | None:
        """What embeds queries: the snapshot's embedder, None where it cannot run here."""
        return self._dense.query_embedder

    @query_embedder.setter
    def query_embedder(self, embedder: Embedder | None) -> None:
        self._dense.query_embedder = embedder

    def dense_scores(self, query: str) -> np.ndarray:
        """Cosine similarity of every chunk row to `query`. A multi-line paragraph scores the best
        of its whole text and each of its lines, so a question about one item of a list is not
        diluted by the others (transforms.indexing.chunk_embeddings)."""
        return self._dense.scores(query)

    def cosines(self, query: str, rows: np.ndarray) -> np.ndarray:
        """`dense_scores` for some rows only (sorted or not), reading just their vectors."""
        dense = self._dense
        return dense.cosine_rows(dense.query_vector(query), np.asarray(rows, dtype=np.int64))

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
        k: int = defaults.SEARCH_LIMIT,
        mode: str | None = None,
        filters: Mapping[str, object] | None = None,
        expand: bool = False,
        decay: float = defaults.DECAY,
        today: date | None = None,
        min_relevance: float | None = None,
        rerank: bool = False,
    ) -> SearchResults:
        """The k best chunks for `query`. With `expand`, the chunks each of the first k hits
        cites or is cited by join the ranking at the hit's score x decay x edge weight, so a
        paragraph the best hits depend on can displace a weaker keyword match. `filters`: see
        lexkb.filters (relative periods count back from `today`, by default the date now).

        `mode`: `hybrid` fuses BM25 and dense scores (see lexkb.fusion), `vector` ranks by cosine
        similarity, `keyword` by BM25. The default is hybrid when the snapshot has embeddings
        and a query embedder is available. A dense mode that cannot run falls back to keyword
        with a warning in the results.

        Every hit carries a calibrated `relevance` (lexkb.relevance). With `min_relevance`,
        hits below it are dropped. Without it, a hybrid or vector search whose best hit is
        below relevance.RELEVANCE_FLOOR returns nothing: a dense ranking orders every paragraph
        however unrelated, so its first hit is not evidence that anything matched.

        With `rerank`, the relevance model trained here reads the query with each of the first
        lexkb.rerank.RERANK_DEPTH hits and reorders them (lexkb.rerank); each hit then carries
        `answers`, the model's chance that it answers the query."""
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
        return self._searcher.search(
            query,
            k=k,
            mode=mode,
            filters=filters,
            expand=expand,
            decay=decay,
            today=today,
            min_relevance=min_relevance,
            rerank=rerank,
        )

    def clusters(self) -> list[dict[str, Any]]:
        """The snapshot's topic clusters, largest first: id, label (top words), paragraph count
        and the documents holding most of them."""
        return self.annotations.clusters(self._chunks)

    def definitions_of(self, term: str) -> list[Hit]:
        """The paragraphs defining `term` (any case), in the snapshot's order."""
        term = check.text(term, "term", self.limits.max_reference_chars)
        return [self._hit(self._by_id[c], None) for c in self.annotations.defining(term)]

    def keyword_scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk row for `query` (zeros where no term matches)."""
        return self._keyword.scores(self._keyword.terms(tokenize(query)))[0]

    def term_idf(self, terms: list[str]) -> np.ndarray:
        """The IDF of each term (from lexkb.core.text.tokenize); a term no chunk holds gets the IDF of a
        word seen nowhere, the highest there is."""
        return self._keyword.term_idf(terms)

    @property
    def unseen_idf(self) -> float:
        return self._keyword.unseen_idf

    def documents_holding(self, words: str) -> list[Holding]:
        """The documents with paragraphs that hold every word of `words`, most paragraphs
        first: where a name is written, and whether it opens the document (a contract names its
        parties in its first paragraphs)."""
        rows = self._keyword.paragraph_rows(tokenize(words))
        if not rows.size:
            return []
        documents, places = self._paragraph_places
        # Rows are sorted, so each document's first occurrence is its earliest paragraph.
        keys, first, counts = np.unique(documents[rows], return_index=True, return_counts=True)
        found = [
            Holding(str(k), int(n), int(places[rows[i]]))
            for k, i, n in zip(keys, first, counts, strict=True)
        ]
        return sorted(found, key=lambda h: (-h.paragraphs, h.document_key))

    @functools.cached_property
    def _paragraph_places(self) -> tuple[np.ndarray, np.ndarray]:
        """Each row's document key, and each paragraph row's place among its document's
        paragraphs in reading order (rows are in reading order within a document)."""
        documents = self._chunks["document_key"].to_numpy()
        order = np.flatnonzero(self._paragraph_mask)
        places = np.zeros(len(documents), dtype=np.int64)
        if order.size:
            owner = documents[order]
            starts = np.concatenate([[True], owner[1:] != owner[:-1]])
            run_start = np.maximum.accumulate(np.where(starts, np.arange(order.size), 0))
            places[order] = np.arange(order.size) - run_start
        return documents, places

    @property
    def paragraph_count(self) -> int:
        return int(self._paragraph_mask.sum())

    def rows(self, chunk_ids: list[str]) -> np.ndarray:
        """The row of each chunk id, in order (what relevance_features and dense scores use)."""
        return np.array([self._by_id[c] for c in chunk_ids], dtype=np.int64)

    def vocabulary_texts(self) -> list[str]:
        """Everything the index says in words: its paragraphs, section headings and document
        titles and names, for vocabularies built over the whole index."""
        return self._tables.vocabulary_texts()

    def relevance_features(
        self,
        query: str,
        rows: np.ndarray,
        cosine: np.ndarray | None = None,
        terms: QueryTerms | None = None,
        sums: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> np.ndarray:
        """The relevance features (lexkb.relevance.FEATURES) of chunk `rows`, ranked best first,
        for `query`; `cosine` holds every chunk's dense score (NaN where there is none).
        `sums`: the rows' BM25 scores and IDF coverage from the keyword scoring, when the
        search has them (else counted here over all postings)."""
        rows = np.asarray(rows, dtype=np.int64)
        similarity = None if cosine is None else cosine[rows]
        return self._keyword.features(query, rows, similarity, terms, sums)

    # lookup ---------------------------------------------------------------------------------
    def get(self, identifier: str) -> Lookup:
        """A paragraph by chunk id or reference ("Article 6(1)(a)", "GDPR Art. 6(1)", "Rule
        4.3.1 of the Lexkb Rulebook", "LSA 230, para. A8"), with its section and neighbours, and
        how it matched (see Lookup). Never None: a reference that finds nothing comes back as
        `not_found` with its reason and the closest references."""
        text = check.text(identifier, "reference", self.limits.max_reference_chars).strip()
        self._renew_lease()
        return self._finder.get(text)

    @property
    def resolver(self) -> Resolver:
        """Built on the first lookup: the reference grammar compiles the index's names."""
        return self._finder.resolver

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
        return self._finder.lookup(chunk_id)

    def hop(
        self,
        chunk_id: str,
        max_hops: int = defaults.HOP_MAX_HOPS,
        decay: float = defaults.DECAY,
        min_score: float = 0.01,
        k: int = defaults.HOP_LIMIT,
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
        return self._finder.hop(chunk_id, max_hops, decay, min_score, k)

    def most_cited(self, n: int = 10) -> list[Hit]:
        """The paragraphs other paragraphs cite most: what the corpus itself treats as central."""
        return [self._hit(row, None) for row in self.graph.most_cited(n)]

    def path_steps(self, path: list[tuple[int, str, int]]) -> list[Step]:
        """A graph path of (row, direction, edge) as Steps that name their chunks."""
        return self._finder.path_steps(path)

    def resolve(self, identifier: str) -> list[Hit]:
        """Every paragraph (or section) the identifier names, in document order: the exact units,
        or the paragraph holding a point ("Article 6(1)(a)" -> Article 6(1)). Never a mere
        neighbour: an enclosing unit is what `get` offers, marked as such."""
        text = check.text(identifier, "reference", self.limits.max_reference_chars).strip()
        self._renew_lease()
        return self._finder.resolve(text)

    # documents ------------------------------------------------------------------------------
    def documents(self) -> list[dict[str, Any]]:
        """Every indexed document with its catalog entry from the dbt model `standards`: number
        ("LSA 230", a short name, or the key), title, version, paragraph count."""
        return self._catalog.documents()

    def document_paragraphs(
        self, name: str, levels: tuple[str, ...] = (ChunkLevel.PARAGRAPH,)
    ) -> tuple[dict[str, Any], pl.DataFrame]:
        """A document (by key, title or code) and its chunks of `levels` in reading order."""
        name = check.text(name, "document", self.limits.max_reference_chars)
        return self._catalog.paragraphs(name, levels)
