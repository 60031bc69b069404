"""What changed between two snapshots: documents, their metadata, chunks word by word, edges.

An auditor re-running a check after a rebuild needs to see that "4 hours" became "2 hours" in
Rule 4.3.1, that a document was deprecated, or that a citation now lands elsewhere; a count of
changed hashes is not enough.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import polars as pl

from lexkb.core.store import snapshot as snap
from lexkb.core.store.index_root import resolve_version

# Document fields compared besides the content (their source file's hash and their chunks).
METADATA = (
    "title", "short_name", "version", "document_type", "authority_level", "author", "source_url",
    "aliases", "refers_to", "tags", "parties", "governing_law", "renewal_term", "published",
    "effective", "deprecated",
)  # fmt: skip
MAX_WORD_CHANGES = 8


@dataclass(frozen=True)
class ChunkChange:
    chunk: str  # "document_key ref" (or the chunk id when it has no ref)
    changes: list[str]  # word-level: '"4 hours" -> "2 hours"', '+ "in writing"', '- "daily"'


@dataclass(frozen=True)
class Diff:
    old: str
    new: str
    documents_added: list[str] = field(default_factory=list)
    documents_removed: list[str] = field(default_factory=list)
    documents_changed: list[str] = field(default_factory=list)
    metadata_changed: dict[str, dict[str, list[object]]] = field(default_factory=dict)
    chunks_added: list[str] = field(default_factory=list)
    chunks_removed: list[str] = field(default_factory=list)
    chunks_changed: list[ChunkChange] = field(default_factory=list)
    edges_added: list[str] = field(default_factory=list)
    edges_removed: list[str] = field(default_factory=list)

    COUNTED = (
        "documents_added", "documents_removed", "documents_changed", "metadata_changed",
        "chunks_added", "chunks_removed", "chunks_changed", "edges_added", "edges_removed",
    )  # fmt: skip

    def summary(self) -> dict[str, int]:
        return {name: len(getattr(self, name)) for name in self.COUNTED}

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "summary": self.summary()}


def word_changes(old: str, new: str, limit: int = MAX_WORD_CHANGES) -> list[str]:
    """The words that differ, as replacements, insertions and deletions."""
    a, b = old.split(), new.split()
    changes = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        before, after = " ".join(a[i1:i2]), " ".join(b[j1:j2])
        if tag == "replace":
            changes.append(f'"{before}" -> "{after}"')
        elif tag == "insert":
            changes.append(f'+ "{after}"')
        elif tag == "delete":
            changes.append(f'- "{before}"')
    if len(changes) > limit:
        changes = [*changes[:limit], f"... {len(changes) - limit} more"]
    return changes


class _Tables(NamedTuple):
    """What a diff reads of one snapshot: edges as text, "source -> target: reference"."""

    documents: pl.DataFrame
    chunks: pl.DataFrame
    edges: list[str]


def _tables(root: Path, version: str) -> _Tables:
    loaded = snap.load(snap.snapshot_dir(root, version))
    chunks = loaded.read_table(
        "chunks",
        columns=["chunk_id", "document_key", "chunk_level", "ref", "content", "content_hash"],
    ).with_columns(
        pl.coalesce(
            pl.col("document_key")
            + " "
            + pl.col("ref")
            + pl.when(pl.col("chunk_level") != "paragraph")
            .then(" (" + pl.col("chunk_level") + ")")
            .otherwise(pl.lit("")),
            pl.col("chunk_id"),
        ).alias("name")
    )
    names = dict(zip(chunks["chunk_id"], chunks["name"], strict=True))
    edges = loaded.read_table("edges")
    edge_names = [
        f"{names.get(src, src)} -> {names.get(dst, dst) if dst else '(' + kind + ')'}: {text}"
        for src, dst, kind, text in edges.select(
            "source_chunk_id", "target_chunk_id", "reference_type", "reference_text"
        ).rows()
    ]
    documents = loaded.read_table("documents")
    return _Tables(documents, chunks, edge_names)


def diff(root: Path, old: str, new: str) -> Diff:
    """Differences from snapshot `old` to `new` (each CURRENT, previous, a version or a unique
    prefix of one)."""
    root = Path(root)
    old, new = resolve_version(root, old), resolve_version(root, new)
    a, b = _tables(root, old), _tables(root, new)
    docs_a = {row["document_key"]: row for row in a.documents.to_dicts()}
    docs_b = {row["document_key"]: row for row in b.documents.to_dicts()}
    chunks_a, chunks_b = _by_chunk(a.chunks), _by_chunk(b.chunks)
    changed_ids = sorted(
        c for c in chunks_a.keys() & chunks_b.keys() if chunks_a[c][2] != chunks_b[c][2]
    )
    touched = {chunks_a[c][3] for c in changed_ids}
    touched |= {chunks_a[c][3] for c in chunks_a.keys() - chunks_b.keys()}
    touched |= {chunks_b[c][3] for c in chunks_b.keys() - chunks_a.keys()}
    metadata: dict[str, dict[str, list[object]]] = {}
    for key in sorted(docs_a.keys() & docs_b.keys()):
        fields = {
            name: [_plain(docs_a[key].get(name)), _plain(docs_b[key].get(name))]
            for name in METADATA
            if _plain(docs_a[key].get(name)) != _plain(docs_b[key].get(name))
        }
        if fields:
            metadata[key] = fields
    both = docs_a.keys() & docs_b.keys()
    edges_a, edges_b = set(a.edges), set(b.edges)
    return Diff(
        old=old,
        new=new,
        documents_added=sorted(docs_b.keys() - docs_a.keys()),
        documents_removed=sorted(docs_a.keys() - docs_b.keys()),
        documents_changed=sorted(
            k
            for k in both
            if docs_a[k]["source_sha256"] != docs_b[k]["source_sha256"] or k in touched
        ),
        metadata_changed=metadata,
        chunks_added=sorted(chunks_b[c][0] for c in chunks_b.keys() - chunks_a.keys()),
        chunks_removed=sorted(chunks_a[c][0] for c in chunks_a.keys() - chunks_b.keys()),
        chunks_changed=[
            ChunkChange(chunks_b[c][0], word_changes(chunks_a[c][1], chunks_b[c][1]))
            for c in changed_ids
        ],
        edges_added=sorted(edges_b - edges_a),
        edges_removed=sorted(edges_a - edges_b),
    )


def _by_chunk(chunks: pl.DataFrame) -> dict[str, tuple[str, str, str, str]]:
    """chunk_id -> (name, content, content_hash, document_key)."""
    columns = ("chunk_id", "name", "content", "content_hash", "document_key")
    return {row[0]: row[1:] for row in chunks.select(columns).rows()}


def _plain(value: object) -> object:
    """Comparable and JSON-ready: dates as ISO text, lists as lists."""
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, tuple):
        return list(value)
    return value
