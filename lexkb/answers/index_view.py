"""IndexView: what the answer tools read of an open index, and nothing more.

`lexkb.Index` is the public face of a snapshot and also holds the parts its own modules share;
the answer tools need only the members below, so a change to the rest of Index cannot reach
them unseen. Index satisfies this structurally (tests/answers/test_index_view.py checks each
member against it and that lexkb/answers reads no other).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np
    import polars as pl

    from lexkb.core.embed.embedders import Embedder
    from lexkb.graph import CitationGraph, Step
    from lexkb.limits import QueryLimits
    from lexkb.results import Hit, Holding, Lookup, SearchResults


class IndexView(Protocol):
    """The members of `lexkb.Index` that lexkb/answers uses."""

    limits: QueryLimits
    graph: CitationGraph

    @property
    def version(self) -> str: ...

    # search and its scoring
    def search(
        self,
        query: str,
        *,
        k: int = ...,
        mode: str | None = ...,
        filters: Mapping[str, object] | None = ...,
        min_relevance: float | None = ...,
        rerank: bool = ...,
    ) -> SearchResults: ...

    def term_idf(self, terms: list[str]) -> np.ndarray: ...

    @property
    def unseen_idf(self) -> float: ...

    def documents_holding(self, words: str) -> list[Holding]: ...

    @property
    def paragraph_count(self) -> int: ...

    def vocabulary_texts(self) -> list[str]: ...

    def rows(self, chunk_ids: list[str]) -> np.ndarray: ...

    def cosines(self, query: str, rows: np.ndarray) -> np.ndarray: ...

    @property
    def embedder_name(self) -> str | None: ...

    @property
    def query_embedder(self) -> Embedder | None: ...

    # lookup
    def get(self, identifier: str) -> Lookup: ...

    def hit(self, chunk_id: str) -> Hit: ...

    def lookup(self, chunk_id: str) -> Lookup: ...

    def resolve(self, identifier: str) -> list[Hit]: ...

    def reading_position(self, chunk_id: str) -> int: ...

    def path_steps(self, path: list[tuple[int, str, int]]) -> list[Step]: ...

    def most_cited(self, n: int = ...) -> list[Hit]: ...

    # documents
    def documents(self) -> list[dict[str, Any]]: ...

    def document_paragraphs(
        self, name: str, levels: tuple[str, ...] = ...
    ) -> tuple[dict[str, Any], pl.DataFrame]: ...

    def clause_labels(self, chunk_ids: list[str]) -> pl.DataFrame | None: ...
