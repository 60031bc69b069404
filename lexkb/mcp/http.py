"""MCP over streamable HTTP, with every resource a client can hold bounded.

The SDK's runner starts uvicorn with no read timeout, a 4 MiB body limit and up to 10,000
sessions that live 30 minutes idle: 600 connections that never finish their headers were held
as long as they liked, 40 stalled 4 MB bodies held 160 MB, and abandoned sessions piled up.
Here the same Starlette app (the SDK's session manager and transport) runs under lexkb's
settings, each of which an operator can change through the environment:

- LEXKB_MCP_READ_TIMEOUT (seconds, default 10): a request's headers and body must all arrive
  within this long of its first byte (or of the connection opening); else the connection is
  closed. A response may take as long as its tool does.
- LEXKB_MCP_MAX_BODY_BYTES (default 1 MiB): a larger body is refused with 413, before it is
  read when Content-Length says so.
- LEXKB_MCP_MAX_SESSIONS (default 100): one more `initialize` gets 503 until one ends.
- LEXKB_MCP_SESSION_IDLE (seconds, default 600): a session with no request for this long is
  closed; its id then answers 404 and the client starts a new one.
- LEXKB_MCP_MAX_CONNECTIONS (default 200): past this many open connections, requests get 503.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from lexkb.mcp import env
from lexkb.mcp.access import Access, BearerGate

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from starlette.types import ASGIApp

PATH = "/mcp"
READ_TIMEOUT_ENV = "LEXKB_MCP_READ_TIMEOUT"
MAX_BODY_ENV = "LEXKB_MCP_MAX_BODY_BYTES"
MAX_SESSIONS_ENV = "LEXKB_MCP_MAX_SESSIONS"
SESSION_IDLE_ENV = "LEXKB_MCP_SESSION_IDLE"
MAX_CONNECTIONS_ENV = "LEXKB_MCP_MAX_CONNECTIONS"
# On SIGTERM, how long requests in flight may finish before they are cancelled.
SHUTDOWN_GRACE_SECONDS = 5


@dataclass(frozen=True)
class HttpSettings:
    """The HTTP transport's bounds (see the module's docstring for each)."""

    read_timeout: float = 10.0
    max_body_bytes: int = 1 << 20
    max_sessions: int = 100
    session_idle: float = 600.0
    max_connections: int = 200

    @classmethod
    def from_env(cls) -> HttpSettings:
        default = cls()
        return cls(
            read_timeout=env.seconds(READ_TIMEOUT_ENV, default.read_timeout),
            max_body_bytes=env.count(MAX_BODY_ENV, default.max_body_bytes),
            max_sessions=env.count(MAX_SESSIONS_ENV, default.max_sessions),
            session_idle=env.seconds(SESSION_IDLE_ENV, default.session_idle),
            max_connections=env.count(MAX_CONNECTIONS_ENV, default.max_connections),
        )


def address(http: str) -> tuple[str, int]:
    """(host, port) from "HOST:PORT" ("[::1]:8765" for IPv6); ValueError otherwise."""
    host, _, port = http.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--http takes HOST:PORT, such as 127.0.0.1:8765, not {http!r}")
    return host, int(port)


class ReadDeadlineProtocol(HttpToolsProtocol):
    """uvicorn's HTTP/1.1 protocol with a deadline on reading each request: from the
    connection's opening or a request's first byte until its last, at most `read_timeout`
    seconds, then the connection is closed (uvicorn itself waits forever for headers, and for
    a body as long as the app does)."""

    read_timeout: ClassVar[float] = HttpSettings.read_timeout
    _deadline: asyncio.TimerHandle | None = None

    def _arm(self) -> None:
        if self._deadline is None:
            self._deadline = self.loop.call_later(self.read_timeout, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm()

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def app_for(server: MCPServer, host: str, access: Access, settings: HttpSettings) -> ASGIApp:
    """The SDK's streamable HTTP app under lexkb's bounds, behind the bearer check when a
    token is set."""
    app = server.streamable_http_app(
        streamable_http_path=PATH,
        max_request_body_size=settings.max_body_bytes,
        session_idle_timeout=settings.session_idle,
        max_sessions=settings.max_sessions,
        transport_security=access.security(),
        host=host,
    )
    return app if access.token is None else BearerGate(app, access.token)


def serve_http(
    server: MCPServer, host: str, port: int, access: Access, settings: HttpSettings
) -> None:
    """Serve `server` at http://host:port/mcp until stopped."""
    run_bounded(app_for(server, host, access, settings), host, port, settings)


def run_bounded(app: ASGIApp, host: str, port: int, settings: HttpSettings) -> None:
    """Run `app` under uvicorn with `settings`' bounds (read deadline, connections) until
    stopped; `lexkb serve` runs its app this way too."""
    import uvicorn

    protocol = type(
        "ReadDeadlineProtocol", (ReadDeadlineProtocol,), {"read_timeout": settings.read_timeout}
    )
    config = uvicorn.Config(
        app,
        host=host.strip("[]"),
        port=port,
        http=protocol,
        ws="none",
        lifespan="on",
        limit_concurrency=settings.max_connections,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
        log_level="warning",
    )
    uvicorn.Server(config).run()
