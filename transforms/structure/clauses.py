"""The clauses of every contract by type: the snapshot's `clauses` table.

Contract paragraphs are labelled with lexkb's default clause types and CUAD's fitted
categories, decided as the query module's `classify` decides them (lexkb.answers.classify), so
a search filtered by `clause_type` and a `classify` call agree. Other documents are not
labelled: a regulation's paragraph about terminating an authorisation is not a termination
clause.

The vectors of the paragraphs, and of the first sentences read alone (lexkb.core.clauses.labels.
decide), are kept under ROOT/work/embeddings by the hash of their text, so a rebuild embeds only
the paragraphs of contracts that changed: labelling CUAD's 255 contracts embeds about 30,000
paragraphs, some ten minutes on two cores.

A build without an embedder loads no model here either: each paragraph takes the labels whose
names it says (lexkb.core.clauses.labels.decide_by_name), and each row's `method` says how its
label was decided, so a reader can tell those labels from the fitted and zero-shot ones.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from lexkb.core.clauses.labels import (
    LABELLED_TYPE,
    NO_EMBEDDER,
    build_types,
    decide,
    decide_by_name,
    methods,
)
from lexkb.core.embed.embedders import LocalEmbedder
from lexkb.core.store.schema import CLAUSES, empty_frame
from transforms.indexing.vector_cache import VectorCache
from transforms.structure.ids import sha256_text

# The cache's own name: the build's embedding cache of the same model is written by another
# step, which may run at the same time under a multiprocess executor.
CACHE_NAME = f"{LocalEmbedder.name} clauses"


def clause_table(
    chunks: pl.DataFrame,
    documents: pl.DataFrame,
    cache_dir: Path | None = None,
    embed: bool = True,
) -> pl.DataFrame:
    """(chunk_id, document_id, clause_type, score, method) for each contract paragraph and each
    type it takes; paragraph vectors kept in `cache_dir` when given. `embed` False (a build
    with no embedder): labels by the names the paragraphs say, with no model loaded."""
    contracts = documents.filter(pl.col("document_type").str.to_lowercase() == LABELLED_TYPE)
    paragraphs = chunks.filter(
        (pl.col("chunk_level") == "paragraph")
        & pl.col("document_id").is_in(contracts["document_id"].implode())
        & (pl.col("content").str.strip_chars() != "")
    )
    empty = empty_frame(CLAUSES)
    if paragraphs.is_empty():
        return empty
    texts = paragraphs["content"].to_list()
    labels = build_types()
    if embed:
        if cache_dir is not None:  # paragraphs' and their sentences' vectors, kept
            table, taken = decide(texts, labels, embed=lambda t: paragraph_vectors(t, cache_dir))
        else:
            table, taken = decide(texts, labels)
        how = methods(labels)
    else:
        table, taken = decide_by_name(texts, labels)
        how = dict.fromkeys(labels, NO_EMBEDDER)
    rows, columns = np.nonzero(taken)
    names = list(labels)
    return pl.DataFrame(
        {
            "chunk_id": paragraphs["chunk_id"].gather(rows),
            "document_id": paragraphs["document_id"].gather(rows),
            "clause_type": [names[c] for c in columns.tolist()],
            "score": table[rows, columns].astype(np.float32),
            "method": [how[names[c]] for c in columns.tolist()],
        },
        schema=empty.schema,
    )


def paragraph_vectors(texts: list[str], cache_dir: Path) -> np.ndarray:
    """The local model's vectors of `texts`, from the cache where it has them."""
    cache = VectorCache(cache_dir, CACHE_NAME)
    keys = [sha256_text(text) for text in texts]
    missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in cache}
    if missing:
        embedded = LocalEmbedder().embed_documents(list(missing.values()))
        for key, vector in zip(missing, embedded, strict=True):
            cache.put(key, vector)
        cache.save()
    return cache.vectors(keys)
