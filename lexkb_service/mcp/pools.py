"""Bounded worker pools, so that slow outbound calls and costly local ones can never starve
the cheap local tools.

Every tool call runs in a worker thread. `ask` (which calls the LLM at `LEXKB_LLM_URL` when it is
set) and `web_search` (Brave) wait on other hosts; an endpoint that never answers keeps their
threads for as long as their client lets them. In one shared pool, 40 such calls took every
thread and a plain `search` waited 111 s behind them. Here outbound calls get a pool of their
own, smaller than the local one: when it is full they queue on the event loop (no thread held)
while `search`, `get` and the other local tools go on in theirs at their normal speed. Calls
that run the pair models for tenths of a second (`Tool.cost` above 0) get a third pool, about as
large as the cores, for the same reason: a flood of them queues there, not in front of `get`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import anyio

from lexkb.core import environment as env

# The local pool is anyio's default size, so local tools run as concurrently as before.
LOCAL_CALLS = 40
OUTBOUND_CALLS = 8
# Calls that run the pair models (a reranked search, evidence, extract, verify_citations; each
# tool's cost is in lexkb_service.mcp.tools) at once: each reads with two threads
# (lexkb.core.judge.pairs), so half as many as the cores. More would not finish sooner, and would
# take the cores the cheap calls need: on two cores, with one key flooding verify_citations,
# another's search p50 was 82 ms with four such calls at once and 11 ms with one
# (benchmarks/serve_faults.py).
COSTLY_CALLS = max(1, (os.cpu_count() or 2) // 2)


@dataclass(frozen=True)
class Pools:
    """The limiter each kind of tool runs under: outbound calls, costly local calls (those
    with a cost, lexkb_service.mcp.tools), and the cheap rest."""

    local: anyio.CapacityLimiter
    outbound: anyio.CapacityLimiter
    costly: anyio.CapacityLimiter

    @classmethod
    def sized(
        cls, local: int = LOCAL_CALLS, outbound: int | None = None, costly: int | None = None
    ) -> Pools:
        """Pools of `local`, `outbound` and `costly` threads; `outbound` and `costly` default
        to the environment's LEXKB_MCP_OUTBOUND_CALLS and LEXKB_MCP_COSTLY_CALLS, else
        OUTBOUND_CALLS and COSTLY_CALLS."""
        if outbound is None:
            outbound = env.count(env.MCP_OUTBOUND_CALLS, OUTBOUND_CALLS)
        if costly is None:
            costly = env.count(env.MCP_COSTLY_CALLS, COSTLY_CALLS)
        return cls(
            anyio.CapacityLimiter(local),
            anyio.CapacityLimiter(outbound),
            anyio.CapacityLimiter(costly),
        )

    def for_tool(self, outbound: bool, cost: int = 0) -> anyio.CapacityLimiter:
        if outbound:
            return self.outbound
        return self.costly if cost > 0 else self.local
