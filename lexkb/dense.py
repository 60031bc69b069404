"""The dense path of a search: the snapshot's vectors, the query's embedding and its cosines.

A chunk scores the cosine of its own vector or, for a multi-line paragraph, of its best line,
whichever is higher (transforms.indexing.chunk_embeddings), so a question about one item of a list is not
diluted by the others. Small snapshots score every row exactly; larger ones take candidates from
an int8 scan (lexkb.dense_scan) or, past its crossover, a graph (lexkb.core.store.ann), and score
only those exactly. A sharded snapshot's vectors stay in their shards' mapped files, read as one
array (lexkb.stacked_rows); it has no graph yet, so the int8 scan serves it at any size. The
query's embedding costs far more than any of this, so the last QUERY_VECTORS are kept.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache

import numpy as np

from lexkb import dense_scan
from lexkb.core.embed.embedders import Embedder, embedder_for
from lexkb.core.store import ann, vector_files
from lexkb.core.store import snapshot as snap
from lexkb.core.vocabulary import SearchMode
from lexkb.stacked_rows import StackedRows, Vectors, products

QUERY_VECTORS = 256  # query embeddings kept per open index


@cache
def _workers() -> ThreadPoolExecutor:
    """The process's threads for dense nominations, shared by every open index."""
    return ThreadPoolExecutor(max_workers=os.cpu_count() or 1, thread_name_prefix="lexkb-dense")


# A forked child (a server that opens its index before forking workers) has none of the
# parent's threads: it starts its own.
os.register_at_fork(after_in_child=_workers.cache_clear)


@dataclass(frozen=True)
class Nominated:
    """A query's embedding, the rows its dense side nominated (sorted; None for every row) with
    their exact cosines, and the int8 scan's scores when they came from it."""

    vector: np.ndarray
    rows: np.ndarray | None
    cosines: np.ndarray | None
    scanned: dense_scan.Scanned | None


class Dense:
    """The chunk and line vectors of one snapshot (None without embeddings) and the embedder
    that puts queries in their space; safe to share between threads."""

    def __init__(
        self,
        snapshot: snap.Snapshot,
        by_id: dict[str, int],
        n_rows: int,
        embedder: Embedder | None,
    ) -> None:
        self.n_rows = n_rows
        self.query_vectors: dict[str, np.ndarray] = {}
        self.query_lock = threading.Lock()
        self.scan: dense_scan.Int8Scan | None = None
        self.scan_lock = threading.Lock()
        # True scores every row exactly, with neither the int8 scan nor the graph: what a
        # benchmark measures their candidates against (benchmarks/speed.py).
        self.exact = False
        self.embedder_name, self.vectors = self._load(snapshot, by_id)
        self.query_embedder = self._query_embedder(embedder, snapshot.version)

    def _load(
        self, snapshot: snap.Snapshot, by_id: dict[str, int]
    ) -> tuple[str | None, Vectors | None]:
        """The embedder's name and chunk vectors by row; line vectors go to `line_vectors`,
        sorted by the row that owns them (`line_owners`, each from `line_starts`). Mapped from
        the snapshot's raw arrays (lexkb.core.store.vector_files), or decoded from its Parquet
        tables when it predates them."""
        self.line_owners: np.ndarray = np.zeros(0, dtype=np.int64)
        self.line_starts: np.ndarray = np.zeros(0, dtype=np.int64)
        self.line_vectors: Vectors = np.zeros((0, 0), dtype=np.float32)
        self.ann: ann.Candidates | None = None
        info = snapshot.manifest.get("embedder")
        if not info:
            return None, None
        lines = snapshot.read_table("line_embeddings", columns=["chunk_id"])
        owners = np.array([by_id[c] for c in lines["chunk_id"]], dtype=np.int64)
        order = vector_files.line_order(owners)
        self.line_owners, self.line_starts = np.unique(owners[order], return_index=True)
        if snapshot.sharded:
            # Each shard's lines are stored by its rows, and shards follow each other in row
            # order: stacked, they are in the order of the stable sort above.
            self.line_vectors = StackedRows(
                [np.load(p, mmap_mode="r") for p in snapshot.shard_paths(vector_files.LINE_VECTORS)]
            )
            shards = [
                np.load(p, mmap_mode="r") for p in snapshot.shard_paths(vector_files.CHUNK_VECTORS)
            ]
            return info["name"], StackedRows(shards)
        if vector_files.CHUNK_VECTORS in snapshot.manifest["files"]:
            vectors, self.line_vectors = vector_files.read(snapshot.path)
            if ann.FILE in snapshot.manifest["files"]:
                self.ann = ann.Candidates(
                    snapshot.path / ann.FILE,
                    self.n_rows,
                    ann.line_owner_per_vector(
                        self.line_owners, self.line_starts, len(self.line_vectors)
                    ),
                )
            return info["name"], vectors
        table = snapshot.read_table("embeddings")
        vectors = np.zeros((self.n_rows, info["dimension"]), dtype=np.float32)
        rows = np.array([by_id[c] for c in table["chunk_id"]], dtype=np.int64)
        if rows.size:
            vectors[rows] = table["vector"].to_numpy().astype(np.float32, copy=False)
        line_table = snapshot.read_table("line_embeddings", columns=["vector"])
        self.line_vectors = np.ascontiguousarray(
            line_table["vector"].to_numpy().astype(np.float32, copy=False)[order]
            if owners.size
            else np.zeros((0, info["dimension"]), dtype=np.float32)
        )
        return info["name"], vectors

    def _query_embedder(self, embedder: Embedder | None, version: str) -> Embedder | None:
        """The embedder for queries: the one given, which must be the snapshot's, or the
        snapshot's own when it can run here (Voyage AI needs VOYAGE_API_KEY)."""
        if self.embedder_name is None:
            return None
        if embedder is not None:
            if embedder.name != self.embedder_name:
                raise snap.SnapshotError(
                    f"snapshot {version} was embedded with {self.embedder_name}; "
                    f"a query embedder {embedder.name} would compare unrelated vectors"
                )
            return embedder
        return embedder_for(self.embedder_name)

    def mode(self, mode: str | None) -> tuple[str, list[str]]:
        """The mode a search runs in, and why it is not the one asked for."""
        dense_ready = self.vectors is not None and self.query_embedder is not None
        if mode is None:
            mode = SearchMode.HYBRID if self.vectors is not None else SearchMode.KEYWORD
        if mode == SearchMode.KEYWORD or dense_ready:
            return mode, []
        reason = (
            "this snapshot has no embeddings"
            if self.vectors is None
            else f"no query embedder for {self.embedder_name} here (Voyage needs VOYAGE_API_KEY)"
        )
        return SearchMode.KEYWORD, [f"{mode} search unavailable: {reason}; keyword results only"]

    def scores(self, query: str) -> np.ndarray:
        """Cosine similarity of every chunk row to `query`, the best of its whole text and each
        of its lines."""
        return self.vector_scores(self.query_vector(query))

    def vector_scores(self, vector: np.ndarray) -> np.ndarray:
        """`scores` for a query's embedding."""
        scores = products(self._embedded(), vector)
        if self.line_owners.size:
            best = np.maximum.reduceat(products(self.line_vectors, vector), self.line_starts)
            scores[self.line_owners] = np.maximum(scores[self.line_owners], best)
        return scores

    def nominate(self, query: str, keep: np.ndarray) -> Nominated:
        """The query's embedding and the rows its dense side scores: every row on small
        snapshots; on larger ones those an int8 scan or, past its crossover, a graph nominates
        among the kept rows."""
        return self.nominate_for(self.query_vector(query), keep, self._graph_serves(keep))

    def nominate_for(self, vector: np.ndarray, keep: np.ndarray, graph: bool) -> Nominated:
        """`nominate` for a query's embedding, with the nominated rows' exact cosines; `graph`:
        whether the graph nominates them (`_graph_serves`)."""
        if self.exact:
            return Nominated(vector, None, None, None)
        if graph and self.ann is not None:  # `graph`: the snapshot has one (`_graph_serves`)
            rows = self.ann.rows(vector)
            return Nominated(vector, rows, self.cosine_rows(vector, rows), None)
        scan = self.int8_scan()
        if scan is None:
            return Nominated(vector, None, None, None)
        scanned = scan.scan(vector)
        rows = scanned.best_rows(keep)
        return Nominated(vector, rows, scanned.exact(rows), scanned)

    def nominating(self, query: str, keep: np.ndarray) -> Future[Nominated]:
        """`nominate`, with the graph's search for candidates in a worker thread: usearch runs
        on one core and releases the GIL, so a hybrid search ranks its keyword side meanwhile
        (at 30x ObliQA 11.4 against 13.1 ms p50). The query is embedded first, here:
        onnxruntime's threads take every core while it runs (running the keyword side beside
        the embedding slowed both). The int8 scan is onnxruntime on every core too, so it runs
        here, before the keyword side: beside it, it was slower (BENCHMARKS.md)."""
        vector = self.query_vector(query)
        graph = self._graph_serves(keep)
        if graph and not self.exact:
            return _workers().submit(self.nominate_for, vector, keep, graph)
        done: Future[Nominated] = Future()
        done.set_result(self.nominate_for(vector, keep, graph))
        return done

    def _graph_serves(self, keep: np.ndarray) -> bool:
        """Whether the graph nominates for a search keeping `keep`: the snapshot has one, and the
        filters keep enough rows that its nearest neighbours are not all filtered out (else the
        scan nominates)."""
        if self.ann is None:
            return False
        return bool(np.count_nonzero(keep) >= ann.MIN_KEPT_SHARE * self.n_rows)

    def search_cosine(
        self, nominated: Nominated, keyword_best: np.ndarray | None
    ) -> tuple[np.ndarray | None, np.ndarray]:
        """The rows a search scores (sorted; None for all) and their exact cosines: those
        nominated and the keyword side's best (`keyword_best`). A row's cosine is its own
        products whatever rows it is scored with, so the nominated rows keep theirs."""
        if nominated.rows is None or nominated.cosines is None:  # none nominated, or all
            return None, self.vector_scores(nominated.vector)
        if keyword_best is None:
            return nominated.rows, nominated.cosines
        extra = np.setdiff1d(keyword_best, nominated.rows, assume_unique=True)
        if not extra.size:
            return nominated.rows, nominated.cosines
        if nominated.scanned is not None:
            found = nominated.scanned.exact(extra)
        else:
            found = self.cosine_rows(nominated.vector, extra)
        rows = np.concatenate([nominated.rows, extra])
        order = np.argsort(rows, kind="stable")
        return rows[order], np.concatenate([nominated.cosines, found])[order]

    def use_lines(self, vectors: np.ndarray, owners: np.ndarray, starts: np.ndarray) -> None:
        """Score with other line vectors (`vectors` sorted by owning row, `owners` and `starts`
        as `line_owners` and `line_starts`; all empty for none), dropping the scan made from
        the old ones: how benchmarks/line_vectors.py compares ways of making them."""
        with self.scan_lock:
            self.line_vectors, self.line_owners, self.line_starts = vectors, owners, starts
            self.scan = None

    def forget_queries(self) -> None:
        """Drop the kept query embeddings, so the next searches embed their queries anew (what
        a benchmark times as a new question)."""
        with self.query_lock:
            self.query_vectors.clear()

    def int8_scan(self) -> dense_scan.Int8Scan | None:
        """The snapshot's int8 scan, made on first use; None below its crossover."""
        if self.scan is not None:
            return self.scan
        if len(self._embedded()) + len(self.line_vectors) < dense_scan.MIN_VECTORS:
            return None
        with self.scan_lock:
            if self.scan is None:
                vectors = self._embedded()
                # Candidates are read row by row: a column-major snapshot (written before the
                # scan) is copied to row-major once; shards' files are row-major already.
                if not isinstance(vectors, StackedRows):
                    self.vectors = vectors = np.ascontiguousarray(vectors)
                    self.line_vectors = np.ascontiguousarray(self.line_vectors)
                self.scan = dense_scan.Int8Scan(
                    vectors, self.line_vectors, self.line_owners, self.line_starts
                )
        return self.scan

    def _embedded(self) -> Vectors:
        """The chunk vectors, which a search reads only where the snapshot has some (`mode`)."""
        if self.vectors is None:
            raise ValueError("this snapshot has no embeddings")
        return self.vectors

    def cosine_rows(self, vector: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """`scores` for some rows only: own vector, or the best line where it is higher.
        Products by einsum, on this thread: a few hundred rows are too few for OpenBLAS's
        threads to pay for waking, and once woken they spin and slow the next embedding."""
        scores: np.ndarray = np.einsum("ij,j->i", self._embedded()[rows], vector).astype(
            np.float32, copy=False
        )
        owners = self.line_owners
        if not owners.size or not rows.size:
            return scores
        at = np.minimum(np.searchsorted(owners, rows), owners.size - 1)
        has = owners[at] == rows
        if not has.any():
            return scores
        runs = at[has]
        starts = self.line_starts[runs]
        following = np.minimum(runs + 1, self.line_starts.size - 1)
        ends = np.where(
            runs + 1 < self.line_starts.size, self.line_starts[following], len(self.line_vectors)
        )
        positions, offsets = dense_scan.spans(starts, ends - starts)
        best = np.maximum.reduceat(
            np.einsum("ij,j->i", self.line_vectors[positions], vector), offsets
        )
        scores[has] = np.maximum(scores[has], best)
        return scores

    def query_vector(self, query: str) -> np.ndarray:
        """The query's embedding, kept for the last QUERY_VECTORS queries: answering a question
        scores it for the search and again for its evidence, and a model call costs far more
        than the lookup."""
        with self.query_lock:
            vector = self.query_vectors.pop(query, None)
        if vector is None:
            if self.query_embedder is None:  # a search asks only where there is one (`mode`)
                raise ValueError(f"no query embedder for {self.embedder_name} here")
            vector = self.query_embedder.embed_query(query)
        with self.query_lock:
            self.query_vectors[query] = vector
            while len(self.query_vectors) > QUERY_VECTORS:
                self.query_vectors.pop(next(iter(self.query_vectors)))
        return vector
