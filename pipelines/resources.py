"""Settings every asset reads: where the sources are and where the index root is."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

REPO_ROOT = Path(__file__).resolve().parent.parent


def default_sources() -> list[str]:
    raw = os.environ.get("LEXKB_SOURCES")
    return raw.split(os.pathsep) if raw else [str(REPO_ROOT / "examples" / "corpus")]


def default_root() -> str:
    return os.environ.get("LEXKB_ROOT", str(REPO_ROOT / "var" / "index"))


class LexkbSettings(dg.ConfigurableResource):
    """Source files or folders to index, the index root that receives snapshots, and how many
    snapshots publishing keeps (CURRENT's and recently opened ones are kept regardless)."""

    sources: list[str]
    root: str
    keep_snapshots: int = 5

    @property
    def root_path(self) -> Path:
        return Path(self.root)


class EmbedderSettings(dg.ConfigurableResource):
    """Which embedder builds the dense vectors. `auto` uses Voyage AI when VOYAGE_API_KEY is set;
    `voyage` requires it; `none` builds keyword-only snapshots."""

    provider: str = "auto"
    model: str = "voyage-law-2"

    def build(self):
        from lexkb.embedders import VoyageEmbedder

        if self.provider not in ("auto", "voyage", "none"):
            raise ValueError(f"unknown embedder provider {self.provider!r}: auto, voyage or none")
        if self.provider == "none" or (
            self.provider == "auto" and not os.environ.get("VOYAGE_API_KEY")
        ):
            return None
        return VoyageEmbedder(model=self.model)
