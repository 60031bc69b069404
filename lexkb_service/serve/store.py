"""The store for what users write: API keys, conversations, answers (with their traces) and
feedback, in SQLite or PostgreSQL (lexkb_service.serve.database: the connection, its recovery and
the migrations).

Every read and write of a user's rows names its owner (the key's id): a conversation, answer or
feedback of another key is not found, never shown. Each statement runs under one lock on one
connection: the store is written a few times per ask, so that is not the bottleneck (the ask
itself is). Listings go a page at a time by keyset (`After`: the sort time and id of the last
row seen), so a page neither repeats nor skips a row when rows are added meanwhile.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from lexkb_service.serve.database import (
    MIGRATIONS,
    Database,
    Row,
    StoreError,
    StoreUnavailable,
    is_url,
    sqlite_path,
)

__all__ = [
    "MIGRATIONS", "Database", "Key", "Store", "StoreError", "StoreUnavailable", "is_url",
    "sqlite_path",
]  # fmt: skip
KEY_PREFIX = "lk_"
# The owner of everything written in single-user mode (loopback, no keys).
LOCAL_OWNER = "local"
MAX_TITLE_CHARS = 200
# Conversations one key may keep (lexkb serve --conversations-per-key).
CONVERSATIONS_PER_KEY = 1000
MAX_COMMENT_CHARS = 2000


@dataclass(frozen=True)
class Key:
    """An API key as stored: its hash, never the key."""

    id: str
    name: str
    admin: bool
    created_at: float
    revoked_at: float | None


class Candidate(TypedDict):
    """A hit an ask retrieved, as its trace keeps it (lexkb.results.Hit's fields)."""

    chunk_id: str
    citation: str
    score: float | None
    relevance: float | None
    answers: float | None


@dataclass(frozen=True)
class Trace:
    """How an ask was answered, for the admin: the text searched (a follow-up's includes the
    question before it), the candidates retrieved with their scores (none when the answer came
    from the cache or was refused before any search), and the seconds it took."""

    searched: str | None = None
    candidates: list[Candidate] = field(default_factory=list)
    seconds: float | None = None


# The rows the store hands the API, times in seconds since the epoch (the API's replies give
# them as ISO 8601: lexkb_service.serve.paging.with_iso; lexkb_service.client types those).


class Conversation(TypedDict):
    """A conversation as its listing shows it: without its turns, with their number."""

    id: str
    title: str
    created_at: float
    updated_at: float
    turn_count: int


class Turn(TypedDict):
    """A kept answer: an ask in a conversation (`conversation_id`) or outside one (None)."""

    answer_id: str
    conversation_id: str | None
    question: str
    answer: dict[str, Any]  # the whole Answer, as Answer.to_dict gives it (docs/schemas/ask.json)
    at: float


class TracedTurn(Turn):
    """A turn as the admin reads it: who asked (key id and name), and its Trace."""

    owner: str
    owner_name: str
    searched: str | None
    candidates: list[Candidate]
    seconds: float | None


class EarlierTurn(TypedDict):
    """A conversation's turn as `ask` reads it to follow up on it."""

    question: str
    answer: str
    mode: str


class Feedback(TypedDict):
    """Feedback on an answer, with copies of the answer's question, text, confidence and
    number of sources (kept when the answer is deleted alone)."""

    id: str
    answer_id: str
    rating: str
    comment: str
    question: str
    answer: str
    confidence: float
    source_count: int
    created_at: float
    updated_at: float
    owner: NotRequired[str]  # the admin's listing only: whose it is, key id and name
    owner_name: NotRequired[str]


@dataclass(frozen=True)
class After:
    """Where a page of a listing starts: after the row with this sort time and id."""

    at: float
    id: str


def key_hash(secret: str) -> str:
    """SHA-256 of a key: keys are 32 random bytes, so a plain hash cannot be reversed by
    guessing, and a lookup by hash compares no secret in Python."""
    return hashlib.sha256(secret.encode()).hexdigest()


def _id() -> str:
    return secrets.token_hex(12)


def _key(row: Row) -> Key:
    """A Key from (id, name, admin, created_at, revoked_at)."""
    return Key(row[0], row[1], bool(row[2]), row[3], row[4])


def _turn(
    answer_id: str, conversation_id: str | None, question: str, trace: str, at: float
) -> Turn:
    return {
        "answer_id": answer_id,
        "conversation_id": conversation_id,
        "question": question,
        "answer": json.loads(trace),
        "at": at,
    }


class Store(Database):
    """Keys, conversations, answers and feedback; see the module's docstring."""

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
    ) -> Conversation | None:
        """A new conversation of `owner`'s, as its listing shows it (no turns yet), or None
        when the key already keeps `limit` of them (each is kept until deleted, so without a
        bound one key could fill the database)."""
        with self._transaction():
            if limit is not None and self.conversation_count(owner) >= limit:
                return None
            return self._new_conversation(owner, title)

    def conversation_count(self, owner: str) -> int:
        return int(self._rows("SELECT COUNT(*) FROM conversations WHERE owner = ?", (owner,))[0][0])

    def _new_conversation(self, owner: str, title: str) -> Conversation:
        now = time.time()
        title = " ".join(title.split())[:MAX_TITLE_CHARS] or "Conversation"
        conversation: Conversation = {
            "id": _id(),
            "title": title,
            "created_at": now,
            "updated_at": now,
            "turn_count": 0,
        }
        self._rows(
            "INSERT INTO conversations (id, owner, title, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (conversation["id"], owner, title, now, now),
        )
        return conversation

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

    def turns(self, owner: str, conversation_id: str) -> list[EarlierTurn]:
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

    def record_answer(
        self,
        owner: str,
        answer: dict[str, Any],
        conversation_id: str | None = None,
        trace: Trace | None = None,
    ) -> Turn:
        """Keep an answer (the whole typed Answer) with how it was found (`trace`), and return
        it as a turn, with the id feedback names. A conversation deleted while its ask was answered is not
        there to hold it (its key failed: a 500, the answer lost): the answer is then kept
        outside any conversation, and the turn says so (`conversation_id` None). The
        conversation's row is updated first, so that on PostgreSQL a deletion waits for
        this transaction and then takes the new turn with it."""
        answer_id = _id()
        now = time.time()
        kept = json.dumps(answer, default=str)
        trace = trace or Trace()
        with self._transaction():
            if conversation_id is not None and not self._rows(
                "UPDATE conversations SET updated_at = ? WHERE id = ? AND owner = ? RETURNING id",
                (now, conversation_id, owner),
            ):
                conversation_id = None
            self._rows(
                "INSERT INTO answers (id, owner, conversation_id, question, answer, mode, "
                "confidence, source_count, snapshot_version, trace, created_at, searched, "
                "candidates, seconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                    kept,
                    now,
                    trace.searched,
                    json.dumps(trace.candidates),
                    trace.seconds,
                ),
            )
        return _turn(answer_id, conversation_id, answer["question"], kept, now)

    # -- feedback -------------------------------------------------------------------------

    def give_feedback(
        self, owner: str, answer_id: str, rating: str, comment: str
    ) -> tuple[Feedback, bool] | None:
        """`owner`'s feedback on one of their answers, stored with its question, answer,
        confidence and number of sources: one per answer and key, so feedback given again
        changes it (`created` False); None when `owner` has no such answer."""
        comment = comment[:MAX_COMMENT_CHARS]
        with self._transaction():
            rows = self._rows(
                "SELECT question, answer, confidence, source_count FROM answers "
                "WHERE id = ? AND owner = ?",
                (answer_id, owner),
            )
            if not rows:
                return None
            now = time.time()
            earlier = self._rows(
                "SELECT id, created_at FROM feedback WHERE owner = ? AND answer_id = ?",
                (owner, answer_id),
            )
            if earlier:
                self._rows(
                    "UPDATE feedback SET rating = ?, comment = ?, updated_at = ? WHERE id = ?",
                    (rating, comment, now, earlier[0][0]),
                )
                feedback_id, created_at = earlier[0]
            else:
                feedback_id, created_at = _id(), now
                self._rows(
                    "INSERT INTO feedback (id, owner, answer_id, rating, comment, question, "
                    "answer, confidence, source_count, created_at, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (feedback_id, owner, answer_id, rating, comment, *rows[0], now, now),
                )
        question, answer, confidence, sources = rows[0]
        item: Feedback = {
            "id": feedback_id, "answer_id": answer_id, "rating": rating, "comment": comment,
            "question": question, "answer": answer, "confidence": confidence,
            "source_count": sources, "created_at": created_at, "updated_at": now,
        }  # fmt: skip
        return item, not earlier

    # -- pages (keyset: newest or oldest first, ties by id) --------------------------------

    def conversation_page(self, owner: str, limit: int, after: After | None) -> list[Conversation]:
        """`owner`'s conversations, most recently used first, each with its number of turns."""
        where, params = _after("c.updated_at", "c.id", after, newest_first=True)
        rows = self._rows(
            "SELECT c.id, c.title, c.created_at, c.updated_at, "
            "(SELECT COUNT(*) FROM answers a WHERE a.conversation_id = c.id) "
            f"FROM conversations c WHERE c.owner = ?{where} "
            "ORDER BY c.updated_at DESC, c.id LIMIT ?",
            (owner, *params, limit),
        )
        return [_conversation(r) for r in rows]

    def conversation_summary(self, owner: str, conversation_id: str) -> Conversation | None:
        """One of `owner`'s conversations as its listing shows it, or None."""
        rows = self._rows(
            "SELECT c.id, c.title, c.created_at, c.updated_at, "
            "(SELECT COUNT(*) FROM answers a WHERE a.conversation_id = c.id) "
            "FROM conversations c WHERE c.id = ? AND c.owner = ?",
            (conversation_id, owner),
        )
        return _conversation(rows[0]) if rows else None

    def turn_page(
        self, owner: str, conversation_id: str, limit: int, after: After | None
    ) -> list[Turn]:
        """A conversation's turns, oldest first."""
        where, params = _after("created_at", "id", after, newest_first=False)
        rows = self._rows(
            "SELECT id, conversation_id, question, trace, created_at FROM answers "
            f"WHERE conversation_id = ? AND owner = ?{where} ORDER BY created_at, id LIMIT ?",
            (conversation_id, owner, *params, limit),
        )
        return [_turn(*r) for r in rows]

    def answer(self, owner: str, answer_id: str) -> Turn | None:
        """One of `owner`'s answers as a turn, or None."""
        rows = self._rows(
            "SELECT id, conversation_id, question, trace, created_at FROM answers "
            "WHERE id = ? AND owner = ?",
            (answer_id, owner),
        )
        return _turn(*rows[0]) if rows else None

    def feedback_page(self, owner: str | None, limit: int, after: After | None) -> list[Feedback]:
        """Feedback most recently given or changed first: `owner`'s, or everyone's (None: the
        admin's, each naming its owner's key)."""
        where, params = _after("f.updated_at", "f.id", after, newest_first=True)
        mine, who = ("f.owner = ?", (owner,)) if owner is not None else ("1 = 1", ())
        rows = self._rows(
            f"SELECT {_FEEDBACK}, f.owner, COALESCE(k.name, f.owner) FROM feedback f "
            f"LEFT JOIN api_keys k ON k.id = f.owner WHERE {mine}{where} "
            "ORDER BY f.updated_at DESC, f.id LIMIT ?",
            (*who, *params, limit),
        )
        return [_feedback(r, with_owner=owner is None) for r in rows]

    def feedback_item(self, owner: str, feedback_id: str) -> Feedback | None:
        """One of `owner`'s feedback, or None."""
        rows = self._rows(
            f"SELECT {_FEEDBACK}, f.owner, f.owner FROM feedback f WHERE f.id = ? AND f.owner = ?",
            (feedback_id, owner),
        )
        return _feedback(rows[0], with_owner=False) if rows else None

    def trace_page(self, limit: int, after: After | None) -> list[TracedTurn]:
        """Every owner's answers, newest first, each with how it was found (Trace) and the
        name of the key that asked."""
        where, params = _after("a.created_at", "a.id", after, newest_first=True)
        rows = self._rows(
            "SELECT a.id, a.conversation_id, a.question, a.trace, a.created_at, a.owner, "
            "COALESCE(k.name, a.owner), a.searched, a.candidates, a.seconds FROM answers a "
            f"LEFT JOIN api_keys k ON k.id = a.owner WHERE 1 = 1{where} "
            "ORDER BY a.created_at DESC, a.id LIMIT ?",
            (*params, limit),
        )
        return [
            {
                **_turn(*r[:5]),
                "owner": r[5],
                "owner_name": r[6],
                "searched": r[7],
                "candidates": json.loads(r[8]) if r[8] else [],
                "seconds": r[9],
            }
            for r in rows
        ]


_FEEDBACK = (
    "f.id, f.answer_id, f.rating, f.comment, f.question, f.answer, f.confidence, "
    "f.source_count, f.created_at, f.updated_at"
)


def _feedback(row: Row, with_owner: bool) -> Feedback:
    """A feedback row of _FEEDBACK, then the owner's id and key name."""
    item: Feedback = {
        "id": row[0], "answer_id": row[1], "rating": row[2], "comment": row[3],
        "question": row[4], "answer": row[5], "confidence": row[6], "source_count": row[7],
        "created_at": row[8], "updated_at": row[9],
    }  # fmt: skip
    if with_owner:
        item["owner"], item["owner_name"] = row[10], row[11]
    return item


def _conversation(row: Row) -> Conversation:
    """A row of (id, title, created_at, updated_at, number of turns)."""
    return {
        "id": row[0], "title": row[1], "created_at": row[2], "updated_at": row[3],
        "turn_count": int(row[4]),
    }  # fmt: skip


def _after(
    at: str, id_column: str, after: After | None, newest_first: bool
) -> tuple[str, tuple[float | str, ...]]:
    """The condition (and its parameters) that starts a page after the row `after` names, in
    a listing ordered by `at` (descending when `newest_first`), then by id."""
    if after is None:
        return "", ()
    sign = "<" if newest_first else ">"
    condition = f" AND ({at} {sign} ? OR ({at} = ? AND {id_column} > ?))"
    return condition, (after.at, after.at, after.id)
