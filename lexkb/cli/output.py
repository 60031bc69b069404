"""What the commands print for people: hits, snapshot listings, progress. Document text goes
through `safe` first, so nothing it holds can steer the terminal."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from lexkb.core.text.terminal import safe
from lexkb.results import Hit

if TYPE_CHECKING:
    from lexkb.core.store.index_root import SnapshotInfo
    from lexkb.core.store.object_store import RemoteSnapshot


class Reportable(Protocol):
    """A result that `--json` prints whole."""

    def to_dict(self) -> dict[str, Any]: ...


def print_hit(hit: Hit, number: int | None = None, full: bool = False) -> None:
    lead = f"{number}. " if number is not None else ""
    score = f"  score {hit.score:.3f}" if hit.score is not None else ""
    relevance = f"  relevance {hit.relevance:.2f}" if hit.relevance is not None else ""
    answers = f"  answers {hit.answers:.2f}" if hit.answers is not None else ""
    print(f"{lead}[{safe(hit.citation)}]{score}{relevance}{answers}")
    if hit.expanded_from:
        print(f"   (joined through a citation from {safe(hit.expanded_from)})")
    if hit.section_path:
        print(f"   {safe(' > '.join(hit.section_path))}")
    if full:
        for line in hit.text.splitlines():
            print(f"   {safe(line)}")
        return
    text = " ".join(hit.text.split())
    print(f"   {safe(text[:400])}{'…' if len(text) > 400 else ''}")


def progress(done: int, total: int, started: float) -> None:
    if not sys.stderr.isatty() and done != total:
        return
    width = 30
    filled = width * done // max(total, 1)
    rate = done / max(time.perf_counter() - started, 1e-9)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {rate:.0f}/s")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def print_listing(found: Sequence[SnapshotInfo | RemoteSnapshot], where: str) -> None:
    """`snapshots list` for people: CURRENT's marked with a star."""
    if not found:
        print(f"no snapshots under {where}")
    for item in found:
        mark = "*" if item.current else " "
        print(
            f"{mark} {item.version}  {item.created_at[:19]}  {item.documents} documents  "
            f"{item.chunks} chunks  {item.bytes / 1e6:.1f} MB"
        )


def print_pruned(deleted: list[str], kept: dict[str, str]) -> None:
    print(f"deleted {len(deleted)} snapshot(s)")
    for version in deleted:
        print(f"  - {version}")
    for version, why in kept.items():
        print(f"  kept {version}: {why}")
