"""What a build learned about paragraphs beyond their text: clause types, defined terms and topic
clusters (the snapshot's `clauses`, `definitions` and `topics` tables), as search filters and
lookups. Snapshots published before these tables existed open with them empty."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Any

import polars as pl

from lexkb import limits as check
from lexkb.core.clauses.default_types import DEFAULT_TYPES
from lexkb.core.clauses.heads import clause_heads
from lexkb.core.store import snapshot as snap
from lexkb.filters import defined_term_asked

_EMPTY: dict[str, dict[str, type[pl.DataType]]] = {
    "clauses": {"chunk_id": pl.String, "clause_type": pl.String},
    "definitions": {"term_key": pl.String, "chunk_id": pl.String},
    "topics": {"chunk_id": pl.String, "cluster_id": pl.Int32, "label": pl.String},
}


def _table(snapshot: snap.Snapshot, name: str) -> pl.DataFrame:
    if name not in snapshot.manifest["tables"]:
        return pl.DataFrame(schema=_EMPTY[name])
    return snapshot.read_table(name, columns=list(_EMPTY[name]))


class Annotations:
    def __init__(self, snapshot: snap.Snapshot) -> None:
        self._snapshot = snapshot
        self.clauses = _table(snapshot, "clauses")
        self.definitions = _table(snapshot, "definitions")
        self.topics = _table(snapshot, "topics")

    def filter(self, filters: Mapping[str, Any]) -> pl.Expr:
        """The chunks the `clause_type`, `cards_only` and `cluster_id` filters keep."""
        expr = pl.lit(True)
        if (cluster := filters.get("cluster_id")) is not None:
            wanted = [cluster] if isinstance(cluster, int) else list(cluster)
            if unknown := sorted(set(wanted) - set(self.topics["cluster_id"].to_list())):
                raise check.QueryError(
                    f"unknown cluster_id {unknown}; see clusters() for the "
                    f"{self.topics['cluster_id'].n_unique()} clusters of this snapshot"
                )
            members = self.topics.filter(pl.col("cluster_id").is_in(wanted))["chunk_id"]
            expr &= pl.col("chunk_id").is_in(members.implode())
        if filters.get("cards_only"):
            expr &= pl.col("chunk_id").is_in(self.definitions["chunk_id"].implode())
        if (clause := filters.get("clause_type")) is not None:
            asked = [v.casefold() for v in ([clause] if isinstance(clause, str) else clause)]
            types = self.clauses["clause_type"].str.to_lowercase()
            named = set(DEFAULT_TYPES) | {n.casefold() for n in clause_heads().names}
            if unnamed := sorted(set(asked) - named - set(types)):
                known = sorted(named | set(types))
                raise check.QueryError(f"unknown clause_type {unnamed}; types are {known}")
            labelled = self.clauses.filter(types.is_in(asked))["chunk_id"]
            expr &= pl.col("chunk_id").is_in(labelled.implode())
        return expr

    def clause_labels(
        self, chunk_ids: list[str], decided_by: Mapping[str, object]
    ) -> pl.DataFrame | None:
        """The build's clause labels of `chunk_ids` (chunk_id, clause_type, score),
        when the manifest says they were decided as `decided_by` describes (lexkb.core.clauses.
        labels.decider); else None, and the caller decides them itself."""
        if self._snapshot.manifest.get("clause_model") != dict(decided_by):
            return None
        return self._scored_clauses.filter(pl.col("chunk_id").is_in(chunk_ids))

    @cached_property
    def _scored_clauses(self) -> pl.DataFrame:
        """The clauses table with its scores, read on the first `classify` that uses it (search
        filters need only the types)."""
        return self._snapshot.read_table("clauses", columns=["chunk_id", "clause_type", "score"])

    def defining(self, term: str) -> list[str]:
        """Chunk ids of the paragraphs defining `term` (any case), in the snapshot's order."""
        key = " ".join(term.strip(" \"'“”‘’").split()).casefold()
        return list(self._defining.get(key, ()))

    @cached_property
    def _defining(self) -> dict[str, tuple[str, ...]]:
        """Term key -> the chunk ids defining it, in the snapshot's order: a search asking
        "What is X?" looks its term up here (a dict lookup), not by filtering the table (about
        50 µs a search)."""
        found: dict[str, dict[str, None]] = {}
        for key, chunk_id in self.definitions.select("term_key", "chunk_id").iter_rows():
            found.setdefault(key, {})[chunk_id] = None
        return {key: tuple(ids) for key, ids in found.items()}

    def asked_definition(self, query: str) -> list[str]:
        """For a question about a term ("What is Client Money?"), the paragraphs defining it."""
        asked = defined_term_asked(query)
        return self.defining(asked) if asked and not self.definitions.is_empty() else []

    def clusters(self, chunks: pl.DataFrame) -> list[dict[str, Any]]:
        """Topic clusters, largest first: id, label, paragraphs, the three main documents."""
        joined = self.topics.join(
            chunks.select("chunk_id", "document_key"), on="chunk_id", how="left"
        )
        found = []
        for (cluster_id, label), group in joined.group_by("cluster_id", "label"):
            documents = group["document_key"].value_counts(sort=True).head(3)
            found.append(
                {
                    "cluster_id": int(cluster_id),
                    "label": label,
                    "paragraphs": group.height,
                    "documents": dict(documents.rows()),
                }
            )
        return sorted(found, key=lambda c: (-c["paragraphs"], c["cluster_id"]))
