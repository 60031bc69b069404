"""Two bounded worker pools, so that slow outbound calls can never starve the local tools.

Every tool call runs in a worker thread. `ask` (which calls the LLM at `LEXKB_LLM_URL` when it is
set) and `web_search` (Brave) wait on other hosts; an endpoint that never answers keeps their
threads for as long as their client lets them. In one shared pool, 40 such calls took every
thread and a plain `search` waited 111 s behind them. Here outbound calls get a pool of their
own, smaller than the local one: when it is full they queue on the event loop (no thread held)
while `search`, `get` and the other local tools go on in theirs at their normal speed.
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio

from lexkb.mcp import env

# The local pool is anyio's default size, so local tools run as concurrently as before.
LOCAL_CALLS = 40
OUTBOUND_CALLS = 8
OUTBOUND_CALLS_ENV = "LEXKB_MCP_OUTBOUND_CALLS"


@dataclass(frozen=True)
class Pools:
    """The limiter each kind of tool runs under."""

    local: anyio.CapacityLimiter
    outbound: anyio.CapacityLimiter

    @classmethod
    def sized(cls, local: int = LOCAL_CALLS, outbound: int | None = None) -> Pools:
        """Pools of `local` and `outbound` threads; `outbound` defaults to the environment's
        LEXKB_MCP_OUTBOUND_CALLS, else OUTBOUND_CALLS."""
        if outbound is None:
            outbound = env.count(OUTBOUND_CALLS_ENV, OUTBOUND_CALLS)
        return cls(anyio.CapacityLimiter(local), anyio.CapacityLimiter(outbound))

    def for_tool(self, outbound: bool) -> anyio.CapacityLimiter:
        return self.outbound if outbound else self.local
