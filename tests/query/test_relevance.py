"""Calibrated relevance on the sample corpus: present in every mode, lower for worse matches,
and the floor that keeps a dense ranking from passing noise off as hits."""

from __future__ import annotations

import pytest

from lexkb import relevance
from lexkb.limits import QueryError

QUESTION = "how long must client money reconciliation records be kept"
NOISE = "blorfy quuxel zamwick reconciliation"  # three made-up words and one the index knows


@pytest.mark.parametrize("mode", ["keyword", "hybrid", "vector"])
def test_every_hit_has_a_relevance_in_0_1(index, mode):
    hits = index.search(QUESTION, k=5, mode=mode).hits
    assert hits and all(0 < h.relevance < 1 for h in hits)


def test_an_answer_outranks_noise_in_relevance(index):
    answer = index.search(QUESTION, k=1).hits[0]
    noise = index.search(NOISE, k=1, min_relevance=0.0).hits[0]
    assert answer.relevance > relevance.RELEVANCE_FLOOR > noise.relevance


def test_unknown_words_lower_relevance_of_the_same_paragraph(index):
    plain = index.search("client money reconciliation", k=1, mode="keyword").hits[0]
    padded = index.search("client money reconciliation blorfy quuxel", k=1, mode="keyword")
    assert padded.hits[0].chunk_id == plain.chunk_id
    assert padded.hits[0].relevance < plain.relevance


def test_the_floor_silences_noise_in_dense_modes_only(index):
    for mode in ("hybrid", "vector"):
        results = index.search(NOISE, mode=mode)
        assert results.hits == [] and "no hit reaches relevance" in results.warnings[-1]
        assert index.search(NOISE, mode=mode, min_relevance=0.0).hits
    assert index.search(NOISE, mode="keyword").hits  # the word matched; keyword says so


def test_min_relevance_drops_weaker_hits_and_is_checked(index):
    every = index.search(QUESTION, k=10, min_relevance=0.0).hits
    cut = sorted(h.relevance for h in every)[len(every) // 2]
    kept = index.search(QUESTION, k=10, min_relevance=cut).hits
    assert kept and all(h.relevance >= cut for h in kept) and len(kept) < len(every)
    with pytest.raises(QueryError, match="min_relevance"):
        index.search(QUESTION, min_relevance=1.5)


def test_the_cli_takes_min_relevance(built_root, capsys):
    from lexkb.cli.main import main

    assert main(["search", NOISE, "--index", str(built_root)]) == 0
    assert capsys.readouterr().out.strip() == "no results"
    assert main(["search", NOISE, "--min-relevance", "0", "--index", str(built_root)]) == 0
    assert "relevance" in capsys.readouterr().out


@pytest.mark.parametrize(
    "query", [QUESTION, "auditor documentation of client money money", "personal data access"]
)
def test_features_from_the_search_sums_equal_those_from_the_rows_postings(index, query):
    """A search reads each hit's BM25 share and coverage off its own bincounts; without them
    the features come from the hits' postings. Both must give the same numbers."""
    import numpy as np

    from lexkb.core.text.tokenize import tokenize

    terms = index._keyword.terms(tokenize(query))
    keyword, covered = index._keyword.scores(terms, coverage=True)
    rows = np.argsort(-keyword, kind="stable")[:8]
    assert keyword[rows[0]] > 0
    looked_up = index.relevance_features(query, rows, None, terms)
    summed = index.relevance_features(query, rows, None, terms, (keyword[rows], covered[rows]))
    assert np.allclose(looked_up[:, 1:], summed[:, 1:], rtol=1e-5)
    assert looked_up[:, 2].max() > 0 and (looked_up[:, 2] <= 1.0 + 1e-9).all()
