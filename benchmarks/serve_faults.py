"""The parts of benchmarks/faults.py's serve section that measure one key against the others
and the service against its database (run through faults.py, `--parts serve`):

- serve_flood: /api/v1/search's p50 and p99 for one key alone, and while another key floods
  /api/v1/verify/citations; what the flood got, and the slowest /healthz meanwhile.
- serve_postgres_recovery: on a PostgreSQL store, the seconds from `pg_ctl restart` until a
  keyed request is answered again, and what requests got while the server was stopped.
"""

from __future__ import annotations

import time
from pathlib import Path


def serve_flood(
    index: Path, work: Path, searches: int = 200, flooders: int = 32, **env: str
) -> dict:
    """/api/v1/search's latency for one key, alone and while another key floods
    /api/v1/verify/citations (`flooders` connections, each sending 20 claims again as soon as it
    is answered); what the flood got (429s past the key's cost units in progress), and the
    slowest /healthz meanwhile. `env`: settings for the service (LEXKB_MCP_COSTLY_CALLS...)."""
    import threading
    from collections import Counter

    import numpy as np

    from tests.support.serve_process import add_key, call, start

    store = work / "serve-flood.db"
    store.unlink(missing_ok=True)
    keys = {name: add_key(store, name) for name in ("flood", "reader")}
    claims = {"citations": [{"claim": f"Records are kept for {n} years.", "ref": "§ 103(b)"}
                            for n in range(20)]}  # fmt: skip
    queries = ["client money reconciliation records", "how long must records be kept",
               "who may inspect the records", "safeguarding client assets", "retention period"]  # fmt: skip
    served = start(index, store, "--require-keys", **env)

    def timed(count: int) -> list[float]:
        seconds = []
        for n in range(count):
            asked = time.perf_counter()
            reply = call(served, "POST", "/api/v1/search", {"query": queries[n % len(queries)]},
                         key=keys["reader"])  # fmt: skip
            seconds.append(time.perf_counter() - asked)
            assert reply.status == 200, reply.body
        return seconds

    def quantiles(seconds: list[float]) -> dict[str, float]:
        values = np.array(seconds) * 1000
        return {"p50_ms": round(float(np.quantile(values, 0.5)), 1),
                "p99_ms": round(float(np.quantile(values, 0.99)), 1),
                "max_ms": round(float(values.max()), 1)}  # fmt: skip

    try:
        timed(20)
        alone = timed(searches)
        stop = threading.Event()
        statuses: Counter[int] = Counter()

        def flood() -> None:
            while not stop.is_set():
                reply = call(served, "POST", "/api/v1/verify/citations", claims, key=keys["flood"])
                statuses[reply.status] += 1
                if reply.status == 429:
                    time.sleep(0.05)

        senders = [threading.Thread(target=flood) for _ in range(flooders)]
        for sender in senders:
            sender.start()
        time.sleep(2)
        started = time.perf_counter()
        flooded = timed(searches)
        slowest_health = 0.0
        for _ in range(20):
            asked = time.perf_counter()
            call(served, "GET", "/healthz")
            slowest_health = max(slowest_health, time.perf_counter() - asked)
        elapsed = time.perf_counter() - started
        stop.set()
        for sender in senders:
            sender.join()
    finally:
        served.stop()
    return {
        "searches": searches,
        "search_alone": quantiles(alone),
        "search_while_flooded": quantiles(flooded),
        "flood": f"{flooders} connections of one key, /api/v1/verify/citations with 20 claims",
        "flood_statuses": {str(k): v for k, v in sorted(statuses.items(), key=str)},
        "flood_seconds": round(elapsed + 2, 1),
        "slowest_healthz_while_flooded_ms": round(slowest_health * 1000, 1),
    }


def serve_postgres_recovery(index: Path, restarts: int = 3) -> dict:
    """How long `lexkb serve` on PostgreSQL takes to answer keyed requests again after the
    server restarts (`pg_ctl restart -m fast`), and what it answers meanwhile; then the same
    with the server stopped for two seconds. Skipped where PostgreSQL is not installed."""
    from collections import Counter

    from tests.support.postgres import binaries, postgres_server
    from tests.support.postgres_control import data_directory, pg_ctl, server_options
    from tests.support.serve_process import add_key, call, start

    if binaries() is None:
        return {"skipped": "PostgreSQL is not installed"}

    def status(served, key: str) -> int | str:
        """A keyed listing's status, or "no reply" (a server that never answers, as one
        whose event loop waits on the database would)."""
        try:
            return call(served, "GET", "/api/v1/conversations", key=key).status
        except OSError:
            return "no reply"

    def until_answered(served, key: str, since: float) -> tuple[float, Counter[int | str]]:
        seen: Counter[int | str] = Counter()
        while time.perf_counter() - since < 60:
            status_seen = status(served, key)
            seen[status_seen] += 1
            if status_seen == 200:
                break
            time.sleep(0.02)
        return time.perf_counter() - since, seen

    with postgres_server() as url:
        key = add_key(url, "bench")
        served = start(index, url, "--require-keys")
        try:
            call(served, "POST", "/api/v1/conversations", {"title": "bench"}, key=key)
            data = data_directory(url)
            after_restart: list[float | None] = []  # None: not within 60 s
            statuses: Counter[int | str] = Counter()
            for _ in range(restarts):
                pg_ctl(data, "restart")
                seconds, seen = until_answered(served, key, time.perf_counter())
                after_restart.append(round(seconds, 3) if seen[200] else None)
                statuses.update(seen)
            options = server_options(data)
            pg_ctl(data, "stop")
            stopped = time.perf_counter()
            down: Counter[int | str] = Counter()
            while time.perf_counter() - stopped < 2:
                down[status(served, key)] += 1
                time.sleep(0.1)
            pg_ctl(data, "start", "-o", options)
            back, seen = until_answered(served, key, time.perf_counter())
        finally:
            served.stop()
    return {
        "restarts": restarts,
        "first_answer_after_restart_s": after_restart,
        "statuses_after_restarts": {str(k): v for k, v in sorted(statuses.items(), key=str)},
        "statuses_while_stopped_2s": {str(k): v for k, v in sorted(down.items(), key=str)},
        "first_answer_after_start_s": round(back, 3) if seen[200] else None,
        "statuses_after_start": {str(k): v for k, v in sorted(seen.items(), key=str)},
    }
