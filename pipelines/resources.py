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


def default_provider() -> str:
    return os.environ.get("LEXKB_EMBEDDER", "auto")


class EmbedderSettings(dg.ConfigurableResource):
    """Which embedder builds the dense vectors. `auto` uses Voyage AI when VOYAGE_API_KEY is set
    and the local model otherwise; `local` and `voyage` force one; `none` builds keyword-only
    snapshots. The default comes from LEXKB_EMBEDDER. `model` names the Voyage model."""

    provider: str = "auto"
    model: str = "voyage-law-2"

    def build(self):
        from lexkb.embedders import PROVIDERS, LocalEmbedder, VoyageEmbedder

        if self.provider not in PROVIDERS:
            raise ValueError(f"unknown embedder provider {self.provider!r}: {', '.join(PROVIDERS)}")
        if self.provider == "none":
            return None
        if self.provider == "voyage" or (
            self.provider == "auto" and os.environ.get("VOYAGE_API_KEY")
        ):
            return VoyageEmbedder(model=self.model)
        return LocalEmbedder()
