"""Writing a snapshot and publishing it atomically.

Everything is written into a temporary directory beside the final one, fsynced, then renamed; the
CURRENT pointer is replaced with os.replace. A crash at any point leaves either the old CURRENT or
the new one, never a half-written snapshot under snapshots/.

`publish` writes a classic snapshot from tables in memory; `publish_sharded` one shard per part
directory of a partitioned build (lexkb.core.store.shards), its files hard-linked, not copied.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa

from lexkb.core.store import root_lock, shards, vector_files
from lexkb.core.store import snapshot as snap
from lexkb.core.store.index_root import (
    KEEP,
    LEASE_MINUTES,
    clear_leftovers,
    fsync,
    prune,
    switch_current,
)
from lexkb.core.store.object_store import ObjectRoot
from lexkb.core.store.schema import SNAPSHOT_FORMAT, TABLES, polars_schema


@dataclass(frozen=True)
class Published:
    path: Path
    version: str
    created: bool  # False when the content matched CURRENT and nothing new was written


# A table as publishing takes it: a frame, or a scan of its file (read where it is used).
Table = pl.DataFrame | pl.LazyFrame


def _read(table: Table) -> pl.DataFrame:
    return table.collect() if isinstance(table, pl.LazyFrame) else table


def content_fingerprint(tables: dict[str, pl.DataFrame], settings: dict) -> str:
    """Hash of what a reader can observe: the snapshot format, the source formats it keeps,
    chunk ids and hashes, documents, edges, which lines have vectors, clause labels, definitions,
    topics, settings (the embedder among them)."""
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
    digest.update(f"format {SNAPSHOT_FORMAT}".encode())
    digest.update(f"sources kept {snap.SOURCE_FORMATS}".encode())
    digest.update(tables["line_embeddings"].select("chunk_id", "line").write_csv().encode())
    chunks = tables["chunks"].select("chunk_id", "content_hash", "ref", "document_key", "page")
    digest.update(chunks.write_csv().encode())
    digest.update(tables["documents"].write_json().encode())
    digest.update(tables["edges"].write_csv().encode())
    digest.update(tables["sections"].select("section_id", "title", "path").write_json().encode())
    digest.update(tables["clauses"].select("chunk_id", "clause_type").write_csv().encode())
    digest.update(tables["definitions"].select("term", "chunk_id").write_csv().encode())
    digest.update(tables["topics"].write_csv().encode())
    return digest.hexdigest()


# Tables copied into index.duckdb, for SQL: all but the vectors, which are in their Parquet
# tables and the .npy arrays already. A third copy of them inside the database was a quarter of
# an ObliQA snapshot (54 of 212 MB) and 1.2 s of every publish.
SQL_TABLES = [name for name in TABLES if name not in ("embeddings", "line_embeddings")]


def _write_duckdb(directory: Path, names: list[str]) -> None:
    con = duckdb.connect(str(directory / "index.duckdb"))
    try:
        for name in names:
            con.execute(
                f"CREATE TABLE {name} AS SELECT * FROM read_parquet(?)",
                [str(directory / shards.table_file(name))],
            )
    finally:
        con.close()


def stored_schema(name: str, schema: pa.Schema, dimension: int | None) -> pa.Schema:
    """Embeddings are stored as fixed-size vectors of the embedder's dimension (None: none)."""
    if name not in ("embeddings", "line_embeddings") or not dimension:
        return schema
    vector = pa.field("vector", pa.list_(pa.float32(), dimension))
    return schema.set(schema.get_field_index("vector"), vector)


def write_table(file: Path, frame: pl.DataFrame, schema: pa.Schema) -> int:
    """One table as a snapshot stores it (its schema, zstd, statistics); its row count."""
    table = frame.to_arrow().cast(schema)
    cast = pl.from_arrow(table)
    assert isinstance(cast, pl.DataFrame)  # a table's frame, never a Series
    _write_parquet(cast, file)
    return table.num_rows


def write_plain_table(file: Path, frame: pl.DataFrame, schema: pa.Schema) -> int:
    """`write_table` for a table whose types all have polars ones (all but the embeddings'
    fixed-size vectors), cast by polars: the same file, without the copies of the frame that
    the way through Arrow makes (870,000 edges, a frame of 100 MB: 365 MB above it, against
    28 MB). Its columns must be the schema's, in order, as Arrow's cast requires."""
    if frame.columns != schema.names:
        raise ValueError(f"columns {frame.columns} are not the schema's {schema.names}")
    _write_parquet(frame.cast(dict(polars_schema(schema).items())), file)
    return frame.height


def _write_parquet(frame: pl.DataFrame, file: Path) -> None:
    frame.write_parquet(file, compression="zstd", statistics=True)


def dimension_of(settings: dict) -> int | None:
    embedder = settings.get("embedder")
    return embedder["dimension"] if embedder else None


def _check_written(directory: Path, tables: dict[str, dict]) -> None:
    """Read back what was written: the manifest, every file's hash, every table's row count."""
    written = snap.load(directory, verify=True)
    for name, entry in tables.items():
        rows = written.table_rows(name)
        if rows != entry["rows"]:
            raise snap.SnapshotError(f"table {name} reads back {rows} rows, not {entry['rows']}")


def _keep_sources(directory: Path, sources: list[dict]) -> list[dict]:
    """Copy each source file of a kept format into the snapshot (snap.source_name), so that its
    pages can be shown from the snapshot alone; return the manifest's entries, each naming its
    copy and none the path on the building machine. A file whose bytes changed since it was
    parsed, or that is gone, is not kept."""
    entries = []
    for source in sources:
        entry = {k: v for k, v in source.items() if k != "path"}
        name = snap.source_name(source["sha256"], source["format"])
        target = directory / name
        if source["format"] in snap.SOURCE_FORMATS and source.get("path"):
            try:
                if not target.exists():  # files found twice have one copy
                    shutil.copyfile(source["path"], target)
                if snap.file_sha256(target) == source["sha256"]:
                    entry["file"] = name
                else:
                    target.unlink()
            except OSError:
                target.unlink(missing_ok=True)
        entries.append(entry)
    return entries


def current_manifest(root: Path) -> dict | None:
    try:
        return snap.load(root).manifest
    except (snap.SnapshotError, FileNotFoundError):
        return None


def publish(
    root: Path,
    tables: dict[str, pl.DataFrame],
    settings: dict,
    sources: list[dict],
    now: datetime | None = None,
    keep: int = KEEP,
    remote: str | None = None,
) -> Published:
    """Write, verify and switch to a new snapshot, then prune old ones beyond `keep`; for an
    `s3://` root (`remote`, whose local mirror `root` is) push it there too. All of it under
    the root's writer lock, the one place a snapshot is written; `lexkb build` holds the same
    lock for its whole run (re-entrant), so that its parse caches are its own too."""
    with root_lock.hold(root, wait_seconds=600, purpose="publish"):
        published = _publish(root, tables, settings, sources, now, keep)
        return push_snapshot(remote, published, keep=keep) if remote else published


def _publish(
    root: Path,
    tables: dict[str, pl.DataFrame],
    settings: dict,
    sources: list[dict],
    now: datetime | None,
    keep: int,
) -> Published:
    missing = set(TABLES) - set(tables)
    if missing:
        raise ValueError(f"tables missing from the snapshot: {sorted(missing)}")

    def fill(staging: Path) -> dict:
        manifest_tables = {}
        for name, schema in TABLES.items():
            file = staging / shards.table_file(name)
            rows = write_table(
                file, tables[name], stored_schema(name, schema, dimension_of(settings))
            )
            manifest_tables[name] = {"file": file.name, "rows": rows}
        _write_duckdb(staging, SQL_TABLES)
        if settings.get("embedder"):
            vector_files.write(
                staging,
                tables["chunks"],
                tables["embeddings"],
                tables["line_embeddings"],
                settings["embedder"]["dimension"],
            )
        return {"tables": manifest_tables}

    fingerprint = content_fingerprint(tables, settings)
    return _write_snapshot(root, fingerprint, settings, sources, now, keep, fill)


def _write_snapshot(
    root: Path,
    fingerprint: str,
    settings: dict,
    sources: list[dict],
    now: datetime | None,
    keep: int,
    fill: Callable[[Path], dict],
) -> Published:
    """The steps of every publish around `fill`, which writes the tables into the staging
    folder and returns the manifest's fields that describe them ("tables", and a sharded
    snapshot's "layout" and "shards"): nothing is written when the content's `fingerprint`
    is CURRENT's; else the sources kept, every file hashed, the manifest, all read back, then
    renamed into place, CURRENT switched and old snapshots pruned."""
    current = current_manifest(root)
    if current is not None and current.get("fingerprint") == fingerprint:
        return Published(snap.resolve(root), current["snapshot_version"], created=False)

    clear_leftovers(root)
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%S%fZ")
    version = f"{stamp}-{fingerprint[:12]}"
    snapshots = root / snap.SNAPSHOTS
    snapshots.mkdir(parents=True, exist_ok=True)
    staging = snapshots / f".tmp-{version}-{uuid.uuid4().hex[:8]}"
    staging.mkdir()
    try:
        fields = fill(staging)
        sources = _keep_sources(staging, sources)
        files = {}
        for file in sorted(staging.iterdir()):
            fsync(file)
            files[file.name] = {"bytes": file.stat().st_size, "sha256": snap.file_sha256(file)}
        manifest = {
            "format_version": SNAPSHOT_FORMAT,
            "snapshot_version": version,
            "created_at": (now or datetime.now(UTC)).isoformat(),
            "fingerprint": fingerprint,
            "sources": sources,
            "files": files,
            **fields,
            **settings,
        }
        manifest_path = staging / snap.MANIFEST
        manifest_path.write_text(json.dumps(manifest, indent=2, sort_keys=True), encoding="utf-8")
        fsync(manifest_path)
        fsync(staging)
        _check_written(staging, fields["tables"])
        final = snapshots / version
        os.rename(staging, final)
        fsync(snapshots)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    switch_current(root, version)
    prune(root, keep=keep)
    return Published(final, version, created=True)


def publish_sharded(
    root: Path,
    part_dirs: list[Path],
    global_tables: Mapping[str, Table],
    settings: dict,
    sources: list[dict],
    now: datetime | None = None,
    keep: int = KEEP,
    remote: str | None = None,
) -> Published:
    """`publish` for a partitioned build: one shard per part directory (in row order), its
    files hard-linked into the snapshot as `<shard>.<file>` (copied where a link cannot be
    made), beside `global_tables` (shards.GLOBAL_TABLES), under the same lock, checks and
    switch. A global table may be given as a scan of its file, read when it is hashed and again
    when it is written, so that one is held at a time. `settings["bm25"]["groups"]` must hold
    the groups' statistics (transforms.parts.shard_files.global_bm25). Unchanged part files and global
    tables publish nothing."""
    with root_lock.hold(root, wait_seconds=600, purpose="publish"):
        published = _publish_sharded(root, part_dirs, global_tables, settings, sources, now, keep)
        return push_snapshot(remote, published, keep=keep) if remote else published


def part_files(embedded: bool) -> list[str]:
    """A part directory's files that become a shard's (lexkb.core.store.shards)."""
    vectors = [vector_files.CHUNK_VECTORS, vector_files.LINE_VECTORS] if embedded else []
    return [*(shards.table_file(name) for name in shards.SHARDED_TABLES), *vectors]


def _publish_sharded(
    root: Path,
    part_dirs: list[Path],
    global_tables: Mapping[str, Table],
    settings: dict,
    sources: list[dict],
    now: datetime | None,
    keep: int,
) -> Published:
    missing = set(shards.GLOBAL_TABLES) - set(global_tables)
    if missing:
        raise ValueError(f"global tables missing from the snapshot: {sorted(missing)}")
    if not part_dirs:
        raise ValueError("a sharded snapshot needs at least one part")
    if not isinstance(settings.get("bm25", {}).get("groups"), dict):
        raise ValueError(
            "settings['bm25'] has no 'groups' (transforms.parts.shard_files.global_bm25)"
        )
    names = part_files(bool(settings.get("embedder")))
    hashes = [{name: snap.file_sha256(Path(part) / name) for name in names} for part in part_dirs]
    fingerprint = sharded_fingerprint(hashes, global_tables, settings)

    def fill(staging: Path) -> dict:
        listed: list[dict] = []
        files_of: dict[str, list[str]] = {name: [] for name in shards.SHARDED_TABLES}
        for position, part in enumerate(part_dirs):
            shard = shards.shard_name(position)
            for name in names:
                _link(Path(part) / name, staging / shards.shard_file(shard, name))
            for name in shards.SHARDED_TABLES:
                files_of[name].append(shards.shard_file(shard, shards.table_file(name)))
            rows = snap.parquet_rows(staging / shards.shard_file(shard, "chunks.parquet"))
            listed.append({"name": shard, "rows": rows, "part": Path(part).name})
        manifest_tables = {
            name: {
                "files": files,
                "rows": sum(snap.parquet_rows(staging / file) for file in files),
            }
            for name, files in files_of.items()
        }
        for name, schema in shards.GLOBAL_TABLES.items():
            file = staging / shards.table_file(name)
            rows = write_plain_table(file, _read(global_tables[name]), schema)
            manifest_tables[name] = {"file": file.name, "rows": rows}
        _write_duckdb(staging, list(shards.GLOBAL_TABLES))
        return {"layout": shards.LAYOUT, "shards": listed, "tables": manifest_tables}

    return _write_snapshot(root, fingerprint, settings, sources, now, keep, fill)


def _link(source: Path, target: Path) -> None:
    """A hard link to a part's file (parts replace files, never rewrite them), else a copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def sharded_fingerprint(
    hashes: list[dict[str, str]], global_tables: Mapping[str, Table], settings: dict
) -> str:
    """`content_fingerprint` of a sharded snapshot: its settings and format, each shard's
    files by SHA-256 (`hashes`, in row order) and the global tables' content."""
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
    digest.update(f"format {SNAPSHOT_FORMAT} {shards.LAYOUT}".encode())
    digest.update(f"sources kept {snap.SOURCE_FORMATS}".encode())
    for position, files in enumerate(hashes):
        digest.update(json.dumps([position, sorted(files.items())]).encode())
    for name in sorted(shards.GLOBAL_TABLES):
        digest.update(name.encode())
        for piece in json_pieces(_read(global_tables[name])):
            digest.update(piece)
    return digest.hexdigest()


# Rows a fingerprint turns into JSON at a time (a few MB of text).
JSON_ROWS = 20_000


def json_pieces(frame: pl.DataFrame) -> Iterator[bytes]:
    """The bytes of `frame.write_json()`, a slice of rows at a time: each row's JSON object does
    not depend on the others, so the slices' objects joined by commas in one pair of brackets
    are the same text. (Whole, the text is about two and a half times the frame, held twice
    when encoded: 255 MB for 870,000 edges.)"""
    yield b"["
    for position, rows in enumerate(frame.iter_slices(JSON_ROWS)):
        yield (b"," if position else b"") + rows.write_json()[1:-1].encode()
    yield b"]"


def push_snapshot(url: str, published: Published, keep: int = KEEP) -> Published:
    """Copy a snapshot published in an `s3://` root's local mirror to the root itself, switch
    its CURRENT, and prune it as the mirror was pruned. `created` says whether the remote
    CURRENT changed (not when it already held the same content)."""
    remote = ObjectRoot(url)
    created = remote.push(published.path)
    remote.prune(keep=keep, lease_minutes=LEASE_MINUTES)
    return Published(published.path, published.version, created=created)
