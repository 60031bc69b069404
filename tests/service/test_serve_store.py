"""The store of what users write, on SQLite and on a real PostgreSQL server (started here where
Debian's server is installed, skipped otherwise): the same code, the same answers."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from lexkb_service.serve.store import MIGRATIONS, Store, StoreError
from tests.support.serve_process import ANSWER


def test_migrations_apply_once_and_reopen(target: str):
    first = Store(target)
    assert first.schema_version() == len(MIGRATIONS)
    first.close()
    again = Store(target)  # a second open applies nothing and loses nothing
    assert again.schema_version() == len(MIGRATIONS) and again.ping()
    again.close()


def test_keys_are_found_by_hash_and_revoked(store: Store):
    key, secret = store.add_key("alice")
    assert store.key_for(secret).id == key.id
    assert store.key_for(secret + "x") is None and store.key_for("not-a-key") is None
    with pytest.raises(StoreError, match="exists"):
        store.add_key("alice")
    store.revoke_key("alice")
    assert store.key_for(secret) is None
    assert [k.revoked_at is not None for k in store.api_keys()] == [True]


def test_conversations_and_feedback_stay_with_their_owner(store: Store):
    mine = store.create_conversation("alice", "  records\n retention ")
    assert mine["title"] == "records retention"
    first = store.record_answer("alice", ANSWER, mine["id"])["answer_id"]
    store.record_answer("alice", {**ANSWER, "question": "and for client money?"}, mine["id"])
    assert [t["question"] for t in store.turns("alice", mine["id"])] == [
        ANSWER["question"], "and for client money?",
    ]  # fmt: skip
    assert store.conversation_summary("bob", mine["id"]) is None
    assert store.turns("bob", mine["id"]) == []
    assert store.give_feedback("bob", first, "positive", "") is None
    given, created = store.give_feedback("alice", first, "negative", "wrong period") or ({}, None)
    assert created and (given["question"], given["confidence"], given["source_count"]) == (
        ANSWER["question"],
        0.8,
        1,
    )
    assert [f["comment"] for f in store.feedback_page("alice", 10, None)] == ["wrong period"]
    assert store.feedback_page("bob", 10, None) == []
    assert store.trace_page(1, None)[0]["answer"]["question"] == "and for client money?"
    assert not store.delete_conversation("bob", mine["id"])
    assert store.delete_conversation("alice", mine["id"])
    assert store.conversation_page("alice", 10, None) == []


def test_a_sqlite_store_is_private_and_stays_out_of_the_index(tmp_path: Path):
    Store(tmp_path / "s.db").close()
    assert (tmp_path / "s.db").stat().st_mode & 0o777 == 0o600
    root = tmp_path / "index"
    root.mkdir()
    with pytest.raises(StoreError, match="inside the index root"):
        Store(root / "nested" / "s.db", index_root=root)
    (tmp_path / "link.db").symlink_to(tmp_path / "s.db")
    with pytest.raises(StoreError, match="not a regular file"):
        Store(tmp_path / "link.db")


def test_a_store_file_keeps_the_mode_its_operator_gave_it(tmp_path: Path, caplog):
    """A new store is made 0600 whatever the umask; an existing database keeps its mode (a
    group the operator let read it stays so), with a warning when any user may read it; a file
    that is no database is refused and left as it was (issue 60, item 8)."""
    before = os.umask(0)
    try:
        Store(tmp_path / "new.db").close()
    finally:
        os.umask(before)
    assert (tmp_path / "new.db").stat().st_mode & 0o777 == 0o600
    for mode, warned in ((0o640, False), (0o644, True)):
        (tmp_path / "new.db").chmod(mode)
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="lexkb_service.serve"):
            Store(tmp_path / "new.db").close()
        assert (tmp_path / "new.db").stat().st_mode & 0o777 == mode
        said = [r.getMessage() for r in caplog.records]
        assert any("other users may read" in m and "chmod 600" in m for m in said) == warned, said
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"not a database, and longer than a SQLite header\n")
    notes.chmod(0o644)
    with pytest.raises(StoreError, match="is not a SQLite database"):
        Store(notes)
    assert notes.stat().st_mode & 0o777 == 0o644
    assert notes.read_bytes() == b"not a database, and longer than a SQLite header\n"
    assert not (tmp_path / "notes.txt-wal").exists()


def test_the_service_on_postgresql_keeps_conversations_across_restarts(
    postgres_url: str, built_root: Path
):
    from tests.support.serve_process import call, start

    question = "How long must client money reconciliation records be kept?"
    first = start(built_root, postgres_url)
    try:
        made = call(first, "POST", "/api/v1/conversations", {"title": "on postgres"}).body
        asked = f"/api/v1/conversations/{made['id']}/ask"
        turn = call(first, "POST", asked, {"question": question})
        assert turn.status == 201 and turn.body["answer"]["sources"]
        assert call(first, "GET", "/readyz").body["store"] == "postgresql"
    finally:
        first.stop()
    second = start(built_root, postgres_url)
    try:
        kept = call(second, "GET", f"/api/v1/conversations/{made['id']}/turns").body
        assert [t["question"] for t in kept["items"]] == [question]
    finally:
        second.stop()
