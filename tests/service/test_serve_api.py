"""`lexkb serve` over real HTTP: every API route, the MCP endpoint on the same port, keys and
what each may read, the ask limit, bounds on what a request may send, metrics, and a restart
that keeps what users wrote. The server is the real CLI process on the sample snapshot."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from lexkb_service.client import Client
from tests.support.mcp_process import LEXKB, environment
from tests.support.next_snapshot import root_and_grown_corpus
from tests.support.serve_process import Served, add_key, call, start

QUESTION = "How long must client money reconciliation records be kept?"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("serve") / "serve.db"


@pytest.fixture(scope="module")
def keys(store: Path) -> dict[str, str]:
    return {name: add_key(store, name, admin=name == "admin") for name in ("alice", "bob", "admin")}


@pytest.fixture(scope="module")
def served(built_root: Path, store: Path, keys: dict[str, str]) -> Iterator[Served]:
    server = start(built_root, store, "--require-keys", LEXKB_MCP_MAX_BODY_BYTES="20000")
    yield server
    server.stop()


def conforms(spec: dict, method: str, route: str, reply) -> None:
    """`reply` is what the served OpenAPI document says `route` answers with its status."""
    status = str(reply.status)
    schema = spec["paths"][route][method]["responses"][status]["content"]["application/json"]
    uri = "urn:lexkb:openapi"
    registry = Registry().with_resource(
        uri, Resource.from_contents(spec, default_specification=DRAFT202012)
    )
    reference = {"$ref": uri + schema["schema"]["$ref"]}
    Draft202012Validator(reference, registry=registry).validate(reply.body)


def json_routes(spec: dict) -> set[tuple[str, str]]:
    """(method, path) of each operation whose success is JSON."""
    found = set()
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            success = [r for s, r in operation["responses"].items() if s in ("200", "201")]
            if any("application/json" in r.get("content", {}) for r in success):
                found.add((method, path))
    return found


def test_every_response_is_the_shape_the_openapi_document_gives(served, keys):
    alice = Client(served.url, key=keys["alice"])
    admin = Client(served.url, key=keys["admin"])
    spec = alice.request("GET", "/api/v1/openapi.json").body
    v1 = "/api/v1"
    hit = alice.request("POST", f"{v1}/search", {"query": "records", "limit": 2})
    chunk = hit.body["hits"][0]["chunk_id"]
    made = alice.request("POST", f"{v1}/conversations", {"title": "v1 shape"})
    conversation = made.body["id"]
    turn = alice.request("POST", f"{v1}/conversations/{conversation}/ask", {"question": QUESTION})
    asked = alice.request("POST", f"{v1}/ask", {"question": QUESTION})
    rated = {"answer_id": turn.body["answer_id"], "rating": "positive"}
    feedback = alice.request("POST", f"{v1}/feedback", rated)
    changed = alice.request("POST", f"{v1}/feedback", {**rated, "rating": "negative"})
    calls = [
        ("post", "/search", hit),
        ("get", "/get", alice.request("GET", f"{v1}/get?reference={chunk}")),
        ("get", "/get", alice.request("GET", f"{v1}/get?reference=Article%20999(9)")),
        ("post", "/hop", alice.request("POST", f"{v1}/hop", {"start": chunk})),
        ("post", "/hop", alice.request("POST", f"{v1}/hop", {"start": "Article 999(9)"})),
        ("get", "/documents", alice.request("GET", f"{v1}/documents?limit=2")),
        ("get", "/documents/{document}/tree",
         alice.request("GET", f"{v1}/documents/records-retention-act/tree")),
        ("get", "/snapshots", alice.request("GET", f"{v1}/snapshots")),
        ("get", "/snapshots/diff", alice.request("GET", f"{v1}/snapshots/diff?old=CURRENT")),
        ("get", "/snapshots/diff/{part}",
         alice.request("GET", f"{v1}/snapshots/diff/chunks_changed?old=CURRENT")),
        ("post", "/ask", asked),
        ("post", "/conversations", made),
        ("post", "/conversations/{conversation_id}/ask", turn),
        ("get", "/conversations", alice.request("GET", f"{v1}/conversations?limit=1")),
        ("get", "/conversations/{conversation_id}",
         alice.request("GET", f"{v1}/conversations/{conversation}")),
        ("get", "/conversations/{conversation_id}/turns",
         alice.request("GET", f"{v1}/conversations/{conversation}/turns")),
        ("get", "/answers/{answer_id}",
         alice.request("GET", f"{v1}/answers/{asked.body['answer_id']}")),
        ("post", "/feedback", feedback),
        ("post", "/feedback", changed),
        ("get", "/feedback", alice.request("GET", f"{v1}/feedback")),
        ("get", "/feedback/{feedback_id}",
         alice.request("GET", f"{v1}/feedback/{feedback.body['id']}")),
        ("post", "/verify/citations", alice.request(
            "POST", f"{v1}/verify/citations",
            {"citations": [{"claim": "Records are kept for seven years.", "ref": "§ 103(b)"}]})),
        ("post", "/verify/entities", alice.request(
            "POST", f"{v1}/verify/entities", {"entities": ["seven years"], "source_ids": [chunk]})),
        ("get", "/me", alice.request("GET", f"{v1}/me")),
        ("get", "/admin/feedback", admin.request("GET", f"{v1}/admin/feedback?limit=5")),
        ("get", "/admin/answers", admin.request("GET", f"{v1}/admin/answers?limit=5")),
        ("delete", "/answers/{answer_id}",
         alice.request("DELETE", f"{v1}/answers/{asked.body['answer_id']}")),
        ("delete", "/conversations/{conversation_id}",
         alice.request("DELETE", f"{v1}/conversations/{conversation}")),
        # Refusals have their shape too.
        ("get", "/admin/answers", alice.request("GET", f"{v1}/admin/answers")),
        ("get", "/conversations", alice.request("GET", f"{v1}/conversations?cursor=nope")),
        ("post", "/search", alice.request("POST", f"{v1}/search", {"query": ""})),
    ]  # fmt: skip
    for method, route, reply in calls:
        assert reply.status in (200, 201, 400, 403, 404, 422), (route, reply.status, reply.body)
        conforms(spec, method, v1 + route, reply)
    assert json_routes(spec) - {(m, v1 + r) for m, r, _ in calls} == set()


def test_keys_are_required_and_checked(served, keys):
    assert call(served, "GET", "/api/v1/documents").status == 401
    wrong = call(served, "GET", "/api/v1/documents", key="lk_" + "x" * 43)
    assert wrong.status == 401 and "not valid" in wrong.error
    assert wrong.headers["www-authenticate"].startswith("Bearer")
    assert call(served, "GET", "/api/v1/documents", key=keys["alice"]).status == 200
    # The page, health and the OpenAPI document need none.
    page = call(served, "GET", "/")
    assert page.status == 200 and "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    assert wrong.headers["x-frame-options"] == "DENY"
    assert call(served, "GET", "/readyz").body["status"] == "ready"
    assert call(served, "GET", "/api/v1/openapi.json").status == 200


def test_lookups_answer_from_the_snapshot(served, keys):
    key = keys["alice"]
    found = call(
        served, "POST", "/api/v1/search", {"query": "client money reconciliation", "limit": 3},
        key=key,
    )  # fmt: skip
    assert found.status == 200 and found.body["hits"]
    assert found.headers["x-lexkb-snapshot"] == found.body["snapshot_version"]
    hit = found.body["hits"][0]
    assert {"citation", "section_path", "relevance", "content_hash"} <= hit.keys()

    filtered = call(
        served, "POST", "/api/v1/search",
        {"query": "records", "filters": {"document": "records-retention-act", "section": "§ 103"}},
        key=key,
    )  # fmt: skip
    assert filtered.body["hits"]
    assert {h["document_key"] for h in filtered.body["hits"]} == {"records-retention-act"}

    exact = call(served, "GET", "/api/v1/get?reference=" + hit["chunk_id"], key=key)
    assert exact.body["match"] == "exact" and exact.body["hit"]["chunk_id"] == hit["chunk_id"]
    missing = call(
        served, "GET", "/api/v1/get?reference=Article%20999(9)%20of%20the%20GDPR", key=key
    )
    assert missing.status == 404 and missing.body["found"] is False

    hops = call(served, "POST", "/api/v1/hop", {"start": hit["chunk_id"], "max_hops": 2}, key=key)
    assert hops.status == 200 and "results" in hops.body

    documents = call(served, "GET", "/api/v1/documents", key=key).body["items"]
    assert "records-retention-act" in {d["document_key"] for d in documents}
    tree = call(served, "GET", "/api/v1/documents/records-retention-act/tree", key=key).body
    assert [s["heading"] for s in tree["sections"]][0].startswith("§ 101")
    markdown = call(served, "GET", "/api/v1/documents/records-retention-act/markdown", key=key)
    assert markdown.headers["content-type"].startswith("text/markdown")
    assert "§ 103" in markdown.body
    unknown = call(served, "GET", "/api/v1/documents/no-such-document/tree", key=key)
    assert unknown.status in (400, 404) and unknown.error

    listed = call(served, "GET", "/api/v1/snapshots", key=key)
    assert listed.headers["x-lexkb-snapshot"] in {s["version"] for s in listed.body["items"]}
    same = call(served, "GET", "/api/v1/snapshots/diff?old=CURRENT&new=CURRENT", key=key)
    assert same.status == 200 and set(same.body["summary"].values()) == {0}


def test_bad_inputs_are_refused_with_a_reason(served, keys):
    key = keys["alice"]
    empty = call(served, "POST", "/api/v1/search", {"query": ""}, key=key)
    assert empty.status == 422 and empty.error.startswith("query:")
    unknown_field = call(served, "POST", "/api/v1/search", {"query": "x", "colour": "red"}, key=key)
    assert unknown_field.status == 422 and "colour" in unknown_field.error
    too_many = call(served, "POST", "/api/v1/search", {"query": "x", "limit": 101}, key=key)
    assert too_many.status == 422
    not_json = call(served, "POST", "/api/v1/search", raw=b"{not json", key=key)
    assert not_json.status == 422
    long_ref = call(served, "GET", "/api/v1/get?reference=" + "a" * 5000, key=key)
    assert long_ref.status == 422
    big = call(served, "POST", "/api/v1/search", {"query": "x" * 30000}, key=key)
    assert big.status == 413 and "bytes" in big.error
    assert call(served, "GET", "/api/v1/documents", key=key, Host="evil.example").status == 421
    evil = call(served, "GET", "/api/v1/documents", key=key, Origin="http://evil.example")
    assert evil.status == 403


def test_conversations_belong_to_their_key(served, keys):
    alice, bob = keys["alice"], keys["bob"]
    made = call(served, "POST", "/api/v1/conversations", {"title": "records"}, key=alice).body
    asked = f"/api/v1/conversations/{made['id']}/ask"
    first = call(served, "POST", asked, {"question": QUESTION}, key=alice)
    assert first.status == 201, first.body
    assert (
        first.body["answer"]["mode"] in ("DIRECT", "QUALIFIED") and first.body["answer"]["sources"]
    )
    assert first.body["conversation_id"] == made["id"] and first.body["answer_id"]
    # A follow-up that names nothing is read with the turn before it; asked alone, it abstains.
    alone = call(served, "POST", "/api/v1/ask", {"question": "and for how long?"}, key=alice).body
    assert alone["answer"]["mode"] == "ABSTAIN"
    follow = call(served, "POST", asked, {"question": "and for how long?"}, key=alice).body
    assert follow["answer"]["mode"] != "ABSTAIN" and "seven years" in follow["answer"]["answer"]
    cited = [s["citation"] for s in follow["answer"]["sources"]]
    assert "Records Retention Act, § 103(b)" in cited
    turns = call(served, "GET", f"/api/v1/conversations/{made['id']}/turns", key=alice).body
    assert [t["question"] for t in turns["items"]] == [QUESTION, "and for how long?"]
    assert turns["items"][0]["answer"]["sources"]
    listed = call(served, "GET", "/api/v1/conversations", key=alice).body["items"]
    assert made["id"] in {c["id"] for c in listed}

    # Bob sees none of it, and cannot continue, read or delete it.
    theirs = call(served, "GET", "/api/v1/conversations", key=bob).body["items"]
    assert made["id"] not in {c["id"] for c in theirs}
    one = f"/api/v1/conversations/{made['id']}"
    assert call(served, "GET", one, key=bob).status == 404
    assert call(served, "GET", f"{one}/turns", key=bob).status == 404
    assert call(served, "POST", asked, {"question": QUESTION}, key=bob).status == 404
    assert call(served, "DELETE", one, key=bob).status == 404
    feedback = {"answer_id": first.body["answer_id"], "rating": "negative", "comment": "x"}
    assert call(served, "POST", "/api/v1/feedback", feedback, key=bob).status == 404

    assert call(served, "DELETE", one, key=alice).status == 200
    assert call(served, "GET", one, key=alice).status == 404


def test_feedback_is_stored_with_its_answer_and_admin_reads_it(served, keys):
    alice = keys["alice"]
    turn = call(served, "POST", "/api/v1/ask", {"question": QUESTION}, key=alice).body
    answer = {**turn["answer"], "answer_id": turn["answer_id"]}
    given = call(
        served, "POST", "/api/v1/feedback",
        {"answer_id": answer["answer_id"], "rating": "positive", "comment": "cited the Act"},
        key=alice,
    ).body  # fmt: skip
    assert given["question"] == QUESTION and given["answer"] == answer["answer"]
    assert given["confidence"] == answer["confidence"]
    assert given["source_count"] == len(answer["sources"])
    bad_rating = {"answer_id": answer["answer_id"], "rating": "meh"}
    assert call(served, "POST", "/api/v1/feedback", bad_rating, key=alice).status == 422

    assert call(served, "GET", "/api/v1/admin/feedback", key=alice).status == 403
    listed = call(served, "GET", "/api/v1/admin/feedback", key=keys["admin"]).body["items"]
    assert any(f["comment"] == "cited the Act" for f in listed)
    traces = call(served, "GET", "/api/v1/admin/answers", key=keys["admin"]).body["items"]
    trace = next(t for t in traces if t["answer_id"] == answer["answer_id"])
    assert trace["answer"]["sources"][0]["relevance"] is not None
    assert trace["answer"]["sentences"][0]["verdict"]


def test_verification_routes(served, keys):
    key = keys["alice"]
    checked = call(
        served, "POST", "/api/v1/verify/citations",
        {"citations": [
            {"claim": "Client money reconciliation records must be kept for seven years.", "ref": "§ 103(b)"},
            {"claim": "Client money reconciliation records must be kept for two years.", "ref": "§ 103(b)"},
        ]},
        key=key,
    ).body  # fmt: skip
    verdicts = [c["verdict"] for c in checked["citations"]]
    assert verdicts == ["supported", "contradicted"]
    assert checked["citations"][0]["best_sentence"].startswith("(b) Records")
    hit = call(served, "POST", "/api/v1/search", {"query": "seven years", "limit": 1}, key=key)
    entities = call(
        served, "POST", "/api/v1/verify/entities",
        {"entities": ["seven years", "eleven years"],
         "source_ids": [hit.body["hits"][0]["chunk_id"]]},
        key=key,
    ).body  # fmt: skip
    found = {e["entity"]: e["match"] for e in entities["entities"]}
    assert found == {"seven years": "exact", "eleven years": "near_miss"}


def test_mcp_on_the_same_port_takes_the_same_keys(served, keys):
    from mcp import Client

    async def session() -> None:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        headers = {"Authorization": f"Bearer {keys['bob']}"}
        async with httpx2.AsyncClient(headers=headers) as http:
            transport = streamable_http_client(f"{served.url}/mcp", http_client=http)
            async with Client(transport) as client:
                result = await client.call_tool("search", {"query": "client money", "limit": 1})
                assert result.structured_content["hits"]

    asyncio.run(session())
    refused = call(served, "POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert refused.status == 401


def test_metrics_count_requests_and_answers(served, keys):
    call(served, "POST", "/api/v1/ask", {"question": QUESTION}, key=keys["alice"])
    assert call(served, "GET", "/metrics", key=keys["alice"]).status == 403
    text = call(served, "GET", "/metrics", key=keys["admin"]).body
    assert 'lexkb_requests_total{route="/api/v1/ask",status="201"}' in text
    assert 'lexkb_request_latency_seconds{quantile="0.99",route="/api/v1/search"}' in text
    assert "lexkb_answers_total{mode=" in text
    assert "lexkb_answer_cache_hits_total" in text
    assert "lexkb_answer_sentences_total{verdict=" in text
    assert "lexkb_snapshot_info{version=" in text


def test_the_ask_limit_answers_429_with_retry_after(built_root, tmp_path):
    store = tmp_path / "limited.db"
    key = add_key(store, "carol")
    server = start(built_root, store, "--require-keys", "--asks-per-hour", "2")
    try:
        statuses = [
            call(server, "POST", "/api/v1/ask", {"question": QUESTION}, key=key).status
            for _ in range(3)
        ]
        assert statuses == [201, 201, 429]
        over = call(server, "POST", "/api/v1/ask", {"question": QUESTION}, key=key)
        assert 3000 <= int(over.headers["retry-after"]) <= 3600 and "asks an hour" in over.error
        # Lookups are not counted.
        assert call(server, "GET", "/api/v1/documents", key=key).status == 200
        assert call(server, "GET", "/api/v1/me", key=key).body["asks_remaining"] == 0
    finally:
        server.stop()


def test_a_restart_keeps_conversations_and_the_store_is_private(built_root, tmp_path):
    store = tmp_path / "kept.db"
    first = start(built_root, store)  # loopback, single-user mode: no key needed
    try:
        made = call(first, "POST", "/api/v1/conversations", {"title": "kept"}).body
        call(first, "POST", f"/api/v1/conversations/{made['id']}/ask", {"question": QUESTION})
        assert call(first, "GET", "/api/v1/me").body["key_name"] == "local"
    finally:
        first.stop()
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o600
    assert not any(p.name.startswith("serve") for p in built_root.rglob("*.db"))
    second = start(built_root, store)
    try:
        kept = call(second, "GET", f"/api/v1/conversations/{made['id']}/turns").body
        assert [t["question"] for t in kept["items"]] == [QUESTION]
    finally:
        second.stop()


def test_the_store_is_refused_inside_the_index_root(built_root):
    done = subprocess.run(
        [LEXKB, "serve", "--index", str(built_root), "--store", str(built_root / "serve.db")],
        capture_output=True, text=True, timeout=120, env=environment(),
    )  # fmt: skip
    assert done.returncode == 2 and "inside the index root" in done.stderr
    assert not (built_root / "serve.db").exists()


def test_off_loopback_needs_allowed_hosts_and_origins(built_root, tmp_path):
    done = subprocess.run(
        [LEXKB, "serve", "--index", str(built_root), "--store", str(tmp_path / "s.db"),
         "--host", "0.0.0.0"],
        capture_output=True, text=True, timeout=120, env=environment(),
    )  # fmt: skip
    assert done.returncode == 2
    assert "--allow-host" in done.stderr and "--allow-origin" in done.stderr


def test_a_new_snapshot_is_served_without_a_restart(built_root, tmp_path):
    from pipelines.in_process import run_build

    root, corpus = root_and_grown_corpus(built_root, tmp_path)
    server = start(root, tmp_path / "s.db")
    try:
        before = call(server, "GET", "/api/v1/me").body["snapshot_version"]
        zephyrine = {"query": "zephyrine return"}
        assert call(server, "POST", "/api/v1/search", zephyrine).body["hits"] == []
        run_build([corpus], root, embedder="none")
        found = call(server, "POST", "/api/v1/search", {**zephyrine, "mode": "keyword"})
        assert found.body["snapshot_version"] != before
        assert found.body["hits"][0]["document_title"] == "Zephyrine Notice"
        listed = call(server, "GET", "/api/v1/snapshots")
        assert len(listed.body["items"]) == 2 and listed.headers["x-lexkb-snapshot"] != before
        # Newest first, as the operation's summary says: the one just published is served.
        newest, older = listed.body["items"]
        assert newest["version"] > older["version"] == before and newest["current"]
        change = call(server, "GET", "/api/v1/snapshots/diff?old=previous&new=CURRENT").body
        assert change["summary"]["documents_added"] == 1
        assert change["documents_added"] == [
            {"document_key": "notice", "title": "Zephyrine Notice"}
        ]
        missing = call(server, "GET", "/api/v1/snapshots/diff?old=20000101&new=CURRENT")
        assert missing.status == 404 and missing.error
    finally:
        server.stop()


def test_keys_are_stored_hashed_and_can_be_revoked(tmp_path, built_root):
    store = tmp_path / "keys.db"
    secret = add_key(store, "dave")
    assert secret.startswith("lk_") and secret.encode() not in store.read_bytes()
    listed = subprocess.run(
        [LEXKB, "serve", "keys", "list", "--json", "--store", str(store)],
        capture_output=True, text=True, check=True, env=environment(),
    )  # fmt: skip
    assert [k["name"] for k in json.loads(listed.stdout)] == ["dave"]
    server = start(built_root, store, "--require-keys")
    try:
        assert call(server, "GET", "/api/v1/me", key=secret).status == 200
        subprocess.run(
            [LEXKB, "serve", "keys", "revoke", "dave", "--store", str(store)],
            check=True, capture_output=True, env=environment(),
        )  # fmt: skip
        assert call(server, "GET", "/api/v1/me", key=secret).status == 401
    finally:
        server.stop()
