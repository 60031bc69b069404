"""`lexkb serve` under load: requests per second and p50 / p99 latency of search and ask over
HTTP with 1, 8 and 32 concurrent clients, next to the same calls in-process, in one run.

    .venv/bin/python -m benchmarks.serve [--index var/index] [--index benchmarks/out/obliqa/index]
        [--searches 200] [--asks 24] [--data ../shared/data]

For each index a real `lexkb serve` process is started on 127.0.0.1 (single-user mode, the ask
limit raised out of the way, a fresh SQLite store). Clients are threads of this process, each
with its own keep-alive connection; the in-process reference runs `Index.search` / `ask` in the
same number of threads. The service's overhead is the difference of the two p50s with one
client (the target: under 2 ms for search).

Questions are ObliQA dev's (../shared/data/obliqa/questions-dev.json), each used once per
index (in one cell of the table), so nothing is served from a cache. Client and server share this machine's cores,
so with many clients the figures are the machine's, not the service's alone.
"""

from __future__ import annotations

import argparse
import http.client
import json
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from lexkb import Index
from lexkb.answers.answer_cache import AnswerCache
from lexkb.answers.ask import ask
from tests.support.serve_process import start

REPO = Path(__file__).resolve().parent.parent


CLIENTS = (1, 8, 32)


def questions(data: Path) -> list[str]:
    found = json.loads((data / "obliqa" / "questions-dev.json").read_text())
    return [q["Question"] for q in found]


def timed_http(port: int, requests: list[tuple[str, dict]], clients: int) -> list[float]:
    """Each request's seconds, `clients` at a time, each client on its own connection."""
    per_client = [requests[i::clients] for i in range(clients)]

    def client(batch: list[tuple[str, dict]]) -> list[float]:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        seconds = []
        for path, body in batch:
            started = time.perf_counter()
            connection.request(
                "POST", path, body=json.dumps(body), headers={"Content-Type": "application/json"}
            )
            response = connection.getresponse()
            response.read()
            seconds.append(time.perf_counter() - started)
            assert response.status in (200, 201), response.status  # an ask is made: 201
        connection.close()
        return seconds

    with ThreadPoolExecutor(clients) as pool:
        return [s for batch in pool.map(client, per_client) for s in batch]


def timed_calls(call, items: list, clients: int) -> list[float]:
    def one(item) -> float:
        started = time.perf_counter()
        call(item)
        return time.perf_counter() - started

    with ThreadPoolExecutor(clients) as pool:
        return list(pool.map(one, items))


def row(name: str, clients: int, seconds: list[float], wall: float) -> dict:
    values = np.array(seconds) * 1000
    return {
        "call": name,
        "clients": clients,
        "requests": len(seconds),
        "per_second": len(seconds) / wall,
        "p50_ms": float(np.percentile(values, 50)),
        "p99_ms": float(np.percentile(values, 99)),
    }


def measure(root: Path, asked: list[str], searches: int, asks: int) -> list[dict]:
    rows = []
    index = Index.open(root)
    store = Path(tempfile.mkdtemp()) / "bench.db"
    served = start(root, store, "--asks-per-hour", "1000000")
    try:
        warm = [("/api/v1/search", {"query": q, "limit": 10}) for q in asked[:20]]
        timed_http(served.port, warm, 1)
        timed_http(served.port, [("/api/v1/ask", {"question": q}) for q in asked[20:25]], 1)
        for q in asked[:20]:
            index.search(q, k=10)
        for q in asked[25:30]:
            ask(index, q, cache=AnswerCache())
        # Every cell gets questions of its own: a repeated query would be served partly from
        # caches (tokens, the query's vector, the answer cache) on one side and not the other.
        fresh = iter(asked[30:])

        def take(n: int) -> list[str]:
            return [next(fresh) for _ in range(n)]

        for clients in CLIENTS:
            chosen = take(searches)
            started = time.perf_counter()
            seconds = timed_calls(lambda q: index.search(q, k=10).to_dict(), chosen, clients)
            rows.append(row("search, in-process", clients, seconds, time.perf_counter() - started))
            requests = [("/api/v1/search", {"query": q, "limit": 10}) for q in take(searches)]
            started = time.perf_counter()
            seconds = timed_http(served.port, requests, clients)
            rows.append(row("search, HTTP", clients, seconds, time.perf_counter() - started))
            chosen = take(asks)
            started = time.perf_counter()
            seconds = timed_calls(lambda q: ask(index, q, cache=AnswerCache()), chosen, clients)
            rows.append(row("ask, in-process", clients, seconds, time.perf_counter() - started))
            requests = [("/api/v1/ask", {"question": q}) for q in take(asks)]
            started = time.perf_counter()
            seconds = timed_http(served.port, requests, clients)
            rows.append(row("ask, HTTP", clients, seconds, time.perf_counter() - started))
    finally:
        served.stop()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, action="append")
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--asks", type=int, default=24)
    args = parser.parse_args()
    roots = args.index or [REPO / "var" / "index"]
    asked = questions(args.data)
    print("| index | call | clients | requests | per second | p50 ms | p99 ms |")
    print("|---|---|---|---|---|---|---|")
    for root in roots:
        rows = measure(root, asked, args.searches, args.asks)
        for r in rows:
            print(
                f"| {root.resolve().relative_to(REPO) if root.resolve().is_relative_to(REPO) else root} | {r['call']} | "
                f"{r['clients']} | {r['requests']} | {r['per_second']:.1f} | {r['p50_ms']:.1f} | "
                f"{r['p99_ms']:.1f} |"
            )
        one = {r["call"]: r for r in rows if r["clients"] == 1}
        overhead = one["search, HTTP"]["p50_ms"] - one["search, in-process"]["p50_ms"]
        print(f"\n{root}: service overhead per search at p50, one client: {overhead:.2f} ms\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
