"""What one unauthenticated client can make `lexkb serve` hold: metrics series and request
heads. Real `lexkb serve` (and `lexkb mcp --http`) processes over real sockets on 127.0.0.1.

- Metrics labels come from a closed set (the app's route templates and "unknown"), so
  thousands of distinct paths, refused or not, add no series and do not grow /metrics.
- A request line and headers past LEXKB_MCP_MAX_HEADER_BYTES (64 KiB) get 431 before more of
  them is read into memory, and other clients are answered meanwhile.
"""

from __future__ import annotations

import contextlib
import http.client
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.mcp_process import free_port
from tests.support.mcp_process import start as start_mcp
from tests.support.mcp_process import stop as stop_mcp
from tests.support.serve_process import Served, add_key, call, start

MAX_HEADER_BYTES = 64 * 1024
# The app's routes number 25; with "unknown" and a little room, labels stay under this.
MAX_ROUTE_LABELS = 32


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("serve-bounds") / "serve.db"


@pytest.fixture(scope="module")
def admin(store: Path) -> str:
    return add_key(store, "admin", admin=True)


@pytest.fixture(scope="module")
def served(built_root: Path, store: Path, admin: str) -> Iterator[Served]:
    server = start(built_root, store, "--require-keys")
    yield server
    server.stop()


def _statuses(port: int, requests: list[tuple[str, dict[str, str]]]) -> list[int]:
    """Each (path, headers) as a GET on one keep-alive connection; the statuses."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    statuses = []
    try:
        for path, headers in requests:
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            response.read()
            statuses.append(response.status)
            if response.will_close:
                connection.close()
    finally:
        connection.close()
    return statuses


def _metrics(served: Served, key: str) -> str:
    reply = call(served, "GET", "/metrics", key=key)
    assert reply.status == 200
    return reply.body


def _distinct_requests(start: int, count: int, key: str) -> list[tuple[str, dict[str, str]]]:
    """`count` requests to distinct paths, in turn: a foreign Host (421), no key (401), a key
    and an unknown path (404), a key and an unknown id under a known route (404)."""
    pad = "A" * 40
    requests = []
    for n in range(start, start + count):
        kind = n % 4
        if kind == 0:
            requests.append((f"/{n}-{pad}", {"Host": "evil.example"}))
        elif kind == 1:
            requests.append((f"/api/v1/{n}-{pad}", {}))
        elif kind == 2:
            requests.append((f"/{n}-{pad}", {"Authorization": f"Bearer {key}"}))
        else:
            requests.append(
                (f"/api/v1/conversations/{n}-{pad}", {"Authorization": f"Bearer {key}"})
            )
    return requests


def test_metrics_labels_stay_a_closed_set_whatever_paths_clients_send(served, admin):
    first = _distinct_requests(0, 200, admin)
    assert set(_statuses(served.port, first)) == {421, 401, 404}
    _metrics(served, admin)  # /metrics' own series exist from here on
    before = _metrics(served, admin)
    rest = _distinct_requests(200, 2000, admin)
    assert set(_statuses(served.port, rest)) == {421, 401, 404}
    after = _metrics(served, admin)

    routes = set(re.findall(r'route="([^"]*)"', after))
    assert len(routes) <= MAX_ROUTE_LABELS, sorted(routes)[:40]
    assert "unknown" in routes and "/api/v1/conversations/{conversation_id}" in routes
    assert not any("AAAA" in route for route in routes)
    assert 'lexkb_requests_total{route="unknown",status="421"}' in after
    # 2,000 more distinct paths add no series: only the counts' digits change.
    assert len(after.splitlines()) == len(before.splitlines())
    assert len(after) - len(before) < 2_000, (len(before), len(after))


def _exchange(port: int, data: bytes, patience: float = 10.0) -> tuple[float, bytes]:
    """Send `data` on a new connection from a thread while reading the reply here, until the
    server closes the connection or `patience` runs out: (seconds, reply)."""
    connection = socket.create_connection(("127.0.0.1", port))
    connection.settimeout(patience)

    def send() -> None:
        # OSError: refused and closed, which is what an oversized head should get.
        with contextlib.suppress(OSError):
            connection.sendall(data)

    sender = threading.Thread(target=send, daemon=True)
    started = time.monotonic()
    sender.start()
    reply = b""
    try:
        while chunk := connection.recv(65536):
            reply += chunk
    except OSError:  # a reset after the reply was read
        pass
    seconds = time.monotonic() - started
    sender.join(patience)
    connection.close()
    return seconds, reply


def _heads(port: int) -> dict[str, bytes]:
    """Request heads over 64 KiB three ways, each without its final CRLF CRLF."""
    host = f"Host: 127.0.0.1:{port}\r\n".encode()
    many = b"".join(b"X-Padding-%d: %s\r\n" % (n, b"b" * 500) for n in range(200))
    return {
        "one 1 MB header": b"GET /healthz HTTP/1.1\r\n" + host + b"X-Big: " + b"a" * (1 << 20),
        "200 headers of 500 bytes": b"GET /healthz HTTP/1.1\r\n" + host + many[:-2],
        "a 100 KB request line": b"GET /healthz?q=" + b"q" * 100_000 + b" HTTP/1.1\r\n" + host[:-2],
    }


@pytest.mark.parametrize("shape", ["one 1 MB header", "200 headers of 500 bytes",
                                   "a 100 KB request line"])  # fmt: skip
def test_an_oversized_head_gets_431_and_the_connection_closes(served, shape):
    seconds, reply = _exchange(served.port, _heads(served.port)[shape] + b"\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 431 "), reply[:200]
    assert b"over 65536 bytes" in reply and b"connection: close" in reply.lower()
    assert seconds < 3, f"the server took {seconds:.1f} s to refuse and close"
    assert call(served, "GET", "/healthz").status == 200


def test_a_head_under_the_bound_and_a_large_body_are_still_read(served, admin):
    host = f"Host: 127.0.0.1:{served.port}\r\n".encode()
    _, reply = _exchange(
        served.port,
        b"GET /healthz HTTP/1.1\r\n" + host + b"X-Fine: " + b"a" * 48_000 + b"\r\n"
        b"Connection: close\r\n\r\n",
    )
    assert reply.startswith(b"HTTP/1.1 200 "), reply[:200]
    # A 600 KB body sent with its head in one write: the body is not counted as head.
    body = b'{"query": "' + b"x" * 600_000 + b'"}'
    _, reply = _exchange(
        served.port,
        b"POST /api/v1/search HTTP/1.1\r\n" + host + f"Authorization: Bearer {admin}\r\n".encode()
        + b"Content-Type: application/json\r\nConnection: close\r\n"
        + f"Content-Length: {len(body)}\r\n\r\n".encode() + body,
    )  # fmt: skip
    assert reply.startswith(b"HTTP/1.1 422 "), reply[:200]  # the query's own limit, not 431


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_huge_heads_hold_no_memory_and_healthz_answers_meanwhile(served):
    if not Path(f"/proc/{served.process.pid}/status").exists():
        pytest.skip("needs /proc to read the server's memory")
    head = b"GET /healthz HTTP/1.1\r\nHost: evil.example\r\nX-Big: " + b"a" * (16 << 20)
    before = _rss_mb(served.process.pid)
    results: list[tuple[float, bytes]] = []
    senders = [
        threading.Thread(target=lambda: results.append(_exchange(served.port, head)))
        for _ in range(12)
    ]
    for sender in senders:
        sender.start()
    slowest = 0.0
    while any(sender.is_alive() for sender in senders):
        started = time.monotonic()
        assert call(served, "GET", "/healthz").status == 200
        slowest = max(slowest, time.monotonic() - started)
        time.sleep(0.05)
    for sender in senders:
        sender.join()
    grown = _rss_mb(served.process.pid) - before
    assert all(reply.startswith(b"HTTP/1.1 431 ") for _, reply in results), [
        reply[:60] for _, reply in results
    ]
    assert slowest < 1.0, f"/healthz took {slowest:.2f} s while 16 MB heads arrived"
    assert grown < 64, f"the server grew by {grown:.0f} MB for 12 refused heads"


def test_the_mcp_server_bounds_heads_too(built_root):
    port = free_port()
    server = start_mcp(built_root, f"127.0.0.1:{port}")
    try:
        head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n"
        seconds, reply = _exchange(port, head)
        assert reply.startswith(b"HTTP/1.1 431 "), reply[:200]
        assert seconds < 3
    finally:
        stop_mcp(server)
