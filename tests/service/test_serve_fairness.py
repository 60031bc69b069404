"""One key cannot stall `lexkb serve` for the others: costly work is counted per key and runs
in a pool of its own, MCP sessions and stored conversations are bounded per key, and the
conversation listing comes a page at a time. The real CLI process over real HTTP.

- Costly requests (here /api/v1/verify/citations, 20 claims each: 4 cost units) past the key's
  `--cost-per-key 8` units in progress are refused at once with 429, JSON and Retry-After;
  another key's costly request is answered meanwhile, and /healthz, the page and plain
  searches are answered promptly throughout (they queued behind the flood before).
- The same key's MCP calls count against the same units: while its API request is running, its
  MCP verify_citations is refused with a tool error.
- `--sessions-per-key 2`: a third MCP `initialize` from one key is 429 (another key's is not),
  and ending a session (DELETE) makes room; another key naming the session's id finds nothing.
- `--conversations-per-key 3`: a fourth conversation is refused with 409 until one is deleted;
  GET /api/v1/conversations is a page at a time (`limit`, `next_cursor`).
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.service.test_serve_asks import _text, mcp_calls
from tests.support.serve_process import Served, add_key, call, start

QUESTION = "How long must client money reconciliation records be kept?"
CLAIMS = {"citations": [{"claim": f"Records are kept for {n} years.", "ref": "§ 103(b)"}
                        for n in range(20)]}  # fmt: skip
# Health and plain searches, each, while one key floods costly requests. Before, a search
# waited for a worker thread behind the whole flood (tens of seconds on two cores).
PROMPT_SECONDS = 3.0


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("serve-fairness") / "serve.db"


@pytest.fixture(scope="module")
def keys(store: Path) -> dict[str, str]:
    names = ("flood", "other", "mcp", "pages", "admin")
    return {name: add_key(store, name, admin=name == "admin") for name in names}


@pytest.fixture(scope="module")
def served(built_root: Path, store: Path, keys: dict[str, str]) -> Iterator[Served]:
    server = start(
        built_root, store, "--require-keys", "--cost-per-key", "8", "--sessions-per-key", "2",
        "--conversations-per-key", "3",
    )  # fmt: skip
    yield server
    server.stop()


def test_one_key_flooding_costly_requests_is_refused_not_queued(served, keys):
    flood, other = keys["flood"], keys["other"]
    replies: list = []

    def costly() -> None:
        replies.append(call(served, "POST", "/api/v1/verify/citations", CLAIMS, key=flood))

    senders = [threading.Thread(target=costly) for _ in range(24)]
    for sender in senders:
        sender.start()
    slowest, others = 0.0, []
    while any(sender.is_alive() for sender in senders):
        for method, path, body, key in (
            ("GET", "/healthz", None, None),
            ("GET", "/", None, None),
            ("POST", "/api/v1/search", {"query": QUESTION}, other),
        ):
            asked = time.monotonic()
            reply = call(served, method, path, body, key=key)
            slowest = max(slowest, time.monotonic() - asked)
            assert reply.status == 200, reply.body
        others.append(call(served, "POST", "/api/v1/verify/citations", CLAIMS, key=other))
    for sender in senders:
        sender.join()
    statuses = sorted(r.status for r in replies)
    assert set(statuses) == {200, 429}, statuses
    refused = next(r for r in replies if r.status == 429)
    assert "cost units" in refused.error and int(refused.headers["retry-after"]) >= 1
    assert refused.headers["content-type"] == "application/json"
    # Another key's costly work is its own: never refused for the flood.
    assert others and all(r.status == 200 for r in others), [r.status for r in others]
    assert slowest < PROMPT_SECONDS, slowest
    metrics = call(served, "GET", "/metrics", key=keys["admin"]).body
    refusals = re.search(r"^lexkb_busy_refused_total (\S+)$", metrics, re.M)
    assert refusals and float(refusals[1]) == statuses.count(429)


def test_mcp_calls_count_against_the_same_keys_units(served, keys):
    key = keys["mcp"]
    many = {"citations": CLAIMS["citations"] * 10}  # 200 claims: 40 units, admitted alone
    running: list = []
    worker = threading.Thread(
        target=lambda: running.append(
            call(served, "POST", "/api/v1/verify/citations", many, key=key)
        )
    )
    worker.start()
    time.sleep(0.5)
    (refused,) = mcp_calls(served, key, [("verify_citations", CLAIMS)])
    worker.join()
    assert running[0].status == 200, running[0].body
    assert refused.is_error and "cost units" in _text(refused), _text(refused)
    (afterwards,) = mcp_calls(served, key, [("verify_citations", CLAIMS)])
    assert not afterwards.is_error, _text(afterwards)


def _initialize(served: Served, key: str) -> tuple[int, str | None, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=60)
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}}  # fmt: skip
    headers = {
        "Authorization": f"Bearer {key}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    try:
        connection.request("POST", "/mcp", body=json.dumps(body), headers=headers)
        response = connection.getresponse()
        content = response.read()
        found = {k.lower(): v for k, v in response.getheaders()}
        parsed = json.loads(content) if "json" in found.get("content-type", "") else {}
        return response.status, found.get("mcp-session-id"), {**found, "body": parsed}
    finally:
        connection.close()


def _end(served: Served, key: str, session: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=60)
    headers = {
        "Authorization": f"Bearer {key}",
        "Mcp-Session-Id": session,
        "Mcp-Protocol-Version": "2025-06-18",
    }
    try:
        connection.request("DELETE", "/mcp", headers=headers)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def test_mcp_sessions_are_bounded_per_key(served, keys):
    mine, theirs = keys["pages"], keys["other"]
    opened = [_initialize(served, mine) for _ in range(2)]
    assert [status for status, _, _ in opened] == [200, 200]
    status, session, reply = _initialize(served, mine)
    assert (status, session) == (429, None), reply
    assert "2 MCP sessions" in reply["body"]["error"]["message"]
    assert int(reply["retry-after"]) > 0
    other_status, other_session, _ = _initialize(served, theirs)
    assert other_status == 200 and other_session
    # A session is its key's: another key naming it finds nothing (and cannot end it).
    assert _end(served, theirs, opened[0][1]) == 404
    assert _end(served, mine, opened[0][1]) == 200
    assert _initialize(served, mine)[0] == 200


def test_conversations_are_bounded_per_key_and_listed_in_pages(served, keys):
    key = keys["pages"]
    made = [
        call(served, "POST", "/api/v1/conversations", {"title": f"c{n}"}, key=key) for n in range(3)
    ]
    assert [m.status for m in made] == [201] * 3
    over = call(served, "POST", "/api/v1/conversations", {"title": "c3"}, key=key)
    assert over.status == 409 and "3 conversations" in over.error
    first = call(served, "GET", "/api/v1/conversations?limit=2", key=key)
    assert first.status == 200 and len(first.body["items"]) == 2 and first.body["next_cursor"]
    cursor = first.body["next_cursor"]
    rest = call(served, "GET", f"/api/v1/conversations?limit=2&cursor={cursor}", key=key)
    assert len(rest.body["items"]) == 1 and rest.body["next_cursor"] is None
    listed = {c["id"] for c in first.body["items"] + rest.body["items"]}
    assert listed == {m.body["id"] for m in made}
    assert call(served, "GET", "/api/v1/conversations?limit=0", key=key).status == 422
    assert call(served, "GET", "/api/v1/conversations?limit=101", key=key).status == 422
    gone = made[0].body["id"]
    assert call(served, "DELETE", f"/api/v1/conversations/{gone}", key=key).status == 200
    again = call(served, "POST", "/api/v1/conversations", {"title": "c4"}, key=key)
    assert again.status == 201
