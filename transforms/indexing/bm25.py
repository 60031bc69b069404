"""BM25 tables from chunk text, scored at build time.

Each (term, chunk) posting stores its final BM25 weight (Lucene's idf and length normalisation),
as bm25s does, so a query is only a sum of postings. Terms are numbered in sorted order, so the
same chunks always give byte-identical tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import polars as pl

from lexkb.core import bm25_weights
from lexkb.core.store.schema import BM25_POSTINGS, BM25_TERMS, polars_schema
from lexkb.core.text.tokenize import TOKENIZER_VERSION, tokenize


@dataclass(frozen=True)
class BM25Params:
    """k1 0.9 and b 0.6 were chosen on half the ObliQA dev questions (MAP@10 0.622 with the
    earlier 1.5/0.75, 0.638 with these, on that half); BENCHMARKS.md has the grid."""

    k1: float = 0.9
    b: float = 0.6

    def settings(self) -> dict:
        return {"k1": self.k1, "b": self.b, "idf": "lucene", "tokenizer": TOKENIZER_VERSION}


def tokens_of(
    texts: list[str], hashes: list[str] | None = None, kept: pl.DataFrame | None = None
) -> pl.Series:
    """Each text's terms (lexkb.core.text.tokenize), as a list column. `kept` holds terms already found
    for texts by content hash (`content_hash`, `terms`: a frame as `terms_by_hash` returns):
    a text whose hash is there is not tokenized again. Rebuilding ObliQA after one document
    changed, tokenizing every chunk again was 2.4 s of its 3.2 s of tables and BM25."""
    if kept is None or hashes is None or kept.is_empty():
        return pl.Series("terms", [tokenize(text) for text in texts], dtype=pl.List(pl.String))
    wanted = pl.DataFrame({"content_hash": hashes}, schema={"content_hash": pl.String})

    def look_up(known: pl.DataFrame) -> pl.Series:
        return wanted.join(
            known.unique("content_hash"), on="content_hash", how="left", maintain_order="left"
        ).get_column("terms")

    found = look_up(kept)
    missing = found.is_null().arg_true().to_list()
    if not missing:
        return found
    fresh = pl.DataFrame(
        {
            "content_hash": [hashes[i] for i in missing],
            "terms": [tokenize(texts[i]) for i in missing],
        },
        schema={"content_hash": pl.String, "terms": pl.List(pl.String)},
    )
    return look_up(pl.concat([kept.select(fresh.columns), fresh]))


def terms_by_hash(hashes: list[str], terms: pl.Series) -> pl.DataFrame:
    """The terms of these texts by content hash, to pass as `kept` next time."""
    return pl.DataFrame({"content_hash": hashes, "terms": terms}).unique(
        "content_hash", maintain_order=True
    )


class TermCounts(NamedTuple):
    """Rows' terms counted: the sorted vocabulary, one posting per (term, row) sorted by term
    then row (term numbers index `vocabulary`), and each row's length in terms."""

    vocabulary: list[str]
    terms: np.ndarray  # int32
    rows: np.ndarray  # int32
    tf: np.ndarray  # int64
    lengths: np.ndarray  # int64, per row


def count_terms(terms_of_rows: pl.Series) -> TermCounts:
    """The term frequencies of rows whose terms `tokens_of` found."""
    lengths = terms_of_rows.list.len().fill_null(0).to_numpy().astype(np.int64)
    words = terms_of_rows.explode(empty_as_null=False).drop_nulls()
    vocabulary = words.unique().sort()
    # Terms are numbered in sorted order: an enum over the sorted vocabulary numbers them so.
    terms = words.cast(pl.Enum(vocabulary)).to_physical().to_numpy().astype(np.int64)
    n_rows = len(terms_of_rows)
    rows = np.repeat(np.arange(n_rows, dtype=np.int64), lengths)
    # One key per (term, row) pair, counted: postings come out sorted by term, then row.
    keys, tf = np.unique(terms * max(n_rows, 1) + rows, return_counts=True)
    return TermCounts(
        vocabulary.to_list(),
        (keys // max(n_rows, 1)).astype(np.int32),
        (keys % max(n_rows, 1)).astype(np.int32),
        tf.astype(np.int64),
        lengths,
    )


def reported_group(names: list[str]) -> str:
    """The group whose df and idf the terms table reports: paragraphs', else the first."""
    return "paragraph" if "paragraph" in names else min(names, default="")


def build_bm25(
    texts: list[str],
    params: BM25Params | None = None,
    groups: list[str] | None = None,
    terms_of_rows: pl.Series | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(terms, postings) for texts whose positions are the chunk rows.

    `groups` (the chunk level of each text) keeps corpus statistics apart: a section chunk
    repeats its paragraphs' words, and counting both would halve every term's idf and stretch
    the average length that paragraphs are normalised by. Each group is scored as its own corpus
    (lexkb.core.bm25_weights); the terms table reports the paragraph level's df and idf.
    `terms_of_rows`: the texts' terms when known (`tokens_of`); else they are tokenized here.
    """
    params = params or BM25Params()
    if groups is None:
        groups = [""] * len(texts)
    if terms_of_rows is None:
        terms_of_rows = tokens_of(texts)
    counts = count_terms(terms_of_rows)
    vocabulary, posting_terms, posting_rows, tf, lengths = counts
    names, group_of_row = np.unique(np.array(groups, dtype=object), return_inverse=True)
    reported = reported_group(names.tolist())
    weight = np.zeros(posting_rows.size, dtype=np.float32)
    df = np.zeros(len(vocabulary), dtype=np.int64)
    idf = np.zeros(len(vocabulary), dtype=np.float64)
    for group, name in enumerate(names):
        in_group = group_of_row[posting_rows] == group
        group_lengths = lengths[group_of_row == group]
        group_df = np.bincount(posting_terms[in_group], minlength=len(vocabulary))
        group_idf = bm25_weights.idf(group_lengths.size, group_df)
        average = bm25_weights.average_length(group_lengths.size, int(group_lengths.sum()))
        weight[in_group] = bm25_weights.weights(
            group_idf[posting_terms[in_group]],
            tf[in_group],
            lengths[posting_rows[in_group]],
            average,
            params.k1,
            params.b,
        )
        if name == reported:
            df, idf = group_df, group_idf
    term_frame = terms_frame(vocabulary, df, idf)
    postings = pl.DataFrame(
        {
            "term_id": posting_terms,
            "chunk_row": posting_rows,
            "tf": tf.astype(np.int32),
            "weight": weight,
        },
        schema=polars_schema(BM25_POSTINGS),
    )
    return term_frame, postings


def terms_frame(vocabulary: list[str] | pl.Series, df: np.ndarray, idf: np.ndarray) -> pl.DataFrame:
    """The `bm25_terms` table: terms numbered in sorted order, with the reported group's
    document frequency and IDF (a classic build's, or a partitioned build's global one)."""
    return pl.DataFrame(
        {
            "term_id": np.arange(len(vocabulary), dtype=np.int32),
            "term": vocabulary,
            "df": df.astype(np.int32),
            "idf": idf.astype(np.float32),
        },
        schema=polars_schema(BM25_TERMS),
    )
