"""MCP over streamable HTTP, with every resource a client can hold bounded.

The SDK's runner starts uvicorn with no read timeout, a 4 MiB body limit and up to 10,000
sessions that live 30 minutes idle: 600 connections that never finish their headers were held
as long as they liked, 40 stalled 4 MB bodies held 160 MB, and abandoned sessions piled up.
Here the same Starlette app (the SDK's session manager and transport) runs under lexkb's
settings, each of which an operator can change through the environment (the defaults are
HttpSettings's fields, stated there once):

- LEXKB_MCP_READ_TIMEOUT (seconds): a request's headers and body must all arrive
  within this long of its first byte (or of the connection opening); else the connection is
  closed. A response may take as long as its tool does.
- LEXKB_MCP_MAX_BODY_BYTES: a larger body is refused with 413, before it is
  read when Content-Length says so.
- LEXKB_MCP_MAX_SESSIONS: one more `initialize` gets 503 until one ends.
- LEXKB_MCP_SESSION_IDLE (seconds): a session with no request for this long is
  closed; its id then answers 404 and the client starts a new one.
- LEXKB_MCP_MAX_CONNECTIONS: past this many open connections, requests get 503.
- LEXKB_MCP_MAX_CLIENT_CONNECTIONS: past this many open
  connections from one client address, that address's next connection is answered 503 and
  closed at once, while other addresses are served. Without it 200 connections from one
  client that never finished a request took every slot, and everyone got 503 for up to the
  read timeout, as often as the client liked. Behind a reverse proxy every request comes
  from the proxy's address: raise this to LEXKB_MCP_MAX_CONNECTIONS there.
- LEXKB_MCP_MAX_HEADER_BYTES: a request whose request line and headers
  together pass this many bytes gets 431 and its connection is closed, before more is read into
  memory. uvicorn's httptools parser has no such bound: it kept a 64 MB header (4.5 s of
  copying, during which the event loop answered nobody, not even /healthz) before any check
  of the app's could refuse the request, and 200 such connections could hold about 10 GB.

What a connection holds while its head arrives is then at most this bound plus one read from
the socket (256 KiB): the bytes after a request that ends in the middle of a read are parsed
before they can be counted.

In front of the SDK's app stands the Gate that lexkb serve stands behind too
(lexkb_service.mcp.access): Host, Origin, the body's size and the caller, against the access
PATH declares (a KEY: the token in LEXKB_MCP_TOKEN, or the keyless local user on loopback when
there is none).
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from lexkb.core import environment as env
from lexkb_service.mcp.access import Access, Caller, Gate, Paths, Policy

if TYPE_CHECKING:
    import socket

    from mcp.server.mcpserver import MCPServer
    from starlette.types import ASGIApp, Scope

PATH = "/mcp"
# What MCP at PATH needs, under lexkb serve (an API key, or the keyless local user) and under
# lexkb mcp --http (its token, or the keyless local user when it has none) alike.
ACCESS = Access.KEY
# The one caller of lexkb mcp --http with a token: whoever holds it.
TOKEN_HOLDER = Caller("token", "token")
# A request's head (request line and headers) up to this many bytes: browsers and HTTP
# clients send a few KiB, and 64 KiB is above the 8-16 KiB that nginx and Apache accept.
MAX_HEADER_BYTES = 64 * 1024
# After a 431, how long the rest of what the client sends is read and dropped before the
# connection closes: closing with unread bytes would reset it, and the client might lose the
# 431 before reading it.
REFUSED_LINGER_SECONDS = 1.0
# On the replies written here before any app runs (431, and 503 past a client's connections):
# the same security headers the Gate (lexkb_service.mcp.access) puts on every other reply.
SECURITY_HEADERS = (
    b"x-content-type-options: nosniff\r\nreferrer-policy: no-referrer\r\nx-frame-options: DENY\r\n"
)
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
    max_header_bytes: int = MAX_HEADER_BYTES
    max_client_connections: int = 50

    @classmethod
    def from_env(cls) -> HttpSettings:
        default = cls()
        return cls(
            read_timeout=env.seconds(env.MCP_READ_TIMEOUT, default.read_timeout),
            max_body_bytes=env.count(env.MCP_MAX_BODY_BYTES, default.max_body_bytes),
            max_sessions=env.count(env.MCP_MAX_SESSIONS, default.max_sessions),
            session_idle=env.seconds(env.MCP_SESSION_IDLE, default.session_idle),
            max_connections=env.count(env.MCP_MAX_CONNECTIONS, default.max_connections),
            max_header_bytes=env.count(env.MCP_MAX_HEADER_BYTES, default.max_header_bytes),
            max_client_connections=env.count(
                env.MCP_MAX_CLIENT_CONNECTIONS, default.max_client_connections
            ),
        )


def address(http: str) -> tuple[str, int]:
    """(host, port) from "HOST:PORT" ("[::1]:8765" for IPv6); ValueError otherwise."""
    host, _, port = http.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"--http takes HOST:PORT, such as 127.0.0.1:8765, not {http!r}")
    return host, int(port)


class ReadDeadlineProtocol(HttpToolsProtocol):
    """uvicorn's HTTP/1.1 protocol with two bounds on reading each request, and one on the
    connections a client address holds.

    - A deadline: from the connection's opening or a request's first byte until its last, at
      most `read_timeout` seconds, then the connection is closed (uvicorn itself waits forever
      for headers, and for a body as long as the app does).
    - A size for its head: the bytes fed to the parser from the end of one request (or the
      connection's opening) until its next request's headers are complete are counted, and
      the parser is never fed more than `max_header_bytes` of them; one more byte and the
      client gets 431 (`_refuse_head`). httptools keeps a header's name and value in memory,
      grown by copying, until the whole header has arrived, so the bound must hold before the
      bytes reach it: a check in the app or in `on_header` comes too late.
    - Connections per client address, at most `max_client_connections` open at once,
      counted in `clients` (one dict per server: run_bounded makes a subclass); one
      more gets 503 and is closed (`_refuse_client`), before anything of it is read.
    """

    read_timeout: ClassVar[float] = HttpSettings.read_timeout
    max_header_bytes: ClassVar[int] = MAX_HEADER_BYTES
    max_client_connections: ClassVar[int] = 0
    clients: ClassVar[dict[str, int]] = {}
    _peer: str | None = None
    _deadline: asyncio.TimerHandle | None = None
    _head_bytes: int = 0
    _in_head: bool = True
    _refused: bool = False

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
        if self.max_client_connections and self.client:
            peer = str(self.client[0])
            if self.clients.get(peer, 0) >= self.max_client_connections:
                self._refuse_client()
                return
            self._peer = peer
            self.clients[peer] = self.clients.get(peer, 0) + 1

    def data_received(self, data: bytes) -> None:
        """Feed the parser, in pieces while a head is being read, so that no head passes the
        bound; what arrives after a 431 is dropped."""
        if self._refused:
            return
        while data and self._in_head:
            room = self.max_header_bytes - self._head_bytes
            if room <= 0:
                self._refuse_head()
                return
            piece, data = data[:room], data[room:]
            self._head_bytes += len(piece)
            super().data_received(piece)
            if self.transport.is_closing():
                return
        if data:
            super().data_received(data)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm()

    def on_headers_complete(self) -> None:
        self._in_head = False
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._disarm()
        self._in_head, self._head_bytes = True, 0
        super().on_message_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._peer is not None:
            left = self.clients.get(self._peer, 1) - 1
            if left > 0:
                self.clients[self._peer] = left
            else:
                self.clients.pop(self._peer, None)
            self._peer = None
        super().connection_lost(exc)

    def _refuse_client(self) -> None:
        """503 to a connection past its address's bound, then closed: nothing it sends is
        parsed (the linger only keeps a close with unread bytes from resetting the reply), and
        it no longer counts against the server's own bound, so refusals cannot fill it."""
        self._refused = True
        self.connections.discard(self)
        body = json.dumps(
            {"error": f"this client has {self.max_client_connections} connections open"}
        ).encode()
        self.transport.write(
            b"HTTP/1.1 503 Service Unavailable\r\n"
            b"content-type: application/json\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\n"
            b"retry-after: 1\r\n" + SECURITY_HEADERS + b"connection: close\r\n\r\n" + body
        )
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self._disarm()
        self._deadline = self.loop.call_later(REFUSED_LINGER_SECONDS, self._expire)

    def _refuse_head(self) -> None:
        """431 with the bound, then no more reading into the parser: the connection's write
        side is shut, what the client still sends is dropped, and the connection closes
        REFUSED_LINGER_SECONDS later. A reply still being written for an earlier, pipelined
        request cannot be followed by a 431 in order, so then the connection just closes."""
        self._refused = True
        if self.cycle is not None and not self.cycle.response_complete:
            self.transport.close()
            return
        body = json.dumps(
            {"error": f"the request line and headers are over {self.max_header_bytes} bytes"}
        ).encode()
        self.transport.write(
            b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
            b"content-type: application/json\r\n"
            b"content-length: "
            + str(len(body)).encode()
            + b"\r\n"
            + SECURITY_HEADERS
            + b"connection: close\r\n\r\n"
            + body
        )
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self._disarm()
        self._deadline = self.loop.call_later(REFUSED_LINGER_SECONDS, self._expire)


def sdk_app(server: MCPServer, path: str, policy: Policy, settings: HttpSettings) -> ASGIApp:
    """The SDK's streamable HTTP app at `path` under lexkb's bounds and the policy's Host and
    Origin rules: what `lexkb mcp --http` and lexkb serve's /mcp both run. The SDK's `host` is
    not passed: it reads it only to pick Host rules of its own where it is given none."""
    return server.streamable_http_app(
        streamable_http_path=path,
        max_request_body_size=settings.max_body_bytes,
        session_idle_timeout=settings.session_idle,
        max_sessions=settings.max_sessions,
        transport_security=policy.security(),
    )


def app_for(server: MCPServer, policy: Policy, settings: HttpSettings) -> ASGIApp:
    """The SDK's streamable HTTP app under lexkb's bounds, behind the Gate that lexkb serve
    stands behind too (lexkb_service.mcp.access): Host, Origin and body size, then PATH's
    access, a KEY, that the token is (when LEXKB_MCP_TOKEN is set) or the keyless local user,
    each client address its own caller (when it is not)."""
    app = sdk_app(server, PATH, policy, settings)
    identify = None if policy.token is None else holder_of(policy.token)
    routes = Paths({PATH: ACCESS})
    return Gate(app, policy, routes, settings.max_body_bytes, identify, client_of)


def holder_of(token: str) -> Callable[[str], Awaitable[Caller | None]]:
    """The caller a secret names when it is `token` (compared in constant time), else None."""
    expected = token.encode()

    async def identify(secret: str) -> Caller | None:
        return TOKEN_HOLDER if hmac.compare_digest(secret.encode(), expected) else None

    return identify


def client_of(scope: Scope) -> Caller:
    """A keyless request's caller: the local user at its client address (each address has
    an ask allowance of its own)."""
    client = scope.get("client")
    address = str(client[0]) if client else "unknown"
    return Caller(f"local@{address}", "local", admin=True)


def serve_http(
    server: MCPServer, host: str, port: int, policy: Policy, settings: HttpSettings
) -> None:
    """Serve `server` at http://host:port/mcp until stopped."""
    run_bounded(app_for(server, policy, settings), host, port, settings)


def run_bounded(
    app: ASGIApp,
    host: str,
    port: int,
    settings: HttpSettings,
    sockets: list[socket.socket] | None = None,
) -> None:
    """Run `app` under uvicorn with `settings`' bounds (read deadline, head size,
    connections) until stopped; `lexkb serve` runs its app this way too, on the socket it
    bound before saying where it serves (`sockets`)."""
    import uvicorn

    bounds = {
        "read_timeout": settings.read_timeout,
        "max_header_bytes": settings.max_header_bytes,
        "max_client_connections": settings.max_client_connections,
        "clients": {},
    }
    protocol = type("ReadDeadlineProtocol", (ReadDeadlineProtocol,), bounds)
    config = uvicorn.Config(
        app,
        host=host.strip("[]"),
        port=port,
        http=protocol,
        ws="none",
        lifespan="on",
        limit_concurrency=settings.max_connections,
        # X-Forwarded-For and -Proto are not read into the client's address and scheme:
        # nothing here decides by address, and a client's own headers cannot then pass for a
        # proxy's (lexkb serve refuses keyless requests that carry them: lexkb_service.serve.gate).
        proxy_headers=False,
        timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
        log_level="warning",
    )
    uvicorn.Server(config).run(sockets=sockets)
