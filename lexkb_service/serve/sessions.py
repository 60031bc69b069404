"""How many MCP sessions one key may hold open under lexkb serve.

The MCP transport bounds sessions for the whole server (LEXKB_MCP_MAX_SESSIONS; its default is
HttpSettings.max_sessions in lexkb_service.mcp.http), not per caller: one key that opened that
many sessions and kept them alive left every other key's `initialize` refused with 503 until
its sessions went idle. `KeySessions` stands between the
Gate (which names the key of each request) and the MCP app, and counts each key's sessions: an
`initialize` (a POST without a session id) past `per_key` gets 429 with Retry-After, as a
JSON-RPC error. A session is counted from its opening until the client ends it (DELETE), the
server forgets it (its id then answers 404), or it has been idle for `idle` seconds with no
request in flight, which is when the transport ends it too. A session is also kept to the key
that opened it: another key's request naming its id is answered as if it did not exist.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lexkb_service.mcp.access import send_json

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

SESSIONS_PER_KEY = 10
SESSION_HEADER = b"mcp-session-id"
RETRY_SECONDS = 30


@dataclass
class _Session:
    owner: str
    last_seen: float
    in_flight: int = 0


class KeySessions:
    """ASGI middleware for the MCP app: at most `per_key` sessions for each key."""

    def __init__(self, app: ASGIApp, per_key: int, idle: float) -> None:
        self.app = app
        self.per_key = per_key
        self.idle = idle
        self.refused = 0
        self._sessions: dict[str, _Session] = {}
        self._opening: dict[str, int] = {}
        self._lock = threading.Lock()

    def held(self, owner: str) -> int:
        """The sessions `owner` holds now, those being opened included."""
        with self._lock:
            return self._held(owner, time.monotonic())

    def _held(self, owner: str, now: float) -> int:
        for sid, session in list(self._sessions.items()):
            if not session.in_flight and now - session.last_seen > self.idle:
                del self._sessions[sid]
        mine = sum(1 for s in self._sessions.values() if s.owner == owner)
        return mine + self._opening.get(owner, 0)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        owner = scope.get("state", {}).get("owner") if scope["type"] == "http" else None
        if owner is None:  # the Gate names a key for every /mcp request; lifespan passes
            await self.app(scope, receive, send)
            return
        sent = dict(scope["headers"]).get(SESSION_HEADER)
        if sent is None:
            if scope["method"] == "POST":
                await self._open(owner, scope, receive, send)
            else:
                await self.app(scope, receive, send)
            return
        sid = sent.decode("latin-1")
        with self._lock:
            session = self._sessions.get(sid)
            if session is not None and session.owner == owner:
                session.in_flight += 1
        if session is not None and session.owner != owner:
            await _error(send, 404, "Session not found")
            return
        status = 0

        async def watching(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, watching)
        finally:
            with self._lock:
                if session is not None:
                    session.in_flight -= 1
                    session.last_seen = time.monotonic()
                ended = status == 404 or (scope["method"] == "DELETE" and 200 <= status < 300)
                if ended:
                    self._sessions.pop(sid, None)

    async def _open(self, owner: str, scope: Scope, receive: Receive, send: Send) -> None:
        """A request that may open a session: refused past the key's sessions; else passed on,
        and the session its reply names is counted for the key."""
        with self._lock:
            if self._held(owner, time.monotonic()) >= self.per_key:
                self.refused += 1
                refused = True
            else:
                self._opening[owner] = self._opening.get(owner, 0) + 1
                refused = False
        if refused:
            await _error(
                send, 429,
                f"this key has {self.per_key} MCP sessions open, as many as a key may: end one "
                "(DELETE /mcp with its Mcp-Session-Id) or let it go idle",
                {"retry-after": str(RETRY_SECONDS)},
            )  # fmt: skip
            return
        opened: _Session | None = None

        async def watching(message: Message) -> None:
            """Count the session from the reply's start, which names it: the client may use it
            before this reply (a stream) has ended."""
            nonlocal opened
            if message["type"] == "http.response.start" and 200 <= message["status"] < 300:
                sid = dict(message.get("headers", [])).get(SESSION_HEADER)
                if sid is not None:
                    with self._lock:
                        self._release(owner)
                        opened = _Session(owner, time.monotonic(), in_flight=1)
                        self._sessions[sid.decode("latin-1")] = opened
            await send(message)

        try:
            await self.app(scope, receive, watching)
        finally:
            with self._lock:
                if opened is None:
                    self._release(owner)
                else:
                    opened.in_flight -= 1
                    opened.last_seen = time.monotonic()

    def _release(self, owner: str) -> None:
        """One opening request of `owner`'s no longer pending (under the lock)."""
        left = self._opening[owner] - 1
        if left:
            self._opening[owner] = left
        else:
            del self._opening[owner]


async def _error(
    send: Send, status: int, message: str, headers: dict[str, str] | None = None
) -> None:
    """A JSON-RPC error without a request id, as the MCP transport answers its own refusals."""
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    await send_json(send, status, error, headers, secure=False)
