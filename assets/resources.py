"""Settings every asset reads: where the sources are and where the index root is."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from lexkb.core import environment
from lexkb.core.store.object_store import is_remote, mirror_path
from transforms.parts.plan import MAX_CHUNKS
from transforms.publishing.staging import TABLE_DIR
from transforms.publishing.workdir import WorkDir
from transforms.reading.file_limits import ParseLimits
from transforms.reading.source_files import MAX_FILE_MB

REPO_ROOT = Path(__file__).resolve().parent.parent


def default_sources() -> list[str]:
    return environment.sources() or [str(REPO_ROOT / "examples" / "corpus")]


def default_root() -> str:
    return environment.index_root() or str(REPO_ROOT / "var" / "index")


class LexkbSettings(dg.ConfigurableResource):
    """Source files or folders to index, the index root that receives snapshots (a folder or
    an `s3://bucket/prefix`, see lexkb.core.store.object_store), how many
    snapshots publishing keeps (CURRENT's and recently opened ones are kept regardless), and the
    limits one source file may cost (see transforms.reading.file_limits; a file past one is quarantined)."""

    sources: list[str]
    root: str
    keep_snapshots: int = 5
    follow_symlinks: bool = False
    max_file_mb: float = MAX_FILE_MB
    parse_timeout_seconds: float = ParseLimits.timeout_seconds
    parse_memory_mb: float = ParseLimits.memory_mb
    max_pages: int = ParseLimits.max_pages
    max_unzipped_mb: float = ParseLimits.max_unzipped_mb
    max_chars: int = ParseLimits.max_chars
    # Files parsed at once, each in its own process: the machine's cores, up to four.
    parse_workers: int = max(1, min(4, os.cpu_count() or 1))
    # Chunks a part of a partitioned build holds at most (transforms.parts.plan), and the address
    # of the Dask scheduler its parts go to: empty, the cluster its step runs on, if any, else
    # this process (assets.parts).
    part_chunks: int = MAX_CHUNKS
    parts_cluster: str = ""

    @property
    def remote(self) -> bool:
        """An `s3://` root: builds work and publish in its local mirror, then push."""
        return is_remote(self.root)

    @property
    def root_path(self) -> Path:
        """The local root the assets write: the root itself, or an `s3://` root's mirror."""
        return mirror_path(self.root) if self.remote else Path(self.root)

    @property
    def work(self) -> WorkDir:
        """The build's working folder under the local root (parsed files, parts, tables)."""
        return WorkDir(self.root_path)

    @property
    def tables(self) -> Path:
        """Where the build stages the tables it publishes (work/TABLE_DIR)."""
        return self.work.path / TABLE_DIR

    @property
    def limits(self) -> ParseLimits:
        return ParseLimits(
            timeout_seconds=self.parse_timeout_seconds,
            memory_mb=self.parse_memory_mb,
            max_pages=self.max_pages,
            max_unzipped_mb=self.max_unzipped_mb,
            max_chars=self.max_chars,
            workers=self.parse_workers,
        )


def default_provider() -> str:
    return environment.embedder()


class EmbedderSettings(dg.ConfigurableResource):
    """Which embedder builds the dense vectors. `auto` uses Voyage AI when VOYAGE_API_KEY is set
    and the local model otherwise; `local` and `voyage` force one; `none` builds keyword-only
    snapshots. The default comes from LEXKB_EMBEDDER. `model` names the Voyage model."""

    provider: str = "auto"
    model: str = "voyage-law-2"

    @property
    def embeds(self) -> bool:
        """False for `none`: a keyword-only build loads no model in any step, the clause labels
        included (transforms.structure.clauses)."""
        return self.provider != "none"

    def build(self):
        from lexkb.core.embed.embedders import PROVIDERS, LocalEmbedder, VoyageEmbedder

        if self.provider not in PROVIDERS:
            raise ValueError(f"unknown embedder provider {self.provider!r}: {', '.join(PROVIDERS)}")
        if self.provider == "none":
            return None
        if self.provider == "voyage" or (self.provider == "auto" and environment.voyage_api_key()):
            return VoyageEmbedder(model=self.model)
        return LocalEmbedder()
