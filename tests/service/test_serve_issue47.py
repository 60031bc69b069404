"""Issue 47's low items, each against what failed before it was fixed; the HTTP ones over real
HTTP to a real `lexkb serve`.

- 8: a conversation deleted while one of its asks was answered failed the ask's record (its
  foreign key: a 500, the answer lost, the ask counted); the answer is now kept outside any
  conversation and returned.
- 13: deleting a conversation left the feedback on its turns (which copies their questions
  and answers); an ask outside a conversation could never be deleted. Now the feedback goes
  with the conversation, and DELETE /api/v1/answers/{id} deletes one's own answer.
- 17: one client's half-open connections took every connection slot (503 to everyone); one
  address now holds at most LEXKB_MCP_MAX_CLIENT_CONNECTIONS, and others are served.
- 18: two Host headers were read differently by the gate and by Starlette and MCP (now 400);
  `"limit": true` passed as 1 (now 422); a refusal carried each security header twice.
"""

from __future__ import annotations

import http.client
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lexkb_service.serve.store import Store
from tests.support.serve_process import ANSWER, Served, add_key, call, start

SECURITY = ("x-content-type-options", "referrer-policy", "x-frame-options")


def test_an_answer_outlives_its_conversation_deleted_while_it_was_asked(store: Store):
    made = store.create_conversation("alice", "records")
    assert made is not None
    assert store.delete_conversation("alice", made["id"])
    turn = store.record_answer("alice", ANSWER, made["id"])  # before: a foreign key error
    assert turn["conversation_id"] is None and turn["answer"]["answer"] == ANSWER["answer"]
    assert [a["answer_id"] for a in store.trace_page(10, None)] == [turn["answer_id"]]
    assert store.delete_answer("alice", turn["answer_id"])


def test_deleting_a_conversation_deletes_the_feedback_on_its_turns(store: Store):
    made = store.create_conversation("alice", "records")
    assert made is not None
    inside = store.record_answer("alice", ANSWER, made["id"])
    outside = store.record_answer("alice", ANSWER)
    for turn in (inside, outside):
        assert store.give_feedback("alice", turn["answer_id"], "positive", "thanks") is not None
    assert store.delete_conversation("alice", made["id"])
    left = store.feedback_page("alice", 10, None)
    assert [item["answer_id"] for item in left] == [outside["answer_id"]]


@pytest.fixture(scope="module")
def keyed(built_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    path = tmp_path_factory.mktemp("issue47") / "serve.db"
    keys = {name: add_key(path, name, admin=name == "admin") for name in ("ann", "bob", "admin")}
    server = start(built_root, path, "--require-keys")
    yield {"served": server, "keys": keys, "path": path}
    server.stop()


def test_a_key_deletes_its_own_asks_and_no_one_elses(keyed):
    served, keys = keyed["served"], keyed["keys"]
    seeded = Store(keyed["path"])
    try:
        ann = seeded.key_for(keys["ann"])
        assert ann is not None
        turn = seeded.record_answer(ann.id, ANSWER)  # an ask outside any conversation
    finally:
        seeded.close()
    answer_id = turn["answer_id"]
    rated = {"answer_id": answer_id, "rating": "negative", "comment": "my question"}
    assert call(served, "POST", "/api/v1/feedback", rated, key=keys["ann"]).status == 201
    path = f"/api/v1/answers/{answer_id}"
    assert call(served, "DELETE", path, key=keys["bob"]).status == 404  # another key's
    done = call(served, "DELETE", path, key=keys["ann"])
    assert done.status == 200 and done.body == {"deleted": answer_id}
    assert call(served, "DELETE", path, key=keys["ann"]).status == 404
    everyone = call(served, "GET", "/api/v1/admin/feedback", key=keys["admin"]).body["items"]
    assert all(item["answer_id"] != answer_id for item in everyone)
    answers = call(served, "GET", "/api/v1/admin/answers", key=keys["admin"]).body["items"]
    assert all(item["answer_id"] != answer_id for item in answers)


def test_a_boolean_is_not_a_number(keyed):
    served, key = keyed["served"], keyed["keys"]["ann"]
    for path, body in (
        ("/api/v1/search", {"query": "records", "limit": True}),
        ("/api/v1/hop", {"start": "Article 6", "max_hops": True}),
        ("/api/v1/search", {"query": "records", "filters": {"cluster_id": True}}),
        ("/api/v1/verify/entities", {"entities": ["x"], "source_ids": ["y"], "threshold": False}),
    ):
        refused = call(served, "POST", path, body, key=key)
        assert refused.status == 422, (path, body, refused)
    found = call(served, "POST", "/api/v1/search", {"query": "records", "limit": 2}, key=key)
    assert found.status == 200
    assert call(served, "GET", "/api/v1/conversations?limit=2", key=key).status == 200


def _raw(port: int, request: bytes, source: str = "127.0.0.1") -> bytes:
    with socket.create_connection(("127.0.0.1", port), 10, source_address=(source, 0)) as sock:
        sock.sendall(request)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
        return received


def test_a_request_with_two_host_headers_is_refused(keyed):
    port = keyed["served"].port
    host = f"127.0.0.1:{port}".encode()
    two = b"GET /healthz HTTP/1.1\r\nHost: " + host + b"\r\nHost: " + host
    reply = _raw(port, two + b"\r\nConnection: close\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 400 "), reply[:200]
    one = _raw(port, b"GET /healthz HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n")
    assert one.startswith(b"HTTP/1.1 200 "), one[:200]


@pytest.mark.parametrize("headers", [{"Host": "elsewhere.example"}, {}], ids=["421", "401"])
def test_a_refusal_carries_each_security_header_once(keyed, headers):
    connection = http.client.HTTPConnection("127.0.0.1", keyed["served"].port, timeout=30)
    try:
        connection.request("GET", "/api/v1/me", headers=headers)
        response = connection.getresponse()
        response.read()
        assert response.status in (421, 401)
        for name in SECURITY:
            assert len(response.msg.get_all(name) or []) == 1, (name, response.getheaders())
    finally:
        connection.close()


@pytest.fixture(scope="module")
def capped(built_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    path = tmp_path_factory.mktemp("issue47-capped") / "serve.db"
    server = start(
        built_root,
        path,
        LEXKB_MCP_MAX_CONNECTIONS="30",
        LEXKB_MCP_MAX_CLIENT_CONNECTIONS="10",
        LEXKB_MCP_READ_TIMEOUT="60",
    )
    yield server
    server.stop()


def test_one_clients_half_open_connections_leave_others_served(capped):
    port = capped.port
    held = []
    try:
        for _ in range(30):  # as many as the server holds, all from 127.0.0.1, never finished
            sock = socket.create_connection(("127.0.0.1", port), 10)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            held.append(sock)
        time.sleep(0.5)
        # The 11th and later from that address were answered 503 and closed.
        held[-1].settimeout(10)
        assert held[-1].recv(65536).startswith(b"HTTP/1.1 503 ")
        request = f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
        other = _raw(port, request.encode(), source="127.0.0.2")  # another client
        assert other.startswith(b"HTTP/1.1 200 "), other[:200]
    finally:
        for sock in held:
            sock.close()
    time.sleep(0.5)
    assert call(capped, "GET", "/healthz").status == 200
