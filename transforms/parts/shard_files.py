"""Writing the parts of a sharded snapshot (lexkb.core.store.shards has the layout).

A part step writes its part directory with `write_part`; the merge reads them all, one at a time,
for the global BM25 tables (`global_bm25`); transforms.publishing.publish.publish_sharded publishes them.
`split` makes the same from a classic build's staged tables, so that a test or a benchmark can
compare a sharded snapshot with the classic one of the same build.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from lexkb.core import bm25_weights
from lexkb.core.store import shards, vector_files
from lexkb.core.store.schema import (
    BM25_GROUPS,
    BM25_TF_POSTINGS,
    BM25_VOCABULARY,
    polars_schema,
)
from transforms.indexing.bm25 import BM25Params, count_terms, reported_group, terms_frame, tokens_of
from transforms.publishing.publish import dimension_of, stored_schema, write_table

# The part tables a part step hands to `write_part` (the BM25 ones are made there).
PART_TABLES = ("sections", "chunks", "embeddings", "line_embeddings")


def part_bm25(terms_of_rows: pl.Series) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A part's own vocabulary (term_id, term; numbered in sorted order) and its postings
    (term_id, chunk_row, tf; local ids and rows, sorted by term then row). `terms_of_rows`:
    what transforms.indexing.bm25.tokens_of returns for the part's chunks, in row order."""
    counts = count_terms(terms_of_rows)
    vocabulary = pl.DataFrame(
        {
            "term_id": np.arange(len(counts.vocabulary), dtype=np.int32),
            "term": counts.vocabulary,
        },
        schema=polars_schema(BM25_VOCABULARY),
    )
    postings = pl.DataFrame(
        {"term_id": counts.terms, "chunk_row": counts.rows, "tf": counts.tf.astype(np.int32)},
        schema=polars_schema(BM25_TF_POSTINGS),
    )
    return vocabulary, postings


def write_part(
    directory: Path,
    tables: dict[str, pl.DataFrame],
    terms_of_rows: pl.Series,
    dimension: int | None,
) -> None:
    """Write a part directory: `tables` (PART_TABLES, over the part's documents, in row order)
    as the snapshot stores them, its BM25 vocabulary and postings, and with an embedder
    (`dimension`) its vectors (lexkb.core.store.vector_files, without a graph). Each file is
    written aside and renamed over the old one, never rewritten in place: a published
    snapshot may hold a hard link to the old one (transforms.publishing.publish.publish_sharded)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    aside = directory / f".writing-{uuid.uuid4().hex[:8]}"
    aside.mkdir()
    try:
        for name in PART_TABLES:
            schema = stored_schema(name, shards.SHARDED_TABLES[name], dimension)
            write_table(aside / shards.table_file(name), tables[name], schema)
        vocabulary, postings = part_bm25(terms_of_rows)
        write_table(aside / shards.table_file("bm25_vocabulary"), vocabulary, BM25_VOCABULARY)
        write_table(aside / shards.table_file("bm25_postings"), postings, BM25_TF_POSTINGS)
        vector_names = (vector_files.CHUNK_VECTORS, vector_files.LINE_VECTORS)
        if dimension:
            vector_files.write(
                aside,
                tables["chunks"],
                tables["embeddings"],
                tables["line_embeddings"],
                dimension,
                graph=False,
            )
        else:
            for name in vector_names:
                (directory / name).unlink(missing_ok=True)
        for file in aside.iterdir():
            os.replace(file, directory / file.name)
    finally:
        shutil.rmtree(aside, ignore_errors=True)


def global_bm25(
    part_dirs: Sequence[Path], params: BM25Params
) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, dict[str, int]]]:
    """The global BM25 tables over part directories (in row order): `bm25_terms` (the union
    vocabulary numbered in sorted order, with the paragraph group's df and idf, as
    transforms.indexing.bm25.build_bm25 reports them), `bm25_groups` (each group's df per term) and the
    groups' statistics for the manifest's `bm25.groups` ({level: {"rows", "length_sum"}}).
    Parts are read one at a time, so memory is one part's postings plus the union vocabulary.
    `params` is the build's: k1 and b enter weights only, which `Index.open` computes."""
    del params  # df, idf and lengths do not depend on k1 and b
    union = pl.Series("term", [], dtype=pl.String)
    for part in part_dirs:
        terms = pl.read_parquet(Path(part) / shards.table_file("bm25_vocabulary"))["term"]
        union = pl.concat([union, terms]).unique()
    union = union.sort()
    global_id = pl.DataFrame({"term": union, "global": np.arange(len(union), dtype=np.int64)})
    df: dict[str, np.ndarray] = {}
    stats: dict[str, dict[str, int]] = {}
    for part in part_dirs:
        part = Path(part)
        vocabulary = pl.read_parquet(part / shards.table_file("bm25_vocabulary")).sort("term_id")
        local_to_global = vocabulary.join(global_id, on="term", how="left", maintain_order="left")[
            "global"
        ].to_numpy()
        postings = pl.read_parquet(part / shards.table_file("bm25_postings"))
        chunks = pl.read_parquet(part / shards.table_file("chunks"), columns=["chunk_level"])
        levels = chunks["chunk_level"].to_numpy()
        rows = postings["chunk_row"].to_numpy().astype(np.int64)
        tf = postings["tf"].to_numpy().astype(np.int64)
        terms = local_to_global[postings["term_id"].to_numpy()]
        lengths = np.bincount(rows, weights=tf, minlength=len(levels)).astype(np.int64)
        for level in np.unique(levels).tolist():
            mine = levels == level
            group = stats.setdefault(level, {"rows": 0, "length_sum": 0})
            group["rows"] += int(mine.sum())
            group["length_sum"] += int(lengths[mine].sum())
            counted = np.bincount(terms[mine[rows]], minlength=len(union))
            df[level] = df.get(level, 0) + counted
    reported = reported_group(sorted(stats))
    reported_df = df.get(reported, np.zeros(len(union), dtype=np.int64))
    idf = bm25_weights.idf(stats.get(reported, {}).get("rows", 0), reported_df)
    terms_table = terms_frame(union, reported_df, idf)
    groups_table = pl.concat(
        [
            pl.DataFrame(
                {
                    "group": level,
                    "term_id": np.flatnonzero(df[level]).astype(np.int32),
                    "df": df[level][df[level] > 0].astype(np.int32),
                },
                schema=polars_schema(BM25_GROUPS),
            )
            for level in sorted(df)
        ]
        or [pl.DataFrame(schema=polars_schema(BM25_GROUPS))]
    )
    return terms_table, groups_table, {level: stats[level] for level in sorted(stats)}


def split(
    tables: dict[str, pl.DataFrame],
    settings: dict,
    parts: list[list[str]],
    directory: Path,
) -> tuple[list[Path], dict[str, pl.DataFrame], dict]:
    """A classic build's staged tables (transforms.publishing.staging.for_publishing) as part directories
    under `directory` (one per list of document ids in `parts`, named "part-0000", ...), the
    global tables and the settings for transforms.publishing.publish.publish_sharded. The parts must
    hold every document's chunks, in the classic row order (runs of whole documents), so the
    sharded snapshot's rows are the classic one's."""
    chunks = tables["chunks"]
    part_of = {doc: n for n, docs in enumerate(parts) for doc in docs}
    order = chunks["document_id"].replace_strict(part_of, default=-1, return_dtype=pl.Int64)
    if (order < 0).any() or (order.diff().drop_nulls() < 0).any():
        raise ValueError("the parts must cover every document, as runs in the chunks' row order")
    part_dirs = []
    for n, docs in enumerate(parts):
        own = chunks.filter(pl.col("document_id").is_in(docs))
        ids = own["chunk_id"].implode()
        part_tables = {
            "sections": tables["sections"].filter(pl.col("document_id").is_in(docs)),
            "chunks": own,
            "embeddings": tables["embeddings"].filter(pl.col("chunk_id").is_in(ids)),
            "line_embeddings": tables["line_embeddings"].filter(pl.col("chunk_id").is_in(ids)),
        }
        part = Path(directory) / f"part-{n:04d}"
        part_terms = tokens_of(own["content"].to_list())
        write_part(part, part_tables, part_terms, dimension_of(settings))
        part_dirs.append(part)
    bm25 = settings["bm25"]
    terms, groups, group_stats = global_bm25(part_dirs, BM25Params(bm25["k1"], bm25["b"]))
    global_tables = {
        name: tables[name]
        for name in shards.GLOBAL_TABLES
        if name not in ("bm25_terms", "bm25_groups")
    }
    global_tables |= {"bm25_terms": terms, "bm25_groups": groups}
    return part_dirs, global_tables, {**settings, "bm25": {**bm25, "groups": group_stats}}
