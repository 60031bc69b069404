"""A sharded snapshot's BM25 postings, weighted at open and merged into the global order.

Each shard keeps its own vocabulary and (local term, local row, tf) postings, sorted by term then
row (lexkb.core.store.shards); the snapshot keeps the global vocabulary (`bm25_terms`), each
group's document frequencies (`bm25_groups`) and each group's rows and summed length (manifest
`bm25.groups`). Here every posting gets its global term and row (the shard's offset + its local
row) and the weight the classic build would have stored (lexkb.core.bm25_weights, same float64
operations on the same IDF arrays), and is put where a classic snapshot's postings would hold
it: sorted by (term, row). No sort is needed: both vocabularies are sorted, so a shard's local to
global term map is increasing and its postings stay sorted by global term; shards come in row
order, so each shard's postings of a term go after the earlier shards' ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from lexkb.core import bm25_weights
from lexkb.core.store import snapshot as snap


def postings(
    snapshot: snap.Snapshot, terms: pl.Series, levels: pl.Series
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(term ids, chunk rows, float32 weights) of every posting, sorted by term then row, as a
    classic snapshot's `bm25_postings` holds them. `terms`: the global vocabulary by term id;
    `levels`: each chunk row's level (its BM25 group)."""
    settings = snapshot.manifest.get("bm25", {})
    k1, b, groups = settings.get("k1"), settings.get("b"), settings.get("groups")
    if not isinstance(groups, dict) or k1 is None or b is None:
        raise snap.SnapshotError("a sharded snapshot needs bm25 k1, b and groups in its manifest")
    unknown = set(levels.unique().to_list()) - set(groups)
    if unknown:
        raise snap.SnapshotError(f"manifest bm25 groups lack the chunk levels {sorted(unknown)}")
    names = sorted(groups)
    group_of_row = levels.replace_strict(
        {name: code for code, name in enumerate(names)}, return_dtype=pl.Int32
    ).to_numpy()
    n_terms = len(terms)
    idf, average = _group_statistics(snapshot, groups, n_terms)
    global_id = pl.DataFrame({"term": terms, "global": np.arange(n_terms, dtype=np.int64)})
    counts = np.zeros(n_terms, dtype=np.int64)
    per_shard = []
    offset = 0
    vocabularies = snapshot.table_paths("bm25_vocabulary")
    tf_postings = snapshot.table_paths("bm25_postings")
    for shard, vocabulary_path, postings_path in zip(
        snapshot.shards, vocabularies, tf_postings, strict=True
    ):
        rows_here = shard["rows"]
        local_to_global = _term_map(pl.read_parquet(vocabulary_path), global_id, shard["name"])
        table = pl.read_parquet(postings_path, columns=["term_id", "chunk_row", "tf"])
        local_terms = table["term_id"].to_numpy().astype(np.int64)
        local_rows = table["chunk_row"].to_numpy().astype(np.int64)
        tf = table["tf"].to_numpy().astype(np.int64)
        if local_terms.size and (
            local_terms.min() < 0
            or local_terms.max() >= local_to_global.size
            or local_rows.min() < 0
            or local_rows.max() >= rows_here
            or np.any(np.diff(local_terms * max(rows_here, 1) + local_rows) <= 0)
        ):
            raise snap.SnapshotError(
                f"shard {shard['name']}'s bm25_postings are out of range or not sorted by term "
                "and chunk row"
            )
        lengths = np.bincount(local_rows, weights=tf, minlength=rows_here).astype(np.int64)
        term = local_to_global[local_terms]
        rows = local_rows + offset
        weight = np.zeros(term.size, dtype=np.float32)
        group_of = group_of_row[rows]
        for code, name in enumerate(names):
            mine = group_of == code
            weight[mine] = bm25_weights.weights(
                idf[name][term[mine]],
                tf[mine],
                lengths[local_rows[mine]],
                average[name],
                k1,
                b,
            )
        counts += np.bincount(term, minlength=n_terms)
        per_shard.append((term, rows.astype(np.int32), weight))
        offset += rows_here
    if offset != len(levels):
        raise snap.SnapshotError(f"the shards hold {offset} rows, the chunks {len(levels)}")
    return _merged(per_shard, counts)


def _group_statistics(
    snapshot: snap.Snapshot, groups: dict[str, Any], n_terms: int
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Each group's IDF of every global term, and its average row length."""
    table = snapshot.read_table("bm25_groups")
    idf, average = {}, {}
    for name, stats in groups.items():
        mine = table.filter(pl.col("group") == name)
        df = np.zeros(n_terms, dtype=np.int64)
        df[mine["term_id"].to_numpy()] = mine["df"].to_numpy()
        idf[name] = bm25_weights.idf(stats["rows"], df)
        average[name] = bm25_weights.average_length(stats["rows"], stats["length_sum"])
    return idf, average


def _term_map(vocabulary: pl.DataFrame, global_id: pl.DataFrame, shard: str) -> np.ndarray:
    """A shard's local term id -> global term id; increasing, as both are numbered in sorted
    order (what lets postings keep their order)."""
    vocabulary = vocabulary.sort("term_id")
    if not vocabulary["term_id"].equals(pl.Series(range(vocabulary.height), dtype=pl.Int32)):
        raise snap.SnapshotError(f"shard {shard}'s bm25_vocabulary is not numbered 0..n-1")
    joined = vocabulary.join(global_id, on="term", how="left", maintain_order="left")["global"]
    if joined.null_count():
        raise snap.SnapshotError(f"shard {shard} has terms the global bm25_terms lacks")
    mapped = joined.to_numpy()
    if np.any(np.diff(mapped) <= 0):
        raise snap.SnapshotError(f"shard {shard}'s bm25_vocabulary is not in sorted order")
    return mapped


def _merged(
    per_shard: list[tuple[np.ndarray, np.ndarray, np.ndarray]], counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Shards' postings (each sorted by global term, then row) put in one (term, row) order:
    a term's postings from each shard after those of the shards before it."""
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    total = int(counts.sum())
    rows = np.empty(total, dtype=np.int32)
    weights = np.empty(total, dtype=np.float32)
    for term, shard_rows, shard_weights in per_shard:
        # Each posting's place among its term's postings in this shard, after earlier shards'.
        rank = np.arange(term.size) - np.searchsorted(term, term, side="left")
        at = starts[term] + rank
        rows[at], weights[at] = shard_rows, shard_weights
        starts += np.bincount(term, minlength=counts.size)
    term_ids = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    return term_ids, rows, weights
