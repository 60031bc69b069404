"""The sharded snapshot layout (issue 51): its names, defined once for writer and reader.

A partitioned build splits the corpus into PARTS of whole documents, in the sources' order. Each
part's step writes a PART DIRECTORY of the tables over its own documents, rows numbered locally
(0 = the part's first chunk):
- `sections.parquet`, `chunks.parquet` (row order = chunk row order), `embeddings.parquet`,
  `line_embeddings.parquet` (may be empty), in the snapshot's schemas;
- `bm25_vocabulary.parquet` (BM25_VOCABULARY): the part's own terms, numbered 0..n-1 in sorted
  order; `bm25_postings.parquet` (BM25_TF_POSTINGS): (local term id, local chunk row, tf),
  sorted by term then row;
- `vectors.npy`, `line_vectors.npy` (with an embedder) as lexkb.core.store.vector_files writes
  them for the part's rows, without a graph.
A part directory's files are replaced, never rewritten in place (a new file renamed over the
old): a published snapshot may hold hard links to them.

Publishing makes a SHARDED SNAPSHOT, flat as every snapshot is (snapshot.plain_name): one shard
per part, "s0000", "s0001", ... in row order, each part file kept as `<shard>.<file>`
(`s0003.chunks.parquet`), beside the GLOBAL tables (documents, edges, standards, quarantine,
clauses, definitions, topics; `bm25_terms`, the union vocabulary numbered in sorted order with the
paragraph group's df and idf; `bm25_groups`, every group's df per term). The manifest says
`"layout": "sharded"`, lists `"shards": [{"name", "rows", "part"}]` in row order, gives a sharded
table `{"files": [one per shard, in order], "rows": total}` and a global one `{"file", "rows"}`;
`settings["bm25"]["groups"]` holds each group's rows and summed length. index.duckdb holds the
global tables only. A classic snapshot has no "layout" and reads as before.

A reader concatenates shards in order: global row = the shard's offset + its local row. Why no
stored BM25 weight: a weight depends on corpus-wide statistics (each group's row count, average
length and document frequencies), which change whenever any part does, so a part whose documents
did not change never has to be rewritten; `Index.open` weights postings with the same function
the classic build uses (lexkb.core.bm25_weights), bit for bit.
"""

from __future__ import annotations

from lexkb.core.store.schema import (
    BM25_GROUPS,
    BM25_TF_POSTINGS,
    BM25_VOCABULARY,
    CHUNKS,
    EMBEDDINGS,
    LINE_EMBEDDINGS,
    SECTIONS,
    TABLES,
)

LAYOUT = "sharded"  # the manifest's "layout"; a classic snapshot has none (or "single")
CLASSIC_LAYOUTS = (None, "single")

# Tables kept per shard, by their name in the manifest and in a part directory (`<name>.parquet`).
SHARDED_TABLES = {
    "sections": SECTIONS,
    "chunks": CHUNKS,
    "embeddings": EMBEDDINGS,
    "line_embeddings": LINE_EMBEDDINGS,
    "bm25_vocabulary": BM25_VOCABULARY,
    "bm25_postings": BM25_TF_POSTINGS,
}
# Tables kept once, over every part: the classic ones that are not sharded (bm25_postings is,
# in its unweighted form), and each group's document frequencies.
GLOBAL_TABLES = {
    **{name: schema for name, schema in TABLES.items() if name not in SHARDED_TABLES},
    "bm25_groups": BM25_GROUPS,
}


def shard_name(position: int) -> str:
    """The name of the shard at `position` in row order: "s0000", "s0001", ..."""
    return f"s{position:04d}"


def table_file(name: str) -> str:
    """A table's file in a part directory, and a global table's in a snapshot."""
    return f"{name}.parquet"


def shard_file(shard: str, file: str) -> str:
    """A part file's name in the snapshot: `<shard>.<file>` ("s0003.chunks.parquet")."""
    return f"{shard}.{file}"
