"""lexkb's BM25 against bm25s on identical tokens: the scores must agree."""

import bm25s
import numpy as np

from lexkb.core.text.tokenize import tokenize
from transforms.indexing.bm25 import BM25Params, build_bm25

TEXTS = [
    "A firm must reconcile client money records every 25 business days under Rule 4.3.1.",
    "The auditor shall document the reconciliations inspected.",
    "Client money must be held in a client account separate from the firm's own money.",
    "Records must be kept for six years.",
    "",
]


def _scores(query: str) -> np.ndarray:
    terms, postings = build_bm25(TEXTS, BM25Params())
    ids = dict(zip(terms["term"], terms["term_id"], strict=True))
    wanted = [ids[t] for t in tokenize(query) if t in ids]
    scores = np.zeros(len(TEXTS))
    for row in postings.filter(postings["term_id"].is_in(wanted)).iter_rows(named=True):
        scores[row["chunk_row"]] += row["weight"]
    return scores


def test_scores_match_bm25s_lucene_on_same_tokens():
    params = BM25Params()
    reference = bm25s.BM25(k1=params.k1, b=params.b, method="lucene")
    reference.index([tokenize(t) for t in TEXTS], show_progress=False)
    for query in ("client money reconciliation", "records kept six years", "4.3.1 auditor"):
        expected = reference.get_scores(tokenize(query))
        np.testing.assert_allclose(_scores(query), expected, rtol=1e-5, atol=1e-6)


def test_tables_are_deterministic():
    first = build_bm25(TEXTS)
    second = build_bm25(TEXTS)
    assert first[0].equals(second[0]) and first[1].equals(second[1])


def test_document_frequency_counts_chunks_not_occurrences():
    terms, _ = build_bm25(["money money money", "money", "ledger"])
    df = dict(zip(terms["term"], terms["df"], strict=True))
    assert df["money"] == 2 and df["ledger"] == 1
