"""Index roots on object storage: `s3://bucket/prefix` through pyarrow's S3 filesystem.

A snapshot is a folder of immutable files plus a one-line CURRENT pointer, so it maps onto an
object prefix with no server of its own. Publishing uploads a snapshot's files, its manifest
last, and only then replaces CURRENT, one object written by one PUT: a reader sees the old
snapshot or the new one, never part of one. Readers copy a snapshot into a local mirror once
per version and verify every file's SHA-256 before opening it like any local snapshot (vectors
memory-mapped, DuckDB attached); versions never change, so a copy never goes stale.

The local mirror (`LEXKB_CACHE`, default ~/.cache/lexkb, then one folder per URL) is an
ordinary index root: builds write their work files and publish there first, then push. The
root's writer lock is the mirror's, so it serialises writers on one machine only; object
stores offer no lock to share, and one machine writes a remote root (docs/scaling.md). Prune
and rollback, which an operator may run from another machine, guard each other without a lock
(`ObjectRoot.prune`).

Where the endpoint and keys come from: `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL` (an
S3-compatible server such as MinIO or moto), `AWS_REGION` / `AWS_DEFAULT_REGION`, and the
usual AWS credential chain, read by pyarrow; nothing is written anywhere.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard
from urllib.parse import urlparse

from lexkb.core import environment
from lexkb.core.store import snapshot as snap

SCHEMES = ("s3",)
# Reads of CURRENT by a serving process, at most this often.
POLL_SECONDS = 2.0


def is_remote(location: object) -> TypeGuard[str]:
    """Whether `location` is an object-store URL (s3://bucket/prefix) rather than a path."""
    return (
        isinstance(location, str) and location.split("://", 1)[0] in SCHEMES and "://" in location
    )


def mirror_path(url: str) -> Path:
    """The local root that mirrors `url`: stable per URL, so builds and readers share it."""
    base = environment.cache_dir()
    name = hashlib.sha256(url.rstrip("/").encode()).hexdigest()[:16]
    return base / "roots" / name


def _filesystem() -> Any:  # a pyarrow.fs.S3FileSystem: pyarrow ships no types
    from pyarrow import fs

    endpoint = environment.s3_endpoint()
    options: dict[str, str] = {"region": environment.s3_region()}
    if endpoint:
        parsed = urlparse(endpoint)
        options["endpoint_override"] = parsed.netloc or parsed.path
        options["scheme"] = parsed.scheme or "https"
    return fs.S3FileSystem(**options)


@dataclass(frozen=True)
class RemoteSnapshot:
    version: str
    created_at: str
    documents: int
    chunks: int
    bytes: int
    current: bool
    fingerprint: str


class ObjectRoot:
    """One index root under an object-store URL, with its local mirror."""

    def __init__(self, url: str) -> None:
        parsed = urlparse(url)
        if parsed.scheme not in SCHEMES or not parsed.netloc:
            raise snap.SnapshotError(f"{url!r} is not an s3://bucket/prefix URL")
        parts = [p for p in parsed.path.split("/") if p]
        if any(p in (".", "..") for p in parts):
            raise snap.SnapshotError(f"{url!r} has a '.' or '..' in its path")
        self.url = url.rstrip("/")
        self.base = "/".join([parsed.netloc, *parts])
        self.mirror = mirror_path(self.url)
        self.fs = _filesystem()

    def _key(self, *names: str) -> str:
        return "/".join([self.base, *names])

    def _read(self, key: str) -> bytes | None:
        from pyarrow import fs

        if self.fs.get_file_info(key).type != fs.FileType.File:
            return None
        with self.fs.open_input_stream(key) as handle:
            data: bytes = handle.read()
            return data

    def _write(self, key: str, data: bytes) -> None:
        with self.fs.open_output_stream(key) as handle:
            handle.write(data)

    # reading ----------------------------------------------------------------------------
    def current_version(self) -> str | None:
        data = self._read(self._key(snap.CURRENT))
        if data is None:
            return None
        version = data.decode("utf-8", "replace").strip()
        return version if snap.VERSION.match(version) else None

    def versions(self) -> list[str]:
        """Published versions, oldest first: folders with a version's name and a manifest."""
        from pyarrow import fs

        selector = fs.FileSelector(self._key(snap.SNAPSHOTS), recursive=True, allow_not_found=True)
        found = set()
        for info in self.fs.get_file_info(selector):
            relative = info.path[len(self._key(snap.SNAPSHOTS)) + 1 :].split("/")
            if (
                len(relative) == 2
                and relative[1] == snap.MANIFEST
                and snap.VERSION.match(relative[0])
            ):
                found.add(relative[0])
        return sorted(found)

    def manifest(self, version: str) -> dict[str, Any]:
        snap.check_version(version)
        data = self._read(self._key(snap.SNAPSHOTS, version, snap.MANIFEST))
        if data is None:
            raise snap.SnapshotError(f"{self.url} has no snapshot {version}")
        try:
            manifest = json.loads(data)
        except ValueError as exc:
            raise snap.SnapshotError(f"the manifest of {version} is not JSON: {exc}") from exc
        if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
            raise snap.SnapshotError(f"the manifest of {version} lists no files")
        return manifest

    def list_snapshots(self) -> list[RemoteSnapshot]:
        current = self.current_version()
        found = []
        for version in self.versions():
            manifest = self.manifest(version)
            found.append(
                RemoteSnapshot(
                    version=version,
                    created_at=manifest.get("created_at", ""),
                    documents=manifest["tables"]["documents"]["rows"],
                    chunks=manifest["tables"]["chunks"]["rows"],
                    bytes=sum(entry["bytes"] for entry in manifest["files"].values()),
                    current=version == current,
                    fingerprint=manifest.get("fingerprint", ""),
                )
            )
        return found

    def resolve_version(self, name: str) -> str:
        from lexkb.core.store.index_root import pick_version

        return pick_version(name, self.versions(), self.current_version(), self.url)

    def fetch(self, version: str | None = None) -> Path:
        """A verified local copy of `version` (default: the one CURRENT names), downloaded
        only if the mirror lacks it. Every file is checked against the manifest's SHA-256."""
        version = self.resolve_version(version or "CURRENT")
        local = self.mirror / snap.SNAPSHOTS / version
        if (local / snap.MANIFEST).is_file():
            return snap.load(local).path
        manifest = self.manifest(version)
        staging = local.parent / f".tmp-{version}-{uuid.uuid4().hex[:8]}"
        staging.mkdir(parents=True)
        try:
            for name in sorted(manifest["files"]):
                target = staging / snap.plain_name(name, "file")
                self._download(self._key(snap.SNAPSHOTS, version, name), target)
            (staging / snap.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
            snap.load(staging, verify=True)
            try:
                os.rename(staging, local)
            except OSError:  # another reader placed the same version first
                shutil.rmtree(staging, ignore_errors=True)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        return snap.load(local).path

    def verify(self, version: str) -> int:
        """Hash every file of `version` as stored remotely against its manifest (the local
        copy is not consulted). Returns the number of files; raises SnapshotError on the first
        that differs."""
        version = self.resolve_version(version)
        manifest = self.manifest(version)
        for name, entry in sorted(manifest["files"].items()):
            digest, size = hashlib.sha256(), 0
            key = self._key(snap.SNAPSHOTS, version, snap.plain_name(name, "file"))
            with self.fs.open_input_stream(key) as src:
                while block := src.read(1 << 22):
                    digest.update(block)
                    size += len(block)
            if size != entry.get("bytes") or digest.hexdigest() != entry.get("sha256"):
                raise snap.SnapshotError(f"{name} of {version} does not match its manifest")
        return len(manifest["files"])

    # writing ----------------------------------------------------------------------------
    def push(self, snapshot_path: Path) -> bool:
        """Upload a published local snapshot and point CURRENT at it. Returns False, uploading
        nothing, when the remote CURRENT already has the same content fingerprint."""
        loaded = snap.load(snapshot_path)
        current = self.current_version()
        if current is not None:
            fingerprint = self.manifest(current).get("fingerprint")
            if fingerprint and fingerprint == loaded.manifest.get("fingerprint"):
                return False
        version = loaded.version
        for name in sorted(loaded.manifest["files"]):
            self._upload(loaded.path / name, self._key(snap.SNAPSHOTS, version, name))
        self._upload(loaded.path / snap.MANIFEST, self._key(snap.SNAPSHOTS, version, snap.MANIFEST))
        self.switch_current(version)
        return True

    def _download(self, key: str, target: Path) -> None:
        with self.fs.open_input_stream(key) as src, target.open("wb") as out:
            while block := src.read(1 << 22):
                out.write(block)

    def _upload(self, source: Path, key: str) -> None:
        with source.open("rb") as src, self.fs.open_output_stream(key) as out:
            while block := src.read(1 << 22):
                out.write(block)

    def named_current(self) -> str | None:
        """What CURRENT names, strictly (lexkb.core.store.index_root.named_version): None when
        there is no CURRENT object, SnapshotError when it names no version."""
        from lexkb.core.store.index_root import named_version

        data = self._read(self._key(snap.CURRENT))
        text = None if data is None else data.decode("utf-8", "replace")
        return named_version(text, f"{self.url}/{snap.CURRENT}")

    def switch_current(self, version: str) -> None:
        """Point CURRENT at `version`, then check that its manifest is still there: a prune on
        another machine may have deleted it in between (see `prune`); if so, CURRENT is put
        back as it was and SnapshotError says why."""
        self.manifest(version)  # raises unless the version is there, manifest and all
        pointer = self._key(snap.CURRENT)
        previous = self._read(pointer)
        self._write(pointer, (version + "\n").encode())
        if self._read(self._key(snap.SNAPSHOTS, version, snap.MANIFEST)) is not None:
            return
        if previous is None:
            self.fs.delete_file(pointer)
        else:
            self._write(pointer, previous)
        raise snap.SnapshotError(
            f"{version} was pruned while CURRENT was being switched to it; CURRENT is unchanged"
        )

    def rollback(self, name: str) -> str:
        """Point CURRENT at an older version after fetching it and verifying every file."""
        version = self.resolve_version(name)
        self.fetch(version)
        self.switch_current(version)
        return version

    def touch_lease(self, version: str) -> None:
        """Best effort, as for local roots: a reader without write access leaves no lease."""
        with contextlib.suppress(OSError):
            self._write(self._key("leases", snap.check_version(version)), b"")

    def prune(self, keep: int, lease_minutes: float) -> tuple[list[str], dict[str, str]]:
        """Delete all but the newest `keep` versions, sparing CURRENT's and leased ones.

        Object stores offer no lock, so a rollback (`switch_current`) on another machine may
        run at any moment; prune and rollback each check the other's step after their own.
        Prune refuses, deleting nothing, when CURRENT names no published version; before each
        deletion it reads CURRENT again and spares the version it names; it deletes the
        manifest first (a version without one is no longer listed, so no rollback can pick it),
        then reads CURRENT once more and, if a rollback switched to that version meanwhile,
        writes the manifest back and keeps the version. `switch_current` reads the manifest
        after writing CURRENT and puts CURRENT back if it is gone. On a store that reads its
        own writes at once (S3, MinIO), one of the two always sees the other."""
        from pyarrow import fs

        from lexkb.core.store.index_root import keep_reason, published_current

        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
            raise ValueError(f"keep must be a whole number of at least 1, not {keep!r}")
        current = self.named_current()
        published = self.versions()
        published_current(current, published, f"{self.url}/{snap.CURRENT}")
        newest = set(published[-keep:])
        now = time.time()
        deleted, kept = [], {}
        for version in published:
            lease = self.fs.get_file_info(self._key("leases", version))
            leased_until = (
                lease.mtime.timestamp() + lease_minutes * 60
                if lease.type == fs.FileType.File and lease.mtime
                else 0
            )
            reason = keep_reason(version, current, newest, keep, leased_until, now)
            if reason or not self._delete_unless_current(version):
                kept[version] = reason or "CURRENT"
                continue
            if lease.type == fs.FileType.File:
                self.fs.delete_file(self._key("leases", version))
            deleted.append(version)
        return deleted, kept

    def _delete_unless_current(self, version: str) -> bool:
        """Delete `version` unless CURRENT names it, before or just after its manifest goes
        (see `prune`); False when it was kept."""
        if self.named_current() == version:
            return False
        manifest = self._key(snap.SNAPSHOTS, version, snap.MANIFEST)
        saved = self._read(manifest)
        self.fs.delete_file(manifest)
        try:
            moved_here = self.named_current() == version
        except snap.SnapshotError:  # cannot tell what it names now: keep (the next one stops)
            moved_here = True
        if moved_here:
            if saved is not None:
                self._write(manifest, saved)
            return False
        self.fs.delete_dir(self._key(snap.SNAPSHOTS, version))
        return True
