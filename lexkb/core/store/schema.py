"""Table contracts of a snapshot: the build writes these columns, the query module reads them."""

from __future__ import annotations

import polars as pl
import pyarrow as pa

SNAPSHOT_FORMAT = 4

DOCUMENTS = pa.schema(
    [
        ("document_id", pa.string()),
        ("document_key", pa.string()),
        ("title", pa.string()),
        ("short_name", pa.string()),
        ("version", pa.string()),
        ("document_type", pa.string()),
        ("authority_level", pa.string()),
        ("author", pa.string()),
        ("source_url", pa.string()),
        ("aliases", pa.list_(pa.string())),
        ("refers_to", pa.list_(pa.string())),
        ("tags", pa.list_(pa.string())),
        # A contract's parties as its preamble names them (transforms.structure.contracts).
        ("parties", pa.list_(pa.string())),
        # The place whose law a contract chooses ("New York"), as its governing-law clause says.
        ("governing_law", pa.string()),
        # How long each renewal of its term runs ("successive 1 year"), as its term clause says.
        ("renewal_term", pa.string()),
        # Other names under which the same bytes were found; the document is indexed once.
        ("duplicate_sources", pa.list_(pa.string())),
        ("published", pa.date32()),
        ("effective", pa.date32()),
        ("deprecated", pa.bool_()),
        ("format", pa.string()),
        ("source_name", pa.string()),
        ("source_sha256", pa.string()),
        ("page_count", pa.int32()),
        ("section_count", pa.int32()),
        ("chunk_count", pa.int32()),
        ("extraction_quality", pa.float32()),
    ]
)

SECTIONS = pa.schema(
    [
        ("section_id", pa.string()),
        ("document_id", pa.string()),
        ("parent_id", pa.string()),
        ("section_number", pa.string()),
        ("title", pa.string()),
        ("level", pa.int32()),
        ("sequence", pa.int32()),
        ("path", pa.list_(pa.string())),
        ("start_page", pa.int32()),
        ("end_page", pa.int32()),
    ]
)

CHUNKS = pa.schema(
    [
        ("chunk_id", pa.string()),
        ("document_id", pa.string()),
        ("document_key", pa.string()),
        ("section_id", pa.string()),
        ("chunk_level", pa.string()),
        ("chunk_index", pa.int32()),
        ("ref", pa.string()),
        ("content", pa.string()),
        ("content_hash", pa.string()),
        ("page", pa.int32()),
        ("section_path", pa.list_(pa.string())),
        ("heading", pa.string()),
        ("parent_chunk_id", pa.string()),
    ]
)

# One row per cited unit. target_chunk_id is null when the citation names an act outside the index
# (reference_type "outside") or a unit that was not found ("unresolved"); the text is kept either
# way. `match` says how the target was found: exact, enclosing (the nearest unit that exists
# around the cited one), unit ("this Chapter"), none.
EDGES = pa.schema(
    [
        ("source_chunk_id", pa.string()),
        ("target_chunk_id", pa.string()),
        ("source_document_id", pa.string()),
        ("target_document_id", pa.string()),
        ("reference_text", pa.string()),
        ("cited_document", pa.string()),
        ("reference_type", pa.string()),
        ("relation", pa.string()),
        ("match", pa.string()),
        ("weight", pa.float32()),
    ]
)

# BM25 is stored eagerly scored (bm25s-style): one weight per (term, chunk), so a query is a sum of
# postings and needs no document lengths at query time. `chunk_row` is the row in chunks.parquet.
BM25_TERMS = pa.schema(
    [
        ("term_id", pa.int32()),
        ("term", pa.string()),
        ("df", pa.int32()),
        ("idf", pa.float32()),
    ]
)

BM25_POSTINGS = pa.schema(
    [
        ("term_id", pa.int32()),
        ("chunk_row", pa.int32()),
        ("tf", pa.int32()),
        ("weight", pa.float32()),
    ]
)

# A sharded snapshot (lexkb.core.store.shards) keeps term frequencies, not weights: each shard's
# own vocabulary (terms numbered 0..n-1 in sorted order), its postings by that numbering and by
# its LOCAL chunk row, and, over all shards, each group's (chunk level's) document frequency of
# every term of the global vocabulary (`bm25_terms`). Weights are computed at open
# (lexkb.core.bm25_weights).
BM25_VOCABULARY = pa.schema([("term_id", pa.int32()), ("term", pa.string())])

BM25_TF_POSTINGS = pa.schema(
    [
        ("term_id", pa.int32()),
        ("chunk_row", pa.int32()),
        ("tf", pa.int32()),
    ]
)

BM25_GROUPS = pa.schema(
    [
        ("group", pa.string()),
        ("term_id", pa.int32()),
        ("df", pa.int32()),
    ]
)

# One vector per chunk when the build had an embedder; `publish` stores `vector` as a fixed-size
# list of the embedder's dimension (recorded in the manifest under "embedder").
EMBEDDINGS = pa.schema(
    [
        ("chunk_id", pa.string()),
        ("model", pa.string()),
        ("vector", pa.list_(pa.float32())),
    ]
)

# A vector per line of a paragraph that has more than one line of substance (a list's items, a
# definition's limbs), so a question about one item can match it; same dimension as EMBEDDINGS.
LINE_EMBEDDINGS = pa.schema(
    [
        ("chunk_id", pa.string()),
        ("line", pa.int32()),
        ("vector", pa.list_(pa.float32())),
    ]
)

# Written by the dbt model `standards` (dbt_project/models/marts/standards.sql).
STANDARDS = pa.schema(
    [
        ("document_id", pa.string()),
        ("document_key", pa.string()),
        ("number", pa.string()),
        ("title", pa.string()),
        ("version", pa.string()),
        ("paragraph_count", pa.int32()),
        ("section_count", pa.int32()),
        ("page_count", pa.int32()),
    ]
)

# A source file left out of the snapshot, and why: a person reads `reason` ("encrypted PDF: a
# password is needed"); `kind` is a stable short name of the fault; `stage` is where it was found
# (scan, parse, structure, check). `sha256` is null when the file could not be read at all.
QUARANTINE = pa.schema(
    [
        ("source_name", pa.string()),
        ("sha256", pa.string()),
        ("stage", pa.string()),
        ("kind", pa.string()),
        ("reason", pa.string()),
    ]
)

# A contract paragraph's clause type (lexkb.answers.classify: default types and CUAD's fitted
# categories), with its score; a paragraph may have several. Only documents of type "contract"
# are classified. `method`: how the label was decided (lexkb.core.clauses.labels: "fitted",
# "keyword", "zero-shot", or "keyword: no embedder" in a build without an embedder).
CLAUSES = pa.schema(
    [
        ("chunk_id", pa.string()),
        ("document_id", pa.string()),
        ("clause_type", pa.string()),
        ("score", pa.float32()),
        ("method", pa.string()),
    ]
)

# A term and the paragraph that defines it (transforms.structure.defined_terms): `start`/`end` are the
# defining line's character offsets in the chunk's text; `term_key` is the term case-folded.
DEFINITIONS = pa.schema(
    [
        ("term", pa.string()),
        ("term_key", pa.string()),
        ("document_id", pa.string()),
        ("chunk_id", pa.string()),
        ("start", pa.int32()),
        ("end", pa.int32()),
    ]
)

# A paragraph's topic cluster (transforms.indexing.topics) and the cluster's label, its top words; empty
# for a keyword-only build.
TOPICS = pa.schema(
    [
        ("chunk_id", pa.string()),
        ("cluster_id", pa.int32()),
        ("label", pa.string()),
    ]
)

TABLES: dict[str, pa.Schema] = {
    "documents": DOCUMENTS,
    "sections": SECTIONS,
    "chunks": CHUNKS,
    "edges": EDGES,
    "embeddings": EMBEDDINGS,
    "line_embeddings": LINE_EMBEDDINGS,
    "standards": STANDARDS,
    "bm25_terms": BM25_TERMS,
    "bm25_postings": BM25_POSTINGS,
    "quarantine": QUARANTINE,
    "clauses": CLAUSES,
    "definitions": DEFINITIONS,
    "topics": TOPICS,
}


def polars_schema(schema: pa.Schema) -> pl.Schema:
    """`schema` as polars types, read from its type objects alone. Why not `pl.from_arrow(
    schema.empty_table())`: pyarrow's table constructors import pandas (about 1.2 s) to check
    their input, and a build process otherwise never needs it."""
    return pl.Schema({field.name: _polars_type(field.type) for field in schema})


def empty_frame(schema: pa.Schema) -> pl.DataFrame:
    return pl.DataFrame(schema=polars_schema(schema))


def _polars_type(kind: pa.DataType) -> pl.DataType:
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return pl.List(_polars_type(kind.value_type))
    simple = {
        pa.string(): pl.String,
        pa.large_string(): pl.String,
        pa.int32(): pl.Int32,
        pa.int64(): pl.Int64,
        pa.float32(): pl.Float32,
        pa.float64(): pl.Float64,
        pa.bool_(): pl.Boolean,
        pa.date32(): pl.Date,
    }
    if kind not in simple:
        raise TypeError(f"no polars type for arrow type {kind}")
    return simple[kind]()
