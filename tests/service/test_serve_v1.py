"""/api/v1 over real HTTP to a real `lexkb serve`, called through lexkb_service.client (issue 49,
items 9 to 12; the CLI around the service, item 13, is in test_serve_cli_store.py).

- 9: a diff names the documents added, removed and changed (key and title) and pages its
  paragraphs and citations (before: every chunk label and edge in one reply).
- 10: feedback is one per answer and key, and changing it changes that one; the admin's traces
  say what was searched, the candidates with their scores, the time taken, who asked, a page
  at a time.
- 11: what is made is 201 with its Location; every listing is a page in one envelope; times
  are ISO 8601; a conversation has one shape; `get` and `hop` answer an unknown reference
  alike; the OpenAPI document declares the key scheme; errors say what is wrong in words.
- 12: the client's methods are the OpenAPI document's operations, with their parameters and
  defaults.

And issue 60, item 8: the client's lookups return the types of what the API sends (before:
`dict[str, Any]` from `search`, `get_reference` and `hop`), each checked against real replies.

And issue 60, item 3: the first routes, under /api without a version, are gone (404, as any
path that names no route), and the page calls /api/v1 alone.
"""

from __future__ import annotations

import inspect
import json
import re
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import get_type_hints, is_typeddict

import pytest

from lexkb_service.client import ROUTES, ApiError, Client
from lexkb_service.serve.app import STATIC
from lexkb_service.serve.store import MIGRATIONS, Store
from tests.conftest import CORPUS
from tests.service.conftest import CHROMIUM
from tests.support.next_snapshot import NOTICE
from tests.support.serve_process import ANSWER, Served, add_key, call, start
from tests.support.typed_replies import check

QUESTION = "How long must client money reconciliation records be kept?"
FOLLOW_UP = "and who must keep them?"
ALONE = "How often must client money be reconciled?"


@pytest.fixture(scope="module")
def keyed(built_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    path = tmp_path_factory.mktemp("v1") / "serve.db"
    keys = {name: add_key(path, name, admin=name == "admin") for name in ("ann", "bob", "admin")}
    server = start(built_root, path, "--require-keys")
    clients = {name: Client(server.url, key=key) for name, key in keys.items()}
    yield {"served": server, "keys": keys, "clients": clients}
    server.stop()


@pytest.fixture(scope="module")
def changed(
    built_root: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Served, Path]]:
    """A root whose second snapshot drops the FAQ, changes § 103(b) and adds a notice: the
    server, and the root."""
    from pipelines.in_process import run_build

    work = tmp_path_factory.mktemp("v1-diff")
    root, corpus = work / "root", work / "corpus"
    shutil.copytree(built_root / "snapshots", root / "snapshots")
    shutil.copy(built_root / "CURRENT", root / "CURRENT")
    shutil.copytree(CORPUS, corpus)
    (corpus / "client-assets-faq.jsonl").unlink()
    act = corpus / "records-retention-act.txt"
    act.write_text(act.read_text().replace("seven years", "eight years"), encoding="utf-8")
    (corpus / "notice.md").write_text(NOTICE, encoding="utf-8")
    run_build([corpus], root, embedder="none")
    server = start(root, work / "serve.db")
    yield server, root
    server.stop()


def refused(call, status: int) -> ApiError:
    with pytest.raises(ApiError) as caught:
        call()
    assert caught.value.status == status, caught.value
    return caught.value


def test_a_diff_names_its_documents_and_pages_the_rest(changed):
    from lexkb.core.store.diff import diff

    served, root = changed
    api = Client(served.url)
    overview = api.snapshot_diff()  # previous -> CURRENT
    assert overview["documents_added"] == [{"document_key": "notice", "title": "Zephyrine Notice"}]
    assert overview["documents_removed"] == [
        {"document_key": "LKB-FAQ", "title": "Lexkb Authority Client Assets FAQ"}
    ]
    assert overview["documents_changed"] == [
        {"document_key": "records-retention-act", "title": "Records Retention Act"}
    ]
    assert "chunks_removed" not in overview and "edges_removed" not in overview
    whole = json.loads(json.dumps(diff(root, overview["old"], overview["new"]).to_dict()))
    assert overview["summary"] == whole["summary"]
    for part in (
        "chunks_added",
        "chunks_removed",
        "chunks_changed",
        "edges_added",
        "edges_removed",
    ):
        first = api.snapshot_diff_part(part, limit=1)
        assert len(first["items"]) <= 1
        assert (first["next_cursor"] is None) == (overview["summary"][part] <= 1)
        paged = list(api.every(api.snapshot_diff_part, part=part, limit=1))
        assert paged == whole[part] and len(paged) == overview["summary"][part]
    assert overview["summary"]["chunks_removed"] == 3  # the FAQ's three questions
    changes = api.snapshot_diff_part("chunks_changed")["items"]
    assert any('"seven" -> "eight"' in c["changes"] for c in changes)
    # A cursor names the diff it pages: given for two other versions, it is refused.
    cursor = api.snapshot_diff_part("chunks_removed", limit=1)["next_cursor"]
    other = refused(
        lambda: api.snapshot_diff_part("chunks_removed", old="CURRENT", cursor=cursor), 400
    )
    assert "start again without a cursor" in other.error
    unknown = api.request("GET", "/api/v1/snapshots/diff/chunks_renamed")
    assert unknown.status == 422 and "part in the path" in unknown.body["error"]


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_the_page_lists_the_documents_a_diff_names(changed, page):
    served, _ = changed
    page.goto(served.url + "/#snapshots")
    page.wait_for_selector("#snapshot-rows tr:nth-child(2)")
    page.click("#diff-form button")  # previous -> the newest, as the page offers them
    page.wait_for_selector("#diff-result h4")
    shown = {
        heading: items
        for heading, items in page.evaluate(
            """() => [...document.querySelectorAll('#diff-result h4')].map((h) =>
            [h.textContent, [...h.nextElementSibling.children].map((li) => li.textContent)])"""
        )
    }
    assert shown == {
        "Documents added (1)": ["Zephyrine Notice · notice"],
        "Documents removed (1)": ["Lexkb Authority Client Assets FAQ · LKB-FAQ"],
        "Documents changed (1)": ["Records Retention Act · records-retention-act"],
    }
    assert "chunks removed: 3" in page.inner_text("#diff-result")
    assert page.errors == []


def test_feedback_is_one_per_answer_and_key_and_changes_in_place(keyed):
    ann, bob, admin = (keyed["clients"][n] for n in ("ann", "bob", "admin"))
    turn = ann.ask(QUESTION)
    first = ann.request(
        "POST", "/api/v1/feedback", {"answer_id": turn["answer_id"], "rating": "positive"}
    )
    assert (
        first.status == 201 and first.headers["location"] == f"/api/v1/feedback/{first.body['id']}"
    )
    assert ann.request("GET", first.headers["location"]).body == first.body
    again = ann.request(
        "POST", "/api/v1/feedback",
        {"answer_id": turn["answer_id"], "rating": "negative", "comment": "wrong period"},
    )  # fmt: skip
    assert again.status == 200 and again.body["id"] == first.body["id"]
    assert (again.body["rating"], again.body["comment"]) == ("negative", "wrong period")
    assert again.body["created_at"] == first.body["created_at"]
    assert again.body["updated_at"] >= first.body["updated_at"]
    # Given a third time, through the client's method, it changes the same one.
    third = ann.give_feedback(turn["answer_id"], "positive")
    assert third["id"] == first.body["id"]
    mine = [f for f in ann.every(ann.list_feedback) if f["answer_id"] == turn["answer_id"]]
    assert [(f["id"], f["rating"]) for f in mine] == [(first.body["id"], "positive")]
    everyone = [f for f in admin.every(admin.admin_feedback) if f["answer_id"] == turn["answer_id"]]
    assert [(f["owner_name"], f["rating"]) for f in everyone] == [("ann", "positive")]
    refused(lambda: bob.give_feedback(turn["answer_id"], "negative"), 404)
    refused(lambda: bob.get_feedback(first.body["id"]), 404)


def test_a_store_keeps_one_feedback_per_answer_and_key(store: Store):
    answer_id = store.record_answer("ann", ANSWER)["answer_id"]
    made, created = store.give_feedback("ann", answer_id, "positive", "") or ({}, None)
    changed, again = store.give_feedback("ann", answer_id, "negative", "no") or ({}, None)
    assert (created, again) == (True, False) and made["id"] == changed["id"]
    kept = store.feedback_page("ann", 10, None)
    assert [(f["rating"], f["comment"]) for f in kept] == [("negative", "no")]
    assert store.give_feedback("bob", answer_id, "positive", "") is None


def test_the_migration_keeps_the_newest_of_each_keys_feedback(target: str, monkeypatch):
    from lexkb_service.serve import database

    clean = Store(target)  # a PostgreSQL server serves the module: start from no tables
    for table in ("feedback", "answers", "conversations", "api_keys", "schema_migrations"):
        clean._rows(f"DROP TABLE IF EXISTS {table}")
    clean.close()
    monkeypatch.setattr(database, "MIGRATIONS", MIGRATIONS[:1])
    old = database.Database(target)  # a store as the first migration left it
    given = [("f0", "ann", 100.0), ("f1", "ann", 102.0), ("f2", "ann", 101.0), ("g0", "bob", 99.0)]
    for feedback_id, owner, at in given:
        old._rows(
            "INSERT INTO feedback (id, owner, answer_id, rating, comment, question, answer, "
            "confidence, source_count, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (feedback_id, owner, "a1", "positive", feedback_id, "q", "a", 0.5, 1, at),
        )
    old.close()
    monkeypatch.undo()
    moved = Store(target)
    try:
        assert moved.schema_version() == len(MIGRATIONS)
        kept = moved.feedback_page(None, 10, None)
        assert sorted((f["owner"], f["comment"]) for f in kept) == [
            ("ann", "f1"), ("bob", "g0"),
        ]  # fmt: skip
    finally:
        moved._rows("DELETE FROM feedback")
        moved.close()


def test_traces_show_what_was_searched_the_candidates_time_and_owner(keyed):
    ann, admin = keyed["clients"]["ann"], keyed["clients"]["admin"]
    conversation = ann.create_conversation("traced")
    ann.ask_in_conversation(conversation["id"], QUESTION)
    follow = ann.ask_in_conversation(conversation["id"], FOLLOW_UP)
    alone = ann.ask(ALONE)
    again = ann.ask(ALONE)
    assert again["answer"]["from_cache"]
    traces = {t["answer_id"]: t for t in admin.every(admin.admin_traces, limit=2)}
    trace = traces[follow["answer_id"]]
    assert trace["owner_name"] == "ann" and trace["owner"] != "ann"
    assert QUESTION in trace["searched"] and FOLLOW_UP in trace["searched"]
    assert trace["candidates"] and trace["seconds"] > 0
    first = trace["candidates"][0]
    assert first["chunk_id"] and first["citation"] and isinstance(first["score"], float)
    assert 0 <= first["relevance"] <= 1
    assert traces[alone["answer_id"]]["searched"] == ALONE
    assert traces[again["answer_id"]]["candidates"] == []  # from the cache: nothing searched
    # Newest first, a page at a time, none twice.
    page = admin.admin_traces(limit=2)
    assert [t["answer_id"] for t in page["items"]] == [again["answer_id"], alone["answer_id"]]
    listed = [t["answer_id"] for t in admin.every(admin.admin_traces, limit=3)]
    assert len(listed) == len(set(listed)) == len(traces)
    assert refused(lambda: ann.admin_traces(), 403).error.startswith("this needs an admin key")


def test_the_clients_replies_are_the_types_it_declares(keyed):
    ann = keyed["clients"]["ann"]

    def returned(name: str, *args, **kwargs):
        """The method's reply, checked against its declared return type."""
        hint = get_type_hints(getattr(Client, name))["return"]
        reply = getattr(ann, name)(*args, **kwargs)
        check(reply, hint, name)
        return reply

    for name in ("search", "get_reference", "hop"):
        assert is_typeddict(get_type_hints(getattr(Client, name))["return"]), name
    found = returned("search", "client money reconciliation records", limit=5)
    assert found["hits"] and found["hits"][0]["citation"]
    returned("search", "records", mode="keyword", filters={"document": "records-retention-act"})
    looked = returned("get_reference", "§ 103(b)")
    assert looked["hit"] is not None and looked["cites"]
    hopped = returned("hop", looked["hit"]["chunk_id"], max_hops=2)
    assert hopped["results"] and hopped["results"][0]["path"]
    returned("hop", "§ 103")  # a section, walked from
    returned("ask", QUESTION)
    returned("me")
    returned("list_documents")
    returned("list_snapshots")
    # A refusal's body is the lookup too, with its reason as the error.
    unknown = refused(lambda: ann.get_reference("Article 999(9)"), 404).response.body
    lookup = {k: v for k, v in unknown.items() if k != "error"}
    check(lookup, get_type_hints(Client.get_reference)["return"], "refused")
    for name in ("search", "ask"):  # each says what it returns and raises
        assert "ApiError" in (getattr(Client, name).__doc__ or ""), name


def test_what_is_made_is_201_with_its_location(keyed):
    bob = keyed["clients"]["bob"]
    made = bob.request("POST", "/api/v1/conversations", {"title": "located"})
    assert made.status == 201
    assert made.headers["location"] == f"/api/v1/conversations/{made.body['id']}"
    assert bob.request("GET", made.headers["location"]).body == made.body
    asked = bob.request(
        "POST", f"/api/v1/conversations/{made.body['id']}/ask", {"question": QUESTION}
    )
    assert asked.status == 201 and asked.headers["x-lexkb-snapshot"]
    kept = bob.request("GET", asked.headers["location"])
    assert kept.status == 200 and kept.body == asked.body
    assert bob.get_conversation(made.body["id"])["turn_count"] == 1


def test_every_listing_is_a_page_in_one_envelope(keyed):
    bob = keyed["clients"]["bob"]
    made = [bob.create_conversation(f"page {n}")["id"] for n in range(5)]
    listings = [
        bob.list_conversations(limit=2), bob.list_feedback(limit=2), bob.list_documents(limit=2),
        bob.list_snapshots(limit=2), bob.list_turns(made[0], limit=2),
    ]  # fmt: skip
    assert all(set(page) == {"items", "next_cursor"} for page in listings)
    first = bob.list_conversations(limit=2)
    assert [c["id"] for c in first["items"]] == made[::-1][:2] and first["next_cursor"]
    walked = [c["id"] for c in bob.every(bob.list_conversations, limit=2)]
    assert walked[:5] == made[::-1] and len(walked) == len(set(walked))
    documents = [d["document_key"] for d in bob.every(bob.list_documents, limit=2)]
    assert len(documents) == 5 and "records-retention-act" in documents
    wrong = refused(lambda: bob.list_conversations(cursor=first["next_cursor"] + "x"), 400)
    assert "cursor" in wrong.error
    other = refused(lambda: bob.list_feedback(cursor=first["next_cursor"]), 400)
    assert "not given by a page of feedback" in other.error


def test_times_are_iso_8601_and_a_conversation_has_one_shape(keyed):
    ann = keyed["clients"]["ann"]
    made = ann.create_conversation("when")
    turn = ann.ask_in_conversation(made["id"], QUESTION)
    listed = next(c for c in ann.every(ann.list_conversations) if c["id"] == made["id"])
    alone = ann.get_conversation(made["id"])
    assert listed == alone and set(alone) == set(made)
    assert alone["turn_count"] == 1 and alone["updated_at"] >= made["created_at"]
    feedback = ann.give_feedback(turn["answer_id"], "positive")
    now = datetime.now(UTC)
    for value in (alone["created_at"], alone["updated_at"], turn["at"], feedback["created_at"],
                  ann.list_turns(made["id"])["items"][0]["at"]):  # fmt: skip
        when = datetime.fromisoformat(value)
        assert when.utcoffset() == timedelta(0) and abs(now - when) < timedelta(minutes=5)


def test_get_and_hop_answer_an_unknown_reference_alike(keyed):
    ann = keyed["clients"]["ann"]
    got = refused(lambda: ann.get_reference("Article 999(9)"), 404).response
    hopped = refused(lambda: ann.hop("Article 999(9)"), 404).response
    assert got.body == hopped.body
    assert got.body["match"] == "not_found" and got.body["error"] == got.body["reason"]
    nearest = refused(lambda: ann.hop("§ 103(z)"), 404).response.body
    assert nearest["match"] == "enclosing" and nearest["hit"]["ref"] == "§ 103"
    found = ann.get_reference("§ 103(b)")
    assert found["found"] and isinstance(ann.hop(found["hit"]["chunk_id"])["results"], list)


def test_errors_say_what_is_wrong_in_words(keyed):
    served, key = keyed["served"], keyed["keys"]["ann"]
    said = {  # before: "1: JSON decode error", "Input should be a valid dictionary or ..."
        b"{not json": "the body is not valid JSON (Expecting property name",
        b"[1, 2]": "the body must be a JSON object of this route's fields, not a list",
        b'"a question"': "the body must be a JSON object of this route's fields, not a string",
        b"": "this route takes a JSON object as its body, and none was sent",
        b"{}": "question: required, and not given",
        b'{"question": "x", "colour": 1}': "colour: not a field this route takes",
    }
    for raw, reason in said.items():
        reply = call(served, "POST", "/api/v1/ask", raw=raw, key=key)
        assert reply.status == 422 and reason in reply.error, (raw, reply.body)
    limit = call(served, "GET", "/api/v1/conversations?limit=0", key=key)
    assert limit.status == 422 and limit.error.startswith("the parameter limit:")


def test_the_document_declares_keys_and_only_v1(keyed):
    ann = keyed["clients"]["ann"]
    spec = ann.request("GET", "/api/v1/openapi.json").body
    scheme = spec["components"]["securitySchemes"]["apiKey"]
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    assert spec["security"] == [{"apiKey": []}]
    assert all(path.startswith("/api/v1/") for path in spec["paths"])
    assert not any(o.get("deprecated") for ops in spec["paths"].values() for o in ops.values())
    assert "deprecation" not in ann.request("GET", "/api/v1/me").headers


# Routes of the first version, each with a body it took.
FIRST_ROUTES = [
    ("GET", "/api/openapi.json", None),
    ("GET", "/api/me", None),
    ("GET", "/api/documents", None),
    ("GET", "/api/get?reference=%C2%A7%20103(b)", None),
    ("GET", "/api/snapshots/diff", None),
    ("GET", "/api/conversations", None),
    ("GET", "/api/admin/answers", None),
    ("POST", "/api/search", {"query": "records"}),
    ("POST", "/api/ask", {"question": QUESTION}),
    ("POST", "/api/conversations", {"title": "old"}),
    ("POST", "/api/feedback", {"answer_id": "x", "rating": "positive"}),
    ("POST", "/api/verify/citations", {"citations": [{"claim": "x", "ref": "§ 103(b)"}]}),
]


def test_the_first_routes_are_gone(keyed):
    served, admin = keyed["served"], keyed["keys"]["admin"]
    before = call(served, "GET", "/api/v1/me", key=admin).body["asks_remaining"]
    for method, path, body in FIRST_ROUTES:
        reply = call(served, method, path, body, key=admin)
        assert reply.status == 404, (method, path, reply.status, reply.body)
        assert "deprecation" not in reply.headers and "link" not in reply.headers
    # Nothing was asked or made on the way.
    assert call(served, "GET", "/api/v1/me", key=admin).body["asks_remaining"] == before
    assert Client(served.url, key=admin).list_conversations()["items"] == []


def test_the_page_calls_v1_alone():
    scripts = {path.name: path.read_text(encoding="utf-8") for path in STATIC.glob("*.js")}
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    assert {"app.js", "viewer.js"} <= scripts.keys()
    for name, text in [*scripts.items(), ("index.html", page)]:
        others = re.findall(r"/api/(?!v1\b)[^\s\"'`]*", text)
        assert others == [], (name, others)
    assert '"/api/v1"' in scripts["app.js"]


def test_the_client_is_the_documents_operations(keyed):
    spec = keyed["clients"]["ann"].request("GET", "/api/v1/openapi.json").body
    schemas = spec["components"]["schemas"]
    operations = {
        o["operationId"]: (method.upper(), path, o)
        for path, ops in spec["paths"].items() if path.startswith("/api/v1/")
        for method, o in ops.items()
    }  # fmt: skip
    assert {name: (m, p) for name, (m, p, _) in operations.items()} == ROUTES
    for name, (method, _, operation) in operations.items():
        documented = {
            p["name"]: (p.get("required", False), p["schema"].get("default"))
            for p in operation.get("parameters", [])
        }
        if "requestBody" in operation:
            assert method == "POST" and not any(
                p["in"] == "query" for p in operation.get("parameters", [])
            )
            ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            body = schemas[ref.rpartition("/")[2]]
            for field, described in body["properties"].items():
                required = field in body.get("required", [])
                documented[field] = (required, described.get("default"))
        signature = inspect.signature(getattr(Client, name))
        empty = inspect.Parameter.empty
        given = {
            p.name: (p.default is empty, None if p.default is empty else p.default)
            for p in signature.parameters.values()
            if p.name != "self"
        }
        assert given == documented, name
