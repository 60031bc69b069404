"""The clauses of every contract by type: the snapshot's `clauses` table.

Contract paragraphs are labelled with lexkb's default clause types by the same zero-shot scorer
the query module's `classify` uses (lexkb.answers.classify), so a search filtered by
`clause_type` and a `classify` call agree. Other documents are not labelled: a regulation's
paragraph about terminating an authorisation is not a termination clause.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from lexkb.answers.classify import MIN_SCORE, scores
from lexkb.clause_types import DEFAULT_TYPES
from lexkb.schema import CLAUSES, empty_frame


def clause_table(chunks: pl.DataFrame, documents: pl.DataFrame) -> pl.DataFrame:
    """(chunk_id, document_id, clause_type, score) for each contract paragraph and each default
    type it reaches MIN_SCORE on."""
    contracts = documents.filter(pl.col("document_type").str.to_lowercase() == "contract")
    paragraphs = chunks.filter(
        (pl.col("chunk_level") == "paragraph")
        & pl.col("document_id").is_in(contracts["document_id"].implode())
        & (pl.col("content").str.strip_chars() != "")
    )
    empty = empty_frame(CLAUSES)
    if paragraphs.is_empty():
        return empty
    table = scores(paragraphs["content"].to_list(), DEFAULT_TYPES)
    rows, columns = np.nonzero(table >= MIN_SCORE)
    names = list(DEFAULT_TYPES)
    return pl.DataFrame(
        {
            "chunk_id": paragraphs["chunk_id"].gather(rows),
            "document_id": paragraphs["document_id"].gather(rows),
            "clause_type": [names[c] for c in columns.tolist()],
            "score": table[rows, columns].astype(np.float32),
        },
        schema=empty.schema,
    )
