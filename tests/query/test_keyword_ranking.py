"""Pruned keyword ranking (lexkb/keyword_ranking.py) against scoring every row, on real indexes.

The indexes tests build are small, so a query's postings rarely reach the size where a search
prunes; `forced` lowers those thresholds so every query below is pruned, and the ranking must
still be the exhaustive one: the same rows in the same order with the same float scores, and
any other row's score on demand. Queries are people's questions and words drawn at random from
the index's own paragraphs (fixed seed), so common and rare words mix as they do in use.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest

from lexkb import fusion, keyword_ranking
from lexkb.core.text.tokenize import tokenize
from lexkb.index import Index
from tests.conftest import shared_file

DEPTHS = (1, 5, 10, 50, 200)


def prune_all(monkeypatch: pytest.MonkeyPatch) -> None:
    """Prune every query with more than a few postings, however few rows the index holds."""
    monkeypatch.setattr(keyword_ranking, "_SMALL", 0)
    monkeypatch.setattr(keyword_ranking, "_FLOOR_POSTINGS", 16)
    monkeypatch.setattr(keyword_ranking, "_PRUNE_FROM", 0)
    monkeypatch.setattr(keyword_ranking, "_PRUNE_FROM_PER_DEPTH", 0)


@pytest.fixture()
def forced(monkeypatch: pytest.MonkeyPatch) -> None:
    prune_all(monkeypatch)


@pytest.fixture(scope="module")
def six(realdocs_built) -> Index:
    return Index.open(realdocs_built[0])


def queries(index: Index, count: int) -> Iterator[str]:
    """Questions people asked of these documents, then bags of words from random paragraphs."""
    for line in shared_file("realqa", "questions.jsonl").read_text(encoding="utf-8").splitlines():
        yield json.loads(line)["question"]
    chunks = index.tables.chunks
    paragraphs = chunks.filter(chunks["chunk_level"] == "paragraph")["content"].to_list()
    rng = np.random.default_rng(51)
    for _ in range(count):
        words = tokenize(paragraphs[int(rng.integers(len(paragraphs)))])
        if words:
            yield " ".join(rng.choice(words, size=min(len(words), 12), replace=False))


def exhaustive(index: Index, query: str, keep: np.ndarray, postings) -> np.ndarray:
    searcher = index._searcher
    terms = searcher.keyword.terms(tokenize(query))
    body, _ = searcher.keyword.scores(terms, postings)
    ranked = body + searcher.headings.for_query(terms.tokens).weighted()
    ranked[~keep] = 0.0
    return ranked


def pruned(index: Index, query: str, keep: np.ndarray, postings, depth: int):
    searcher = index._searcher
    terms = searcher.keyword.terms(tokenize(query))
    headings = searcher.headings.for_query(terms.tokens)
    asked = keyword_ranking.KeywordQuery(searcher.keyword, terms, headings, keep, postings)
    return keyword_ranking.rank(asked, depth)


@pytest.mark.usefixtures("forced")
def test_a_pruned_ranking_is_the_exhaustive_one(six: Index) -> None:
    keyword = six._searcher.keyword
    keep = six.tables.paragraph_mask
    rng = np.random.default_rng(7)
    narrowed = 0
    asked = 0
    for query in queries(six, 150):
        if not keyword.terms(tokenize(query)).summed.size:
            continue
        full = exhaustive(six, query, keep, keyword.paragraph_postings)
        for depth in DEPTHS:
            ranking = pruned(six, query, keep, keyword.paragraph_postings, depth)
            expected = fusion.top(full, depth)
            assert np.array_equal(ranking.rows[fusion.top(ranking.ranked, depth)], expected)
            assert ranking.ranked.tobytes() == full[ranking.rows].tobytes()
            others = rng.integers(0, keep.size, 40)
            assert ranking.at(others)[0].tobytes() == full[others].tobytes()
            asked += 1
            narrowed += ranking.pruned and ranking.rows.size < np.count_nonzero(full)
    # The pruning must have been exercised, not fallen back to scoring everything.
    assert narrowed > 0.6 * asked


@pytest.mark.usefixtures("forced")
def test_a_filtered_pruned_ranking_is_the_exhaustive_one(six: Index) -> None:
    """Under a filter the ranking reads every chunk's postings and keeps some rows only."""
    keyword = six._searcher.keyword
    documents = six.tables.chunks["document_id"].to_numpy()
    for document in np.unique(documents)[:3]:
        keep = documents == document
        for query in list(queries(six, 30))[-30:]:
            if not keyword.terms(tokenize(query)).summed.size:
                continue
            full = exhaustive(six, query, keep, keyword.postings)
            for depth in (1, 10, 50):
                ranking = pruned(six, query, keep, keyword.postings, depth)
                top = ranking.rows[fusion.top(ranking.ranked, depth)]
                assert np.array_equal(top, fusion.top(full, depth))
                assert keep[ranking.rows].all()


def test_searches_answer_the_same_pruned_or_not(
    index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whole searches (hybrid, keyword, filtered, expanded along citations) on the sample
    index: the same hits, scores and relevance whether the keyword side prunes or not."""
    questions = [
        "how long must client money reconciliation records be kept",
        "what must the auditor document about the reconciliations",
        "who may access personal data and for how long",
        "fees charged for custody of client assets",
        "segregated account eligible bank",
    ]
    cases = [
        {"mode": "keyword"},
        {"mode": "hybrid"},
        {"mode": "vector"},
        {"mode": "keyword", "expand": True},
        {"mode": "hybrid", "expand": True},
        {"mode": "keyword", "k": 50},
        {"mode": "hybrid", "filters": {"chunk_level": "section"}},
    ]

    def answers() -> list:
        return [
            [
                (h.chunk_id, h.score, h.relevance, h.expanded_from)
                for h in index.search(q, min_relevance=0.0, **case).hits
            ]
            for q in questions
            for case in cases
        ]

    before = answers()
    prune_all(monkeypatch)
    assert answers() == before
    assert any(before)


def test_scoring_everything_counts_the_coverage_lookups_give(six: Index) -> None:
    """The exhaustive ranking counts its best rows' coverage from the postings it read: the
    floats Keyword.coverage looks up, and any other row's looked up on demand."""
    keyword = six._searcher.keyword
    keep = six.tables.paragraph_mask
    rng = np.random.default_rng(57)
    for query in list(queries(six, 40)):
        if not keyword.terms(tokenize(query)).summed.size:
            continue
        for depth in (10, 200):
            ranking = pruned(six, query, keep, keyword.paragraph_postings, depth)
            assert not ranking.pruned
            terms = ranking.query.terms
            looked_up = keyword.coverage(terms, ranking.rows, keyword.paragraph_postings)
            assert ranking.covered.tobytes() == looked_up.tobytes()
            rows = np.concatenate([ranking.rows[::3], rng.integers(0, keep.size, 20)])
            body, covered = ranking.sums(rows)
            assert body.tobytes() == ranking.at(rows)[1].tobytes()
            expected = keyword.coverage(terms, rows, keyword.paragraph_postings)
            assert covered.tobytes() == expected.tobytes()


def test_pruning_pays_on_large_indexes_only() -> None:
    """The cost rule: 1x ObliQA (16,779 rows, at most about 30,000 postings a question) is
    scored whole; at 30x (503,370 rows) every query that reaches the floor's postings prunes,
    at a search's depth (10) and a hybrid one's (200)."""
    for depth in (10, fusion.FUSION_DEPTH):
        assert not keyword_ranking._pays(30_000, 16_779, depth)
        assert keyword_ranking._pays(keyword_ranking._SMALL, 503_370, depth)
        assert not keyword_ranking._pays(keyword_ranking._SMALL - 1, 503_370, depth)


def test_the_heading_field_summed_per_row_is_read_per_path(six: Index) -> None:
    """Scoring every row adds the heading field from its per-row postings: the floats reading
    each row's path gives, bit for bit, over every row and over paragraphs only (0 elsewhere)."""
    searcher = six._searcher
    paragraphs = six.tables.paragraph_mask
    fielded = 0
    for query in list(queries(six, 40)):
        tokens = searcher.keyword.terms(tokenize(query)).tokens
        body = np.random.default_rng(len(query)).random(paragraphs.size).astype(np.float32)
        for paragraphs_only in (False, True):
            field = searcher.headings.for_query(tokens, paragraphs_only=paragraphs_only)
            expected = body + field.weighted()
            assert field.added_to(body).tobytes() == expected.tobytes()
            if paragraphs_only:
                assert not field.weighted()[~paragraphs].any()
            fielded += bool(field.weighted().any())
    assert fielded > 40  # most queries' words are in some heading


def test_the_compiled_ranking_is_numpys(six: Index) -> None:
    """Scoring every row in compiled code (lexkb/_rank_kernel.c) gives numpy's rows, scores and
    coverage bit for bit, over every paragraph and a filtered set, at a search's depths, and
    hands its scratch back zeroed. The README's install compiles it: a missing kernel fails."""
    assert keyword_ranking._rank_kernel is not None, "installed without its kernel"
    keyword = six._searcher.keyword
    paragraphs = six.tables.paragraph_mask
    filtered = paragraphs & (np.random.default_rng(3).random(paragraphs.size) < 0.5)
    compared = 0
    for query in list(queries(six, 60)):
        terms = keyword.terms(tokenize(query))
        if not terms.summed.size:
            continue
        for keep, every in ((paragraphs, True), (filtered, False)):
            headings = six._searcher.headings.for_query(terms.tokens, paragraphs_only=every)
            postings = keyword.paragraph_postings if every else keyword.postings
            asked = keyword_ranking.KeywordQuery(
                keyword, terms, headings, keep, postings, masked=not every
            )
            for depth in DEPTHS:
                numpy = keyword_ranking._everything_numpy(asked, depth)
                compiled = keyword_ranking._everything_compiled(asked, depth)
                for field in ("rows", "ranked", "body", "covered"):
                    assert getattr(compiled, field).tobytes() == getattr(numpy, field).tobytes()
                compared += 1
    assert compared > 500
    kept = keyword_ranking._scratch._free  # the scratch the searches used, handed back
    assert kept and not any(sums.any() for pair in kept for sums in pair)


def _kernel_arguments(rows: list[int], terms: list[int], rows_type=np.int32) -> list:
    """A ranking of 10 rows over one term whose postings are `rows`, depth 3."""
    return [
        np.array([0, len(rows)], dtype=np.int64),
        np.array(rows, dtype=rows_type),
        np.ones(len(rows), dtype=np.float32),
        np.ones(1),
        np.array(terms, dtype=np.int64),
        np.zeros(0, dtype=np.int32),
        np.zeros(0),
        False,
        0.25,
        None,
        np.zeros(10),
        np.zeros(10),
        np.empty(3, dtype=np.int64),
        np.empty(3, dtype=np.float32),
        np.empty(3, dtype=np.float32),
        np.empty(3),
    ]


def test_the_kernel_refuses_what_lies_outside_its_arrays() -> None:
    """A damaged snapshot (a posting past the last row, a term past the vocabulary) or arrays
    of the wrong type raise ValueError instead of writing outside the scratch, which comes back
    zeroed; sound postings rank."""
    kernel = keyword_ranking._rank_kernel
    assert kernel is not None
    good = _kernel_arguments([2, 7], [0])
    assert kernel.rank_every_row(*good) == 2
    assert good[12][:2].tolist() == [2, 7] and good[15][:2].tolist() == [1.0, 1.0]
    for arguments in (
        _kernel_arguments([2, 99], [0]),
        _kernel_arguments([2, -1], [0]),
        _kernel_arguments([2, 7], [1]),
        _kernel_arguments([2, 7], [0], rows_type=np.int64),
    ):
        with pytest.raises(ValueError):
            kernel.rank_every_row(*arguments)
        assert not arguments[10].any() and not arguments[11].any()


def test_threads_rank_at_once(six: Index) -> None:
    """The kernel runs without the GIL and each thread keeps its own scratch: searches from
    eight threads at once answer as the same searches one after another."""
    from concurrent.futures import ThreadPoolExecutor

    asked = list(queries(six, 40))

    def hits(query: str) -> list[tuple[str, float | None]]:
        return [(h.chunk_id, h.score) for h in six.search(query, k=10, mode="keyword").hits]

    alone = [hits(q) for q in asked]
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(hits, asked * 3))
    assert together == alone * 3
    assert sum(bool(found) for found in alone) > 30
