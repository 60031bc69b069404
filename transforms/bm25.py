"""BM25 tables from chunk text, scored at build time.

Each (term, chunk) posting stores its final BM25 weight (Lucene's idf and length normalisation),
as bm25s does, so a query is only a sum of postings. Terms are numbered in sorted order, so the
same chunks always give byte-identical tables.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from lexkb.schema import BM25_POSTINGS, BM25_TERMS
from lexkb.tokenize import TOKENIZER_VERSION, tokenize


@dataclass(frozen=True)
class BM25Params:
    """k1 0.9 and b 0.6 were chosen on half the ObliQA dev questions (MAP@10 0.622 with the
    earlier 1.5/0.75, 0.638 with these, on that half); BENCHMARKS.md has the grid."""

    k1: float = 0.9
    b: float = 0.6

    def settings(self) -> dict:
        return {"k1": self.k1, "b": self.b, "idf": "lucene", "tokenizer": TOKENIZER_VERSION}


def build_bm25(
    texts: list[str], params: BM25Params | None = None, groups: list[str] | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(terms, postings) for texts whose positions are the chunk rows.

    `groups` (the chunk level of each text) keeps corpus statistics apart: a section chunk
    repeats its paragraphs' words, and counting both would halve every term's idf and stretch
    the average length that paragraphs are normalised by. Each group is scored as its own corpus;
    the terms table reports the paragraph level's df and idf.
    """
    params = params or BM25Params()
    if groups is None:
        groups = [""] * len(texts)
    token_lists = [tokenize(text) for text in texts]
    vocabulary = sorted({term for tokens in token_lists for term in tokens})
    term_ids = {term: index for index, term in enumerate(vocabulary)}
    lengths = np.fromiter((len(tokens) for tokens in token_lists), dtype=np.int64, count=len(texts))
    rows = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
    terms = np.fromiter(
        (term_ids[t] for tokens in token_lists for t in tokens),
        dtype=np.int64,
        count=int(lengths.sum()),
    )
    n_docs = len(texts)
    # One key per (term, row) pair, counted: postings come out sorted by term, then row.
    keys, tf = np.unique(terms * max(n_docs, 1) + rows, return_counts=True)
    posting_terms = (keys // max(n_docs, 1)).astype(np.int32)
    posting_rows = (keys % max(n_docs, 1)).astype(np.int32)
    names, group_of_row = np.unique(np.array(groups, dtype=object), return_inverse=True)
    reported = int(np.flatnonzero(names == "paragraph")[0]) if "paragraph" in names else 0
    weight = np.zeros(posting_rows.size, dtype=np.float64)
    reported_df = np.zeros(len(vocabulary), dtype=np.int64)
    reported_idf = np.zeros(len(vocabulary), dtype=np.float64)
    for group in range(len(names)):
        in_group = group_of_row[posting_rows] == group
        group_lengths = lengths[group_of_row == group]
        size = group_lengths.size
        df = np.bincount(posting_terms[in_group], minlength=len(vocabulary))
        idf = np.log(1.0 + (size - df + 0.5) / (df + 0.5))
        average = float(group_lengths.mean()) if size and group_lengths.sum() else 1.0
        norm = params.k1 * (1.0 - params.b + params.b * lengths[posting_rows[in_group]] / average)
        # Lucene 8+ dropped BM25's constant (k1 + 1) numerator factor; so do we (and bm25s),
        # which keeps scores comparable with those systems without changing any ranking.
        weight[in_group] = idf[posting_terms[in_group]] * tf[in_group] / (tf[in_group] + norm)
        if group == reported:
            reported_df, reported_idf = df, idf
    df, idf = reported_df, reported_idf
    term_frame = pl.DataFrame(
        {
            "term_id": np.arange(len(vocabulary), dtype=np.int32),
            "term": vocabulary,
            "df": df.astype(np.int32),
            "idf": idf.astype(np.float32),
        },
        schema=pl.Schema(pl.from_arrow(BM25_TERMS.empty_table()).schema),
    )
    postings = pl.DataFrame(
        {
            "term_id": posting_terms,
            "chunk_row": posting_rows,
            "tf": tf.astype(np.int32),
            "weight": weight.astype(np.float32),
        },
        schema=pl.Schema(pl.from_arrow(BM25_POSTINGS.empty_table()).schema),
    )
    return term_frame, postings
