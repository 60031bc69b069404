"""`lexkb serve` on PostgreSQL outlives the database's restarts: the real CLI process over real
HTTP, on a real PostgreSQL server (skipped where Debian's server is not installed).

- After `pg_ctl restart`, keyed requests are answered again at once (they were 500 for good:
  "the connection is closed"), a write too, and /readyz says ready.
- While the server is stopped, a keyed request is refused with 503, JSON and Retry-After (never
  a plain-text 500), /healthz still answers, and once it is started again all works as before.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.support.postgres_control import data_directory, pg_ctl, server_options
from tests.support.serve_process import Served, add_key, call, start

RECOVERY_SECONDS = 5.0


@pytest.fixture(scope="module")
def key(postgres_url: str) -> str:
    return add_key(postgres_url, "alice")


@pytest.fixture(scope="module")
def served(built_root, postgres_url: str, key: str) -> Iterator[Served]:
    server = start(built_root, postgres_url, "--require-keys")
    yield server
    server.stop()


def _until_answered(served: Served, key: str, seconds: float) -> tuple[float, list[int]]:
    """Keyed listings until one is answered 200 (or `seconds` pass): how long it took and every
    status seen; each refusal meanwhile must be JSON."""
    started, statuses = time.monotonic(), []
    while time.monotonic() - started < seconds:
        reply = call(served, "GET", "/api/v1/conversations", key=key)
        statuses.append(reply.status)
        if reply.status == 200:
            break
        assert isinstance(reply.body, dict) and reply.body["error"], reply.body
        time.sleep(0.1)
    return time.monotonic() - started, statuses


def test_keyed_requests_work_again_after_postgresql_restarts(served, postgres_url, key):
    made = call(served, "POST", "/api/v1/conversations", {"title": "before"}, key=key)
    assert made.status == 201
    for _ in range(2):
        pg_ctl(data_directory(postgres_url), "restart")
        took, statuses = _until_answered(served, key, RECOVERY_SECONDS)
        assert statuses[-1] == 200 and took < RECOVERY_SECONDS, statuses
        assert 500 not in statuses, statuses
    # The very first request after a restart: the key's lookup (a read) is retried on a new
    # connection, so nothing is refused at all.
    assert statuses == [200]
    listed = call(served, "GET", "/api/v1/conversations", key=key).body["items"]
    assert [c["title"] for c in listed] == ["before"]
    # A write after a restart goes out on a checked connection.
    pg_ctl(data_directory(postgres_url), "restart")
    after = call(served, "POST", "/api/v1/conversations", {"title": "after"}, key=key)
    assert after.status == 201, after.body
    ready = call(served, "GET", "/readyz")
    assert ready.status == 200 and ready.body["store"] == "postgresql"


def test_a_stopped_postgresql_is_a_503_with_retry_after_until_it_is_back(served, postgres_url, key):
    data = data_directory(postgres_url)
    options = server_options(data)
    pg_ctl(data, "stop")
    try:
        refused = call(served, "GET", "/api/v1/me", key=key)
        assert refused.status == 503, refused.body
        assert refused.headers["content-type"] == "application/json"
        assert "store" in refused.error and int(refused.headers["retry-after"]) > 0
        assert "127.0.0.1" not in refused.error  # no host or port for key holders
        assert call(served, "GET", "/healthz").status == 200
        assert call(served, "GET", "/readyz").status == 503
    finally:
        pg_ctl(data, "start", "-o", options)
    took, statuses = _until_answered(served, key, RECOVERY_SECONDS)
    assert statuses[-1] == 200 and took < RECOVERY_SECONDS, statuses
    assert call(served, "GET", "/api/v1/me", key=key).status == 200
    assert call(served, "GET", "/readyz").status == 200
