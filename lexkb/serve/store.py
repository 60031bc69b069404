"""The store for what users write: API keys, conversations, answers (with their traces) and
feedback, in SQLite (a file the operator names, WAL, 0600) or PostgreSQL (a URL).

One set of SQL serves both: statements are written with `?` placeholders and turned into
psycopg's `%s` for PostgreSQL; ids are random text made here and times are seconds since the
epoch, so neither database's own sequences or time types are needed. The schema is created and
moved forward by MIGRATIONS, each applied once, in order, inside a transaction, and recorded in
`schema_migrations`, so a store written by an older lexkb opens in a newer one.

Every read and write of a user's rows names its owner (the key's id): a conversation, answer or
feedback of another key is not found, never shown. Each statement runs under one lock on one
connection: the store is written a few times per ask, so that is not the bottleneck (the ask
itself is).

A PostgreSQL server can restart under a running service (an upgrade, a failover, `pg_ctl
restart`), and psycopg's connection then stays closed for good: every keyed request failed with
"the connection is closed" until lexkb serve was restarted too. So the connection is made again
whenever it is found lost: a read (SELECT) that finds it lost is run once more on the new one;
a write is preceded by a ping (which reconnects), so that it never goes out on a connection
already lost, and is not repeated when the connection is lost under it (whether it was applied
is then unknown). While the server cannot be reached, StoreUnavailable says so (the API answers
503 with Retry-After) and the next request tries again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("lexkb.serve")
KEY_PREFIX = "lk_"
# Seconds to wait for PostgreSQL to accept a connection: a server that does not answer fails a
# request after this long instead of holding the store's lock (and every request) longer.
CONNECT_TIMEOUT = 5
# The owner of everything written in single-user mode (loopback, no keys).
LOCAL_OWNER = "local"
MAX_TITLE_CHARS = 200
# Conversations one key may keep (lexkb serve --conversations-per-key).
CONVERSATIONS_PER_KEY = 1000
MAX_COMMENT_CHARS = 2000

MIGRATIONS: tuple[str, ...] = (
    # 1: keys, conversations, answers (a conversation's turns, and the trace of every ask),
    # feedback on an answer.
    """
    CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        key_hash TEXT NOT NULL UNIQUE,
        admin INTEGER NOT NULL DEFAULT 0,
        created_at DOUBLE PRECISION NOT NULL,
        revoked_at DOUBLE PRECISION
    );
    CREATE TABLE conversations (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        title TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX conversations_owner ON conversations (owner, updated_at);
    CREATE TABLE answers (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        conversation_id TEXT REFERENCES conversations (id) ON DELETE CASCADE,
        question TEXT NOT NULL,
        answer TEXT NOT NULL,
        mode TEXT NOT NULL,
        confidence DOUBLE PRECISION NOT NULL,
        source_count INTEGER NOT NULL,
        snapshot_version TEXT,
        trace TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX answers_conversation ON answers (conversation_id, created_at);
    CREATE INDEX answers_created ON answers (created_at);
    CREATE TABLE feedback (
        id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        answer_id TEXT NOT NULL,
        rating TEXT NOT NULL,
        comment TEXT NOT NULL,
        question TEXT NOT NULL,
        answer TEXT NOT NULL,
        confidence DOUBLE PRECISION NOT NULL,
        source_count INTEGER NOT NULL,
        created_at DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX feedback_created ON feedback (created_at);
    """,
)


class StoreError(ValueError):
    """A store lexkb will not open, or a request it refuses; the message says why."""


class StoreUnavailable(StoreError):
    """The database cannot be reached now (PostgreSQL restarting, or down): worth retrying,
    unlike other StoreErrors. The message names no host or port: it goes to key holders."""

    def __init__(self, message: str = "the store does not answer now; try again shortly") -> None:
        super().__init__(message)


@dataclass(frozen=True)
class Key:
    """An API key as stored: its hash, never the key."""

    id: str
    name: str
    admin: bool
    created_at: float
    revoked_at: float | None


def key_hash(secret: str) -> str:
    """SHA-256 of a key: keys are 32 random bytes, so a plain hash cannot be reversed by
    guessing, and a lookup by hash compares no secret in Python."""
    return hashlib.sha256(secret.encode()).hexdigest()


def _id() -> str:
    return secrets.token_hex(12)


def _key(row: Sequence[Any]) -> Key:
    """A Key from (id, name, admin, created_at, revoked_at)."""
    return Key(row[0], row[1], bool(row[2]), row[3], row[4])


def _turn(
    answer_id: str, conversation_id: str | None, question: str, trace: str, at: float
) -> dict:
    return {
        "answer_id": answer_id,
        "conversation_id": conversation_id,
        "question": question,
        "answer": json.loads(trace),
        "at": at,
    }


def is_url(target: str) -> bool:
    return target.startswith(("postgresql://", "postgres://"))


def sqlite_path(target: str | Path, index_root: str | Path | None = None) -> Path:
    """The SQLite file for `target`, refused inside the index root (snapshots stay read-only)
    and when it is not a regular file."""
    path = Path(target).expanduser().absolute()
    if index_root is not None and not str(index_root).startswith("s3://"):
        root = Path(index_root).expanduser().resolve()
        if path.resolve() == root or root in path.resolve().parents:
            raise StoreError(
                f"the store {path} lies inside the index root {root}: name a file outside it "
                "(what users write never goes into the index)"
            )
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise StoreError(f"the store {path} is not a regular file")
    return path


class Store:
    """Keys, conversations, answers and feedback; see the module's docstring."""

    def __init__(self, target: str | Path, index_root: str | Path | None = None) -> None:
        self.postgres = is_url(str(target))
        self._lock = threading.RLock()
        if self.postgres:
            try:
                import psycopg
            except ImportError as exc:  # the optional dependency (pip install lexkb[postgres])
                raise StoreError(
                    "a PostgreSQL store needs psycopg: pip install 'lexkb[postgres]'"
                ) from exc
            self._url = str(target)
            self._psycopg: Any = psycopg
            self._db: Any = None
            self._depth = 0  # transactions open: no reconnecting in the middle of one
            self._live()
            self.where = self.kind = "postgresql"
        else:
            path = sqlite_path(target, index_root)
            path.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
            os.chmod(path, 0o600)
            self._db = sqlite3.connect(
                path, check_same_thread=False, isolation_level=None, timeout=10
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self.where = str(path)
            self.kind = "sqlite"
        self.migrate()

    # -- plumbing -------------------------------------------------------------------------

    def _sql(self, statement: str) -> str:
        return statement.replace("?", "%s") if self.postgres else statement

    def _rows(self, statement: str, params: Sequence[Any] = ()) -> list[tuple]:
        with self._lock:
            if not self.postgres:
                return self._run(self._db, statement, params)
            if self._depth:  # inside a transaction: on the connection it began on, or fail
                return self._guarded(self._db, statement, params)
            reading = statement.lstrip()[:6].upper() == "SELECT"
            if not reading:
                self._ping()  # a write never goes out on a connection already lost
            db = self._live()
            try:
                return self._run(db, statement, params)
            except self._psycopg.OperationalError as exc:
                if not reading or not self._lost(db):
                    raise self._unavailable(exc) from exc
                log.warning("store: the PostgreSQL connection was lost (%s); reconnecting", exc)
            return self._guarded(self._live(), statement, params)

    def _run(self, db: Any, statement: str, params: Sequence[Any]) -> list[tuple]:
        cursor = db.execute(self._sql(statement), tuple(params))
        return list(cursor.fetchall()) if cursor.description else []

    def _guarded(self, db: Any, statement: str, params: Sequence[Any]) -> list[tuple]:
        """`statement` on `db`, with a lost connection reported as StoreUnavailable."""
        try:
            return self._run(db, statement, params)
        except self._psycopg.OperationalError as exc:
            raise self._unavailable(exc) from exc

    def _live(self) -> Any:
        """The PostgreSQL connection, made again when there is none or it was lost."""
        if self._db is not None and not self._lost(self._db):
            return self._db
        if self._db is not None:
            self._db.close()
            self._db = None
        try:
            self._db = self._psycopg.connect(
                self._url, autocommit=True, connect_timeout=CONNECT_TIMEOUT
            )
        except self._psycopg.OperationalError as exc:
            log.warning("store: PostgreSQL cannot be reached: %s", exc)
            raise StoreUnavailable() from exc
        return self._db

    def _ping(self) -> None:
        """A round trip on the connection, made again when it is found lost: the health check
        before a write or a transaction, so that neither starts on a dead connection."""
        db = self._live()
        try:
            db.execute("SELECT 1")
        except self._psycopg.OperationalError as exc:
            if not self._lost(db):
                raise self._unavailable(exc) from exc
            log.warning("store: the PostgreSQL connection was lost (%s); reconnecting", exc)
            self._live()

    @staticmethod
    def _lost(db: Any) -> bool:
        return bool(db.closed or db.broken)

    def _unavailable(self, exc: Exception) -> Exception:
        """StoreUnavailable where the connection is lost (the server restarting or gone), else
        `exc` itself: a statement PostgreSQL refused is a fault here, not a reason to retry."""
        if self._db is not None and self._lost(self._db):
            log.warning("store: the PostgreSQL connection was lost: %s", exc)
            return StoreUnavailable()
        return exc

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        with self._lock:
            if self.postgres:
                if not self._depth:
                    self._ping()
                self._depth += 1
                try:
                    with self._db.transaction():
                        yield
                except self._psycopg.OperationalError as exc:
                    raise self._unavailable(exc) from exc
                finally:
                    self._depth -= 1
                return
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def migrate(self) -> int:
        """Apply the migrations not yet applied; the schema version after."""
        with self._transaction():
            self._rows(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)"
            )
            done = {row[0] for row in self._rows("SELECT version FROM schema_migrations")}
            for version, script in enumerate(MIGRATIONS, start=1):
                if version in done:
                    continue
                for statement in filter(str.strip, script.split(";")):
                    self._rows(statement)
                self._rows(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                    (version, time.time()),
                )
        return len(MIGRATIONS)

    def schema_version(self) -> int:
        return int(self._rows("SELECT MAX(version) FROM schema_migrations")[0][0] or 0)

    def ping(self) -> bool:
        """Does the database answer? (/readyz)"""
        try:
            return self._rows("SELECT 1")[0][0] == 1
        except Exception:
            return False

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()

    # -- keys -----------------------------------------------------------------------------

    def add_key(self, name: str, admin: bool = False) -> tuple[Key, str]:
        """A new key named `name`: the stored record and the key itself, which is shown once
        and kept nowhere."""
        name = name.strip()
        if not name or len(name) > 100 or not name.isprintable():
            raise StoreError("a key's name is 1 to 100 printable characters")
        if self._rows("SELECT 1 FROM api_keys WHERE name = ?", (name,)):
            raise StoreError(f"a key named {name!r} exists (revoke it first, or pick a name)")
        secret = KEY_PREFIX + secrets.token_urlsafe(32)
        key = Key(_id(), name, admin, time.time(), None)
        self._rows(
            "INSERT INTO api_keys (id, name, key_hash, admin, created_at) VALUES (?, ?, ?, ?, ?)",
            (key.id, name, key_hash(secret), int(admin), key.created_at),
        )
        return key, secret

    def api_keys(self) -> list[Key]:
        rows = self._rows(
            "SELECT id, name, admin, created_at, revoked_at FROM api_keys ORDER BY created_at"
        )
        return [_key(r) for r in rows]

    def revoke_key(self, name: str) -> Key:
        found = [k for k in self.api_keys() if k.name == name and k.revoked_at is None]
        if not found:
            raise StoreError(f"no live key named {name!r}")
        self._rows("UPDATE api_keys SET revoked_at = ? WHERE id = ?", (time.time(), found[0].id))
        return found[0]

    def key_for(self, secret: str) -> Key | None:
        """The live key whose hash `secret` has, or None."""
        if not secret.startswith(KEY_PREFIX) or len(secret) > 100:
            return None
        rows = self._rows(
            "SELECT id, name, admin, created_at, revoked_at FROM api_keys "
            "WHERE key_hash = ? AND revoked_at IS NULL",
            (key_hash(secret),),
        )
        return _key(rows[0]) if rows else None

    # -- conversations and answers ---------------------------------------------------------

    def create_conversation(
        self, owner: str, title: str, limit: int | None = CONVERSATIONS_PER_KEY
    ) -> dict | None:
        """A new conversation of `owner`'s, or None when the key already keeps `limit` of them
        (each is kept until deleted, so without a bound one key could fill the database)."""
        with self._transaction():
            if limit is not None and self.conversation_count(owner) >= limit:
                return None
            return self._new_conversation(owner, title)

    def conversation_count(self, owner: str) -> int:
        return int(self._rows("SELECT COUNT(*) FROM conversations WHERE owner = ?", (owner,))[0][0])

    def _new_conversation(self, owner: str, title: str) -> dict:
        now = time.time()
        title = " ".join(title.split())[:MAX_TITLE_CHARS] or "Conversation"
        conversation = {
            "id": _id(),
            "title": title,
            "created_at": now,
            "updated_at": now,
            "turns": [],
        }
        self._rows(
            "INSERT INTO conversations (id, owner, title, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (conversation["id"], owner, title, now, now),
        )
        return conversation

    def conversations(self, owner: str, limit: int = 100, offset: int = 0) -> list[dict]:
        """A page of `owner`'s conversations, most recently used first (ties by id, so that
        pages neither repeat nor skip one)."""
        rows = self._rows(
            "SELECT c.id, c.title, c.created_at, c.updated_at, "
            "(SELECT COUNT(*) FROM answers a WHERE a.conversation_id = c.id) "
            "FROM conversations c WHERE c.owner = ? ORDER BY c.updated_at DESC, c.id "
            "LIMIT ? OFFSET ?",
            (owner, limit, offset),
        )
        return [
            {"id": r[0], "title": r[1], "created_at": r[2], "updated_at": r[3], "turns": r[4]}
            for r in rows
        ]

    def conversation(self, owner: str, conversation_id: str) -> dict | None:
        """One of `owner`'s conversations with its turns (question and answer), or None."""
        rows = self._rows(
            "SELECT id, title, created_at, updated_at FROM conversations WHERE id = ? AND owner = ?",
            (conversation_id, owner),
        )
        if not rows:
            return None
        turns = self._rows(
            "SELECT id, question, trace, created_at FROM answers "
            "WHERE conversation_id = ? AND owner = ? ORDER BY created_at",
            (conversation_id, owner),
        )
        return {
            "id": rows[0][0],
            "title": rows[0][1],
            "created_at": rows[0][2],
            "updated_at": rows[0][3],
            "turns": [_turn(t[0], conversation_id, t[1], t[2], t[3]) for t in turns],
        }

    def owns(self, owner: str, conversation_id: str) -> bool:
        """Is `conversation_id` one of `owner`'s conversations?"""
        return bool(
            self._rows(
                "SELECT 1 FROM conversations WHERE id = ? AND owner = ?", (conversation_id, owner)
            )
        )

    def delete_conversation(self, owner: str, conversation_id: str) -> bool:
        """Delete a conversation with its turns and the feedback on them (which copies each
        turn's question and answer: deleting the turns alone left those behind)."""
        with self._transaction():
            if not self.owns(owner, conversation_id):
                return False
            self._rows(
                "DELETE FROM feedback WHERE owner = ? AND answer_id IN "
                "(SELECT id FROM answers WHERE conversation_id = ?)",
                (owner, conversation_id),
            )
            self._rows("DELETE FROM answers WHERE conversation_id = ?", (conversation_id,))
            self._rows("DELETE FROM conversations WHERE id = ?", (conversation_id,))
        return True

    def turns(self, owner: str, conversation_id: str) -> list[dict]:
        """A conversation's earlier turns as `ask` reads them (question, answer, mode)."""
        rows = self._rows(
            "SELECT question, answer, mode FROM answers WHERE conversation_id = ? AND owner = ? "
            "ORDER BY created_at",
            (conversation_id, owner),
        )
        return [{"question": r[0], "answer": r[1], "mode": r[2]} for r in rows]

    def delete_answer(self, owner: str, answer_id: str) -> bool:
        """Delete one of `owner`'s answers (an ask in a conversation or outside one) and the
        feedback on it; False when `owner` has no such answer."""
        with self._transaction():
            params = (answer_id, owner)
            if not self._rows("SELECT 1 FROM answers WHERE id = ? AND owner = ?", params):
                return False
            self._rows("DELETE FROM feedback WHERE answer_id = ? AND owner = ?", params)
            self._rows("DELETE FROM answers WHERE id = ? AND owner = ?", params)
        return True

    def record_answer(self, owner: str, answer: dict, conversation_id: str | None = None) -> dict:
        """Keep an answer (the whole typed Answer: its trace) and return it as a turn, with
        the id feedback names. A conversation deleted while its ask was answered is not
        there to hold it (its key failed: a 500, the answer lost): the answer is then kept
        outside any conversation, and the turn says so (`conversation_id` None). The
        conversation's row is updated first, so that on PostgreSQL a deletion waits for
        this transaction and then takes the new turn with it."""
        answer_id = _id()
        now = time.time()
        trace = json.dumps(answer, default=str)
        with self._transaction():
            if conversation_id is not None and not self._rows(
                "UPDATE conversations SET updated_at = ? WHERE id = ? AND owner = ? RETURNING id",
                (now, conversation_id, owner),
            ):
                conversation_id = None
            self._rows(
                "INSERT INTO answers (id, owner, conversation_id, question, answer, mode, "
                "confidence, source_count, snapshot_version, trace, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    answer_id,
                    owner,
                    conversation_id,
                    answer["question"],
                    answer["answer"],
                    answer["mode"],
                    float(answer["confidence"]),
                    len(answer["sources"]),
                    answer.get("snapshot_version"),
                    trace,
                    now,
                ),
            )
        return _turn(answer_id, conversation_id, answer["question"], trace, now)

    def recent_answers(self, limit: int = 50) -> list[dict]:
        """The last answers of every owner, with their traces (the admin page)."""
        rows = self._rows(
            "SELECT id, owner, conversation_id, question, trace, created_at FROM answers "
            "ORDER BY created_at DESC LIMIT ?",
            (limit,),
        )
        return [{**_turn(r[0], r[2], r[3], r[4], r[5]), "owner": r[1]} for r in rows]

    # -- feedback -------------------------------------------------------------------------

    def add_feedback(self, owner: str, answer_id: str, rating: str, comment: str) -> dict | None:
        """Feedback on one of `owner`'s answers, stored with its question, answer, confidence
        and number of sources; None when `owner` has no such answer."""
        rows = self._rows(
            "SELECT question, answer, confidence, source_count FROM answers "
            "WHERE id = ? AND owner = ?",
            (answer_id, owner),
        )
        if not rows:
            return None
        question, answer, confidence, sources = rows[0]
        item = {
            "id": _id(),
            "answer_id": answer_id,
            "rating": rating,
            "comment": comment[:MAX_COMMENT_CHARS],
            "question": question,
            "answer": answer,
            "confidence": confidence,
            "source_count": sources,
            "created_at": time.time(),
        }
        self._rows(
            "INSERT INTO feedback (id, owner, answer_id, rating, comment, question, answer, "
            "confidence, source_count, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (item["id"], owner, *list(item.values())[1:]),
        )
        return item

    def feedback(self, owner: str | None = None, limit: int = 100) -> list[dict]:
        """Feedback, newest first: `owner`'s, or everyone's (None: the admin page)."""
        where, params = ("WHERE owner = ?", (owner,)) if owner is not None else ("", ())
        rows = self._rows(
            "SELECT id, owner, answer_id, rating, comment, question, answer, confidence, "
            f"source_count, created_at FROM feedback {where} ORDER BY created_at DESC LIMIT ?",
            (*params, limit),
        )
        names = (
            "id owner answer_id rating comment question answer confidence source_count created_at"
        )
        return [dict(zip(names.split(), r, strict=True)) for r in rows]
