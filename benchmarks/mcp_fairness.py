"""MCP fairness: `search` latency over MCP alone, and while 40 `ask` calls hang on the LLM.

    .venv/bin/python -m benchmarks.mcp_fairness [--index ROOT] [--searches 200] [--asks 40]

Starts `lexkb mcp --http` on 127.0.0.1 with LEXKB_LLM_URL pointing at a local endpoint that
accepts connections and never answers (tests/support/stalling.py). One client runs `--searches`
searches one after another and times each (p50, p99); then a second client sends `--asks` asks,
which the server's outbound pool (lexkb_service.mcp.pools) holds waiting on the endpoint, and
the first runs the same searches again. Target: p99 with the hung asks within 2x of p99 alone. Without an
index, the sample corpus is built into benchmarks/out/mcp-fairness/index first.

`fairness(root)` returns the figures as a dict, for the faults benchmark.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from tests.support.mcp_process import free_port, start, stop
from tests.support.stalling import HangingServer

REPO = Path(__file__).resolve().parent.parent


LEXKB = str(REPO / ".venv" / "bin" / "lexkb")
OUT = REPO / "benchmarks" / "out" / "mcp-fairness"
QUESTION = "How long must client money reconciliation records be kept?"
QUERIES = (
    "client money reconciliation records",
    "how long must records be kept",
    "audit documentation assembly period",
    "retention of records",
    "principles of data handling",
    "client assets segregation",
    "definitions personal data",
    "destruction of records after the retention period",
)
TARGET_RATIO = 2.0


def _summary(seconds: list[float]) -> dict[str, float]:
    ms = np.array(seconds) * 1000
    return {f"p{q}": round(float(np.percentile(ms, q)), 2) for q in (50, 99)}


async def _timed_searches(client, count: int) -> list[float]:
    spent = []
    for n in range(count):
        started = time.perf_counter()
        result = await client.call_tool("search", {"query": QUERIES[n % len(QUERIES)], "limit": 5})
        spent.append(time.perf_counter() - started)
        if result.is_error:
            raise RuntimeError(f"search failed: {result.content[0].text}")
    return spent


async def _measure(port: int, llm: HangingServer, searches: int, asks: int) -> dict:
    from mcp import Client

    url = f"http://127.0.0.1:{port}/mcp"
    async with Client(url) as searcher, Client(url) as asker:
        await _timed_searches(searcher, 20)  # warm: the model, the tables, the caches
        alone = await _timed_searches(searcher, searches)
        pending = [
            asyncio.create_task(asker.call_tool("ask", {"question": QUESTION})) for _ in range(asks)
        ]
        try:
            await asyncio.to_thread(llm.wait_for, 1, 60)
            await asyncio.sleep(1.0)  # every ask in, the outbound pool full
            reached = llm.accepted
            hung = await _timed_searches(searcher, searches)
            waiting = sum(not task.done() for task in pending)
        finally:
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
    return {
        "alone_ms": _summary(alone),
        "hung_ms": _summary(hung),
        "asks_waiting": waiting,
        "asks_at_the_endpoint": reached,
    }


def fairness(root: Path, searches: int = 200, asks: int = 40) -> dict:
    """p50 and p99 of `search` over MCP (HTTP) alone and while `asks` asks hang on the LLM
    endpoint, their p99 ratio, and whether it is within TARGET_RATIO."""
    llm = HangingServer()
    port = free_port()
    server = start(
        root,
        f"127.0.0.1:{port}",
        wait=120,
        LEXKB_LLM_URL=f"{llm.url}/v1",
        LEXKB_LLM_TIMEOUT="300",  # the asks outlast the measurement
    )
    try:
        figures = asyncio.run(_measure(port, llm, searches, asks))
    finally:
        stop(server)
        llm.close()
    ratio = figures["hung_ms"]["p99"] / figures["alone_ms"]["p99"]
    return {
        **figures,
        "searches": searches,
        "asks": asks,
        "p99_ratio": round(ratio, 2),
        "within_target": ratio <= TARGET_RATIO,
    }


def sample_index() -> Path:
    root = OUT / "index"
    if not (root / "CURRENT").exists():
        corpus = REPO / "examples" / "corpus"
        subprocess.run([LEXKB, "build", str(corpus), "--out", str(root)], check=True)
    return root


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, help="an index root (default: the sample corpus)")
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--asks", type=int, default=40)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    result = fairness(args.index or sample_index(), args.searches, args.asks)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    alone, hung = result["alone_ms"], result["hung_ms"]
    print(f"search over MCP, {result['searches']} calls    alone    {result['asks']} asks hung")
    for q in ("p50", "p99"):
        print(f"  {q} (ms)                     {alone[q]:8.2f}    {hung[q]:8.2f}")
    print(
        f"  p99 ratio {result['p99_ratio']:.2f} (target <= {TARGET_RATIO:.0f}): "
        f"{'met' if result['within_target'] else 'NOT met'}; asks still waiting "
        f"{result['asks_waiting']}, at the endpoint at once {result['asks_at_the_endpoint']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
