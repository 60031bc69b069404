"""How many asks a caller may make: a sliding window per caller (default 100 an hour, as the
ASK_ISA design has), for `lexkb serve` (per key, its API's and MCP's asks together) and
`lexkb mcp --http` (per caller: the token's holder, or each client address without a token)
alike; past it, OverLimit, which says when to retry (429 with Retry-After from the API, a tool
error over MCP).

The window is kept in memory: a restart forgives the hour in progress, which errs toward the
user, and counting in the database would add a write to every ask. Search, get and the other
lookups are not counted: they cost milliseconds, where an ask runs retrieval, verification and
perhaps an LLM. Only an ask that is answered counts: one refused (a bad filter) or one that
failed is given back (`spending`), since the user got nothing for it.
"""

from __future__ import annotations

import math
import threading
import time
from collections import defaultdict, deque
from collections.abc import Iterator
from contextlib import contextmanager

ASKS_PER_HOUR = 100
WINDOW_SECONDS = 3600.0


class OverLimit(Exception):
    """An ask past the caller's hourly allowance; `wait` is the Retry-After in seconds."""

    def __init__(self, per_window: int, wait: int) -> None:
        super().__init__(f"over {per_window} asks an hour: retry in {wait} s")
        self.wait = wait


class RateLimit:
    """`per_window` events per `window` seconds for each owner."""

    def __init__(self, per_window: int = ASKS_PER_HOUR, window: float = WINDOW_SECONDS) -> None:
        self.per_window = per_window
        self.window = window
        self._events: dict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def take(self, owner: str, now: float | None = None) -> int:
        """Count one event for `owner`: 0 when allowed, else the whole seconds until the oldest
        event in the window leaves it (Retry-After)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            events = self._events[owner]
            while events and events[0] <= now - self.window:
                events.popleft()
            if len(events) >= self.per_window:
                return max(1, math.ceil(events[0] + self.window - now))
            events.append(now)
            return 0

    def give_back(self, owner: str, at: float) -> None:
        """Forget the event counted for `owner` at `at` (one that came to nothing)."""
        with self._lock:
            events = self._events.get(owner)
            if events is not None and at in events:
                events.remove(at)

    @contextmanager
    def spending(self, owner: str) -> Iterator[int]:
        """`take` for the block's work: yields its answer (0: go on; else Retry-After), and
        gives the event back when the block raises, so a refused or failed ask costs nothing."""
        now = time.monotonic()
        wait = self.take(owner, now)
        try:
            yield wait
        except BaseException:
            if not wait:
                self.give_back(owner, now)
            raise

    def remaining(self, owner: str, now: float | None = None) -> int:
        now = time.monotonic() if now is None else now
        with self._lock:
            events = self._events.get(owner, ())
            return self.per_window - sum(1 for t in events if t > now - self.window)
