"""A search's steps, in order, over the index's parts.

`Index.search` checks the arguments and renews the lease; `Searcher.search` then runs the query:
the rows the filters keep (lexkb.filters), BM25 over the postings (lexkb.keyword), cosines over
the dense candidates (lexkb.dense), fusion (lexkb.fusion), expansion along citations, a defined
term's paragraph first, with `rerank` the relevance model's reordering of the first
RERANK_DEPTH (lexkb.rerank), calibrated relevance and its floor (lexkb.relevance), then the hits
(lexkb.hits). Every step works on arrays over all chunk rows, so a keyword search costs a few
numpy operations and no Python loop runs over the index's rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import date

import numpy as np

from lexkb import fusion, relevance
from lexkb.annotations import Annotations
from lexkb.catalog import Catalog
from lexkb.core.text.tokenize import tokenize
from lexkb.core.vocabulary import SearchMode
from lexkb.dense import UNSCORED, Dense
from lexkb.filters import chunk_mask
from lexkb.graph import CitationGraph
from lexkb.headings import HEADING_WEIGHT, Headings
from lexkb.hits import Hits
from lexkb.keyword import Keyword
from lexkb.rerank import RERANK_DEPTH
from lexkb.rerank import rerank as reorder
from lexkb.results import SearchResults
from lexkb.tables import Tables


class Searcher:
    """Runs searches over one open index's parts; holds nothing a search changes."""

    def __init__(
        self,
        tables: Tables,
        keyword: Keyword,
        dense: Dense,
        graph: CitationGraph,
        annotations: Annotations,
        catalog: Catalog,
        hits: Hits,
    ) -> None:
        self.tables = tables
        self.keyword = keyword
        self.dense = dense
        self.graph = graph
        self.annotations = annotations
        self.catalog = catalog
        self.hit = hits.hit
        self.text = hits.text
        self.version = hits.version
        self._headings: Headings | None = None

    def search(
        self,
        query: str,
        *,
        k: int,
        mode: str | None,
        filters: Mapping[str, object] | None,
        expand: bool,
        decay: float,
        today: date | None,
        min_relevance: float | None,
        rerank: bool,
    ) -> SearchResults:
        """The k best chunks for `query`, with arguments already checked (see Index.search)."""
        wanted = k
        if rerank:
            k = max(k, RERANK_DEPTH)
        paragraphs = self.tables.paragraph_mask
        keep = (
            chunk_mask(
                self.tables.chunks,
                self.tables.documents,
                filters,
                self.catalog.document_id,
                self.annotations.filter,
                today,
            )
            if filters
            else paragraphs
        )
        if filters and filters.get("chunk_level") is None:
            keep = keep & paragraphs
        used, warnings = self.dense.mode(mode)
        terms = self.keyword.terms(tokenize(query))
        if not terms.ids.size:
            # Nothing the query says occurs in this index: a dense ranking would still order
            # every paragraph by similarity to noise, so no mode returns hits.
            note = "none of the query's words occur in this index; no results"
            return SearchResults(query, used, [], [*warnings, note], self.version)
        # Rows outside the filters score 0, which `fusion.top` never returns.
        dropped = self.tables.outside_paragraphs if keep is paragraphs else ~keep
        keyword = None
        if used != SearchMode.VECTOR and keep is paragraphs:
            keyword, _ = self.keyword.scores(terms, self.keyword.paragraph_postings)
        elif used != SearchMode.VECTOR:
            keyword, _ = self.keyword.scores(terms)
            keyword[dropped] = 0.0
        cosine = candidates = None
        # Ranking reads the heading path as a field beside the words (lexkb.headings); the
        # relevance features read the words alone, as they were fitted.
        ranked = None
        if keyword is not None:
            heading = self.headings.scores(terms.tokens, paragraphs_only=keep is paragraphs)
            if keep is not paragraphs:
                heading[dropped] = 0.0
            ranked = keyword + np.float32(HEADING_WEIGHT) * heading
        if used == SearchMode.KEYWORD:
            scores = ranked
        else:
            keyword_best = None if ranked is None else fusion.best(ranked, fusion.FUSION_DEPTH)
            cosine, scored = self.dense.search_cosine(query, keep, keyword_best)
            # Shifted by 2: positive wherever kept, as `fusion.top` expects.
            dense = cosine + 2.0
            dense[dropped] = 0.0
            if used == SearchMode.HYBRID:
                scores, candidates = fusion.fuse(ranked, dense, keyword_best, scored)
            else:
                scores, candidates = dense, scored
        order = fusion.top(scores, k, candidates)
        via: dict[int, int] = {}
        if expand:
            scores = scores.copy()
            for seed in order.tolist():
                for other, _, edge in self.graph.neighbours(seed):
                    value = scores[seed] * decay * self.graph.weight(edge)
                    if keep[other] and value > scores[other]:
                        scores[other] = value
                        via[other] = seed
            order = fusion.top(scores, k)
        order = self._definition_first(query, order, keep, k)
        chances = None
        if rerank and order.size:
            order, chances = reorder(query, order, [self.text(r) for r in order.tolist()])
            order, chances = order[:wanted], chances[:wanted]
        shift = 2.0 if used == SearchMode.VECTOR else 0.0  # report cosine similarity as the score
        if cosine is not None:
            # Rows a graph walk or a definition brought in may not have been candidates.
            unscored = order[cosine[order] == UNSCORED]
            cosine[unscored] = self.dense.cosine_rows(self.dense.query_vector(query), unscored)
        model = relevance.calibration_for(self.dense.embedder_name, cosine is not None)
        sums = None if keyword is None else (keyword[order], self.keyword.coverage(terms, order))
        relevances = model.apply(self.keyword.features(query, order, cosine, terms, sums))
        floor = min_relevance
        if floor is None and used != SearchMode.KEYWORD:
            floor = relevance.RELEVANCE_FLOOR
            # The default floor judges the search by its best hit, and keeps the rest with it.
            keep_rows = np.full(order.size, relevances.max(initial=0.0) >= floor)
        else:
            keep_rows = relevances >= (floor or 0.0)
        if order.size and not keep_rows.any():
            warnings = [*warnings, f"no hit reaches relevance {floor}; no results"]
        order, relevances = order[keep_rows], relevances[keep_rows]
        if chances is not None:
            chances = chances[keep_rows]
        hits = []
        for n, (row, value) in enumerate(zip(order.tolist(), relevances.tolist(), strict=True)):
            hit = self.hit(row, float(scores[row]) - shift, value)
            if chances is not None:
                hit.answers = round(float(chances[n]), 4)
            if row in via:
                hit = replace(hit, expanded_from=self.tables.chunks["chunk_id"][via[row]])
            hits.append(hit)
        return SearchResults(query, used, hits, warnings, self.version)

    @property
    def headings(self) -> Headings:
        """The heading-path field, built on the first search."""
        if self._headings is None:
            self._headings = Headings(self.tables.chunks, self.tables.paragraph_mask)
        return self._headings

    def _definition_first(
        self, query: str, order: np.ndarray, keep: np.ndarray, k: int
    ) -> np.ndarray:
        """A question about a term ("what is Client Money?") gets the paragraph defining it
        first: the one in the best hit's document when several documents define it."""
        rows = [self.tables.by_id[c] for c in self.annotations.asked_definition(query)]
        rows = [r for r in rows if keep[r]]
        if not rows:
            return order
        documents = self.tables.chunks["document_id"]
        lead = documents[int(order[0])] if order.size else None
        best = next((r for r in rows if documents[r] == lead), rows[0])
        rest = [r for r in order.tolist() if r != best]
        return np.array([best, *rest][:k], dtype=order.dtype)
