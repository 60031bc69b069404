"""How much costly work one key may have in progress at once, counted in cost units.

A search costs a millisecond; a reranked search, an ask or a check of twenty citations runs the
pair models (lexkb.core.judge) for tenths of a second each. Under lexkb serve one key that sent
such requests as fast as it could held every worker thread, and everyone's plain searches, the
page and /healthz waited behind it. Two bounds answer that:

- The costly calls run in a pool of their own (lexkb_service.mcp.pools: `costly`), so they queue
  there, holding no thread, while cheap calls go on in theirs.
- Each key may have at most `per_key` cost units in progress (running or queued), whichever door
  the work came through (the API or MCP): past it a request is refused at once (429, or a tool
  error) with the seconds to wait, instead of queueing. So one key cannot fill the costly
  pool's queue, and the others' costly work waits behind at most `per_key` units of it.

A cost unit is about five reads of a pair model (a claim or a question with one paragraph,
some 50 ms of one core); each tool's cost is in lexkb_service.mcp.tools (`Tool.cost`). One
request costlier than `per_key` on its own is admitted when the key has nothing else in
progress, so that no valid request is refused for good.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from lexkb.core import environment as env

# Cost units one key may have in progress at once: a few asks, or a check of some sixty
# citations, or two or three reranked searches.
PER_KEY_UNITS = 16
# The Retry-After of a refusal: costly calls take tenths of a second to a few seconds.
RETRY_SECONDS = 1


class Busy(Exception):
    """A key past its cost units in progress; `wait` is the Retry-After in seconds."""

    def __init__(self, held: int, per_key: int) -> None:
        super().__init__(
            f"this key has {held} cost units of work in progress (at most {per_key}): "
            f"retry in {RETRY_SECONDS} s, or when a request of yours has finished"
        )
        self.wait = RETRY_SECONDS


class KeyBudget:
    """Cost units in progress for each key, at most `per_key` each (see the module)."""

    def __init__(self, per_key: int | None = None) -> None:
        self.per_key = (
            per_key if per_key is not None else env.count(env.SERVE_COST_PER_KEY, PER_KEY_UNITS)
        )
        self._held: dict[str, int] = {}
        self._lock = threading.Lock()
        self.refused = 0

    def held(self, owner: str) -> int:
        with self._lock:
            return self._held.get(owner, 0)

    @contextmanager
    def holding(self, owner: str, cost: int) -> Iterator[None]:
        """`cost` units held for `owner` while the block runs; Busy, holding nothing, when they
        would take the key past `per_key` (unless it holds nothing yet)."""
        if cost <= 0:
            yield
            return
        with self._lock:
            held = self._held.get(owner, 0)
            if held and held + cost > self.per_key:
                self.refused += 1
                raise Busy(held, self.per_key)
            self._held[owner] = held + cost
        try:
            yield
        finally:
            with self._lock:
                left = self._held[owner] - cost
                if left:
                    self._held[owner] = left
                else:
                    del self._held[owner]
