"""A search's steps, in order, over the index's parts.

`Index.search` checks the arguments and renews the lease; `Searcher.search` then runs the query:
the rows the filters keep (lexkb.filters), the query's embedding and the dense side's candidates
(lexkb.dense; a graph's search runs in a worker thread meanwhile), the keyword ranking
(lexkb.keyword_ranking: BM25 over the postings with the heading field, pruned to the rows that
can be among the best), exact cosines of the candidates, fusion (lexkb.fusion), expansion along
citations, a defined term's paragraph first, with `rerank` the relevance model's reordering of
the first RERANK_DEPTH (lexkb.rerank), calibrated relevance and its floor (lexkb.relevance),
then the hits (lexkb.hits). After the keyword side's postings, every step works on candidate
rows (sorted arrays of rows and their scores), not on arrays over every chunk, so a search's
cost grows with what its words and its nearest vectors reach, not with the index
(docs/scaling.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import date

import numpy as np

from lexkb import fusion, keyword_ranking, relevance
from lexkb.annotations import Annotations
from lexkb.catalog import Catalog
from lexkb.core.text.tokenize import tokenize
from lexkb.core.vocabulary import SearchMode
from lexkb.dense import Dense
from lexkb.filters import chunk_mask, left_undated
from lexkb.graph import CitationGraph
from lexkb.headings import Headings
from lexkb.hits import Hits
from lexkb.keyword import Keyword
from lexkb.keyword_ranking import KeywordQuery, KeywordRanking
from lexkb.rerank import RERANK_DEPTH
from lexkb.rerank import rerank as reorder
from lexkb.results import SearchResults
from lexkb.tables import Tables


def _scores_of(
    order: np.ndarray, rows: np.ndarray, scores: np.ndarray, ranking: KeywordRanking | None
) -> list[float]:
    """The ranking score of each row of `order`: its candidate's, else its keyword score
    (`ranking`), else 0 (a definition the ranking did not reach)."""
    found, values = fusion.held(rows, scores, order)
    if ranking is not None and not found.all():
        values[~found] = ranking.at(order[~found])[0]
    listed: list[float] = values.tolist()
    return listed


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
        if filters and (undated := self._undated(filters, today)):
            shown = ", ".join(undated[:10]) + (
                f" and {len(undated) - 10} more" if len(undated) > 10 else ""
            )
            warnings = [
                *warnings,
                f"the date filter leaves out {len(undated)} document(s) that state no date: "
                f"{shown} (a catalog can date them)",
            ]
        terms = self.keyword.terms(tokenize(query))
        if not terms.summed.size:
            # Nothing the query says occurs in this index: a dense ranking would still order
            # every paragraph by similarity to noise, so no mode returns hits.
            note = "none of the query's words occur in this index; no results"
            return SearchResults(query, used, [], [*warnings, note], self.version)
        nominated = None
        if used != SearchMode.KEYWORD:
            nominated = self.dense.nominating(query, keep)
        ranking = None
        if used != SearchMode.VECTOR:
            # Ranking reads the heading path as a field beside the words (lexkb.headings); the
            # relevance features read the words alone, as they were fitted.
            keyword = self.keyword
            every_paragraph = keep is paragraphs
            postings = keyword.paragraph_postings if every_paragraph else keyword.postings
            headings = self.headings.for_query(terms.tokens, paragraphs_only=every_paragraph)
            query_side = KeywordQuery(
                keyword, terms, headings, keep, postings, masked=not every_paragraph
            )
            depth = k if used == SearchMode.KEYWORD else fusion.FUSION_DEPTH
            ranking = keyword_ranking.rank(query_side, depth)
        cosines = None
        if used == SearchMode.KEYWORD:
            assert ranking is not None  # ranked above in every mode but vector
            rows, scores = ranking.rows, ranking.ranked
        else:
            assert nominated is not None  # nominated above in every mode but keyword
            keyword_best = None if ranking is None else ranking.best(fusion.FUSION_DEPTH)
            scored, cosine = self.dense.search_cosine(nominated.result(), keyword_best)
            if scored is None:
                scored = np.arange(cosine.size)
            cosines = (scored, cosine)
            # Shifted by 2: positive wherever kept, as `fusion.top` expects.
            dense = np.where(keep[scored], cosine + 2.0, 0.0)
            rows, scores = scored, dense
            if used == SearchMode.HYBRID and ranking is not None:  # hybrid ranks both sides
                rows = fusion.candidates(keyword_best, scored, dense)
                scores = fusion.fuse(ranking.at(rows)[0], dense[np.searchsorted(scored, rows)])
        keyword_side = ranking
        if used != SearchMode.KEYWORD:
            ranking = None  # fused and dense scores are 0 outside their candidates
        order = rows[fusion.top(scores, k)]
        via: dict[int, int] = {}
        if expand:
            rows, scores, via = self._expanded(order, rows, scores, ranking, keep, decay)
            order = rows[fusion.top(scores, k)]
        order = self._definition_first(query, order, keep, k)
        chances = None
        if rerank and order.size:
            order, chances = reorder(query, order, [self.text(r) for r in order.tolist()])
            order, chances = order[:wanted], chances[:wanted]
        shift = 2.0 if used == SearchMode.VECTOR else 0.0  # report cosine similarity as the score
        similarity = None
        if cosines is not None:
            found, similarity = fusion.held(*cosines, order)
            if not found.all():
                # Rows a graph walk or a definition brought in may not have been candidates.
                vector = self.dense.query_vector(query)
                similarity[~found] = self.dense.cosine_rows(vector, order[~found])
        model = relevance.calibration_for(self.dense.embedder_name, cosines is not None)
        sums = None if keyword_side is None else keyword_side.sums(order)
        relevances = model.apply(self.keyword.features(query, order, similarity, terms, sums))
        floor = min_relevance
        if floor is None and used != SearchMode.KEYWORD:
            floor = relevance.RELEVANCE_FLOOR
            # The default floor judges the search by its best hit, and keeps the rest with it.
            keep_rows = np.full(order.size, relevances.max(initial=0.0) >= floor)
        else:
            keep_rows = relevances >= (floor or 0.0)
        if order.size and not keep_rows.any():
            warnings = [*warnings, f"no hit reaches relevance {floor}; no results"]
        if not keep_rows.all():
            order, relevances = order[keep_rows], relevances[keep_rows]
            if chances is not None:
                chances = chances[keep_rows]
        score_of = _scores_of(order, rows, scores, ranking)
        hits = []
        for n, (row, value) in enumerate(zip(order.tolist(), relevances.tolist(), strict=True)):
            hit = self.hit(row, score_of[n] - shift, value)
            if chances is not None:
                hit.answers = round(float(chances[n]), 4)
            if row in via:
                hit = replace(hit, expanded_from=self.tables.chunks["chunk_id"][via[row]])
            hits.append(hit)
        return SearchResults(query, used, hits, warnings, self.version)

    def _expanded(
        self,
        order: np.ndarray,
        rows: np.ndarray,
        scores: np.ndarray,
        ranking: KeywordRanking | None,
        keep: np.ndarray,
        decay: float,
    ) -> tuple[np.ndarray, np.ndarray, dict[int, int]]:
        """The scores after each of the first hits (`order`, best first) lifts the rows it
        cites or is cited by to its own score x decay x the edge's weight, where that is
        higher: the candidates and the rows reached (sorted), their scores, and the seed each
        lifted row came by. A row outside the candidates starts from its keyword score
        (`ranking`), or 0 in a fused or dense ranking."""
        found = {seed: self.graph.neighbours(seed) for seed in order.tolist()}
        reached = np.array([o for near in found.values() for o, _, _ in near], dtype=np.int64)
        grown = fusion.union(rows, reached)
        values = np.zeros(grown.size, dtype=scores.dtype)
        values[np.searchsorted(grown, rows)] = scores
        new = np.setdiff1d(grown, rows, assume_unique=True)
        if ranking is not None and new.size:
            values[np.searchsorted(grown, new)] = ranking.at(new)[0]
        position = {row: n for n, row in enumerate(grown.tolist())}
        via: dict[int, int] = {}
        for seed, near in found.items():
            for other, _, edge in near:
                value = values[position[seed]] * decay * self.graph.weight(edge)
                if keep[other] and value > values[position[other]]:
                    values[position[other]] = value
                    via[other] = seed
        return grown, values, via

    def _undated(self, filters: Mapping[str, object], today: date | None) -> list[str]:
        return left_undated(
            self.tables.documents, filters, self.catalog.document_id, today or date.today()
        )

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
