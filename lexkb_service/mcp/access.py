"""Who may reach lexkb over HTTP, written once for `lexkb serve` and `lexkb mcp --http`: what a
route needs (`Access`), which Host and Origin values are served (`Policy`), and the ASGI `Gate`
that decides both, with the caller's credential and the body's size, before any route runs.

- Access: each route declares one. OPEN needs nothing; KEY needs a caller (a key, the
  standalone server's token, or the keyless local user where that is allowed); ADMIN needs an
  admin caller. lexkb serve declares it on its routers and routes
  (lexkb_service.serve.access_rules), lexkb mcp --http on its one path (lexkb_service.mcp.http);
  a path no route matches needs a key, so only a caller learns what is not there.
- Host: on a loopback address, loopback names (a web page elsewhere cannot reach the server
  through a name that resolves to 127.0.0.1) and those named by --allow-host; on any other
  address, only those named, and the server refuses to start without them. Wrong Host: 421
  (two Host headers: 400, since Starlette and the MCP SDK would each read another one).
- Origin: lexkb serve accepts its own page's (http://NAME:PORT on its loopback port) and those
  named by --allow-origin; lexkb mcp --http, which has no page, only those named (an MCP
  client sends no Origin; a page another local program serves on another port is no caller
  of it). Off loopback, only those named, which are then required. Wrong Origin: 403.
- Callers: `Authorization: Bearer SECRET`, which the server identifies (lexkb serve: an API key
  looked up by hash in its store; lexkb mcp --http: LEXKB_MCP_TOKEN, compared in constant
  time). A secret that is wrong (or revoked) is refused (401), never read as no key. Without
  one, where keys are not required (a loopback address, no --require-keys, no public
  --allow-host; for lexkb mcp --http, no LEXKB_MCP_TOKEN), the request is the local user,
  unless it carries a proxy's forwarding header (Forwarded, X-Forwarded-*, X-Real-IP, Via): it
  came from elsewhere, through a proxy that may forward `Host: 127.0.0.1`, and gets 401.
- Bodies: past `max_body_bytes` a request gets 413, before its body is read when
  Content-Length says so and as soon as it passes the bound otherwise.

A refusal is JSON `{"error": reason}`, and every reply carries nosniff, no-referrer and DENY
framing. The caller found is left in the request's ASGI state (`owner`, `key_name`, `admin`),
where routes, MCP's tools and their allowances read who is calling.
"""

from __future__ import annotations

import ipaddress
import json
import re
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from lexkb.core import environment

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

MIN_TOKEN_CHARS = 32
# What the SDK allows when it binds a loopback address itself (mcp.server.lowlevel.server).
LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
_HOST = re.compile(r"^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(?:\d{1,5}|\*))?$")
# Headers a reverse proxy adds: a request carrying one did not start on this machine.
FORWARDING_HEADERS = ("forwarded", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto",
                      "x-real-ip", "via")  # fmt: skip
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="lexkb"'}
# On every reply: no content sniffing, no referrer sent on, never framed by another site.
ALWAYS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]


class Access(StrEnum):
    """What a route needs of its caller: nothing, a key, or an admin key."""

    OPEN = "open"
    KEY = "key"
    ADMIN = "admin"

    def refusal(self, state: Mapping[str, Any], credential: str = "API key") -> Refusal | None:
        """Why a request whose ASGI state is `state` (the caller the Gate found: `owner`,
        `admin`) may not use a route that needs this; None when it may."""
        if self is Access.OPEN:
            return None
        if not state.get("owner"):
            return Refusal(401, f"this needs Authorization: Bearer <{credential}>", CHALLENGE)
        if self is Access.ADMIN and not state.get("admin"):
            return Refusal(403, "this needs an admin key (lexkb serve keys add NAME --admin)")
        return None

    @staticmethod
    def strictest(declared: Iterable[Access]) -> Access:
        """The one a route needs when it declares several (its router's and its own): every
        dependency runs, so each must hold."""
        order = (Access.OPEN, Access.KEY, Access.ADMIN)
        return max(declared, key=order.index)


class Refusal(Exception):
    """A request refused before any route runs: its status, reason and extra headers."""

    def __init__(self, status: int, reason: str, headers: Mapping[str, str] | None = None):
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.headers = dict(headers or {})


@dataclass(frozen=True)
class Caller:
    """Who a request is: the owner its work and allowances count against, a name, and whether
    it may use ADMIN routes."""

    owner: str
    name: str
    admin: bool = False


def is_loopback(host: str) -> bool:
    """Is `host` (a name or an address, IPv6 with or without brackets) the loopback
    interface? Names other than localhost are not resolved: they count as not loopback."""
    name = host.strip("[]")
    if name.casefold() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_patterns(value: str) -> list[str]:
    """The Host patterns of an --allow-host value: "name:port" as it is, and a bare "name" for
    any port (a Host header carries the port unless it is the scheme's default)."""
    if not _HOST.match(value):
        raise ValueError(
            f"--allow-host takes a host name or address with an optional :port, not {value!r}"
        )
    has_port = value.rsplit("]", 1)[-1].count(":") == 1
    return [value] if has_port else [value, f"{value}:*"]


def origin_pattern(value: str) -> str:
    """An --allow-origin value checked: scheme://host[:port or :*], as browsers send Origin."""
    parts = urlsplit(value.removesuffix(":*"))
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
        raise ValueError(
            f"--allow-origin takes scheme://host[:port], such as https://app.example.com, "
            f"not {value!r}"
        )
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"--allow-origin takes scheme://host[:port] alone, not {value!r}")
    return value.rstrip("/")


def named(allow_hosts: Sequence[str], allow_origins: Sequence[str]) -> tuple[list[str], list[str]]:
    """The Host and Origin patterns of the operator's --allow-host and --allow-origin values,
    each checked (ValueError when malformed)."""
    hosts = [pattern for value in allow_hosts for pattern in host_patterns(value)]
    return hosts, [origin_pattern(value) for value in allow_origins]


def bracketed(host: str) -> str:
    """An address as a Host header or URL writes it ("::1" -> "[::1]")."""
    return host if host.startswith("[") or ":" not in host else f"[{host}]"


def loopback_hosts(host: str, hosts: Sequence[str]) -> tuple[str, ...]:
    """The Host patterns of a server bound to the loopback address `host`: the loopback
    names, the address itself, then those the operator named."""
    return tuple(dict.fromkeys([*LOOPBACK_HOSTS, f"{bracketed(host)}:*", *hosts]))


def host_name(value: str) -> str:
    """The name or address of an --allow-host value, without its port ("[::1]:8000" ->
    "[::1]", "lexkb.example:443" -> "lexkb.example")."""
    if value.startswith("["):
        return value[: value.index("]") + 1] if "]" in value else value
    return value.rpartition(":")[0] if value.count(":") == 1 else value


def own_origins(host: str, port: int) -> list[str]:
    """The origins of a page served on loopback at `port`: http://NAME:PORT for each loopback
    name it answers to (a browser leaves the port out when it is 80)."""
    names = dict.fromkeys(["127.0.0.1", "localhost", "[::1]", bracketed(host)])
    origins = [f"http://{name}:{port}" for name in names]
    return origins + [f"http://{name}" for name in names] if port == 80 else origins


def matches(value: str, patterns: Sequence[str]) -> bool:
    """Does a Host or Origin value match one of `patterns` ("name:port", or "name:*" for any
    port or none)?"""
    for pattern in patterns:
        if pattern.endswith(":*"):
            stem = pattern[:-2]
            if value == stem or (value.startswith(stem + ":") and value[len(stem) + 1 :].isdigit()):
                return True
        elif value == pattern:
            return True
    return False


@dataclass(frozen=True)
class Policy:
    """The Host and Origin patterns a server answers; whether every request needs a
    credential, and why when the operator did not ask for it (`keys_reason`, said at start);
    the standalone MCP server's one token (None: lexkb serve's keys, or no token); what a
    credential is called in refusals, and what a proxied keyless request should do instead."""

    hosts: tuple[str, ...]
    origins: tuple[str, ...]
    require_keys: bool
    keys_reason: str = ""
    token: str | None = field(default=None, repr=False)
    credential: str = "API key"
    proxy_advice: str = "run lexkb serve behind a proxy with --require-keys"

    def security(self) -> TransportSecuritySettings:
        """The same Host and Origin patterns as the SDK's own check, which the MCP transport
        makes again behind the Gate."""
        from mcp.server.transport_security import TransportSecuritySettings

        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=list(self.hosts),
            allowed_origins=list(self.origins),
        )


def access_for(
    host: str,
    allow_hosts: Sequence[str] = (),
    allow_origins: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
) -> Policy:
    """The policy of `lexkb mcp --http` bound to `host`: its token (LEXKB_MCP_TOKEN) is the one
    key, required when set; ValueError, saying what is missing, for a non-loopback host
    without allowed hosts, allowed origins and a token."""
    hosts, origins = named(allow_hosts, allow_origins)
    token = environment.mcp_token(environ)
    if token is not None and (len(token) < MIN_TOKEN_CHARS or token != token.strip()):
        raise ValueError(
            f"{environment.MCP_TOKEN} must hold at least {MIN_TOKEN_CHARS} characters without "
            "surrounding spaces (for example from `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
        )
    credential = "token"
    proxy_advice = f"set {environment.MCP_TOKEN} on the server and send it"
    if is_loopback(host):
        # No page of its own: no browser origin but those named, not even loopback's.
        return Policy(
            loopback_hosts(host, hosts),
            tuple(origins),
            token is not None,
            "",
            token,
            credential,
            proxy_advice,
        )
    missing = [
        name
        for name, given in (
            ("--allow-host", hosts),
            ("--allow-origin", origins),
            (environment.MCP_TOKEN, token),
        )
        if not given
    ]
    if missing:
        raise ValueError(
            f"{host} is not a loopback address, so lexkb serves it only to the Host values "
            "named by --allow-host, the browser origins named by --allow-origin and clients "
            f"that send the bearer token in {environment.MCP_TOKEN}; missing: {', '.join(missing)}"
        )
    return Policy(tuple(hosts), tuple(origins), True, "", token, credential, proxy_advice)


class Routes(Protocol):
    """What the Gate asks of a server's routes: for a request, the label its metrics are
    counted under and the access its route declares (a path no route matches needs a key)."""

    def find(self, scope: Scope) -> tuple[str, Access]: ...


class Paths:
    """Routes that are whole paths, each with its access (the standalone MCP server's one)."""

    def __init__(self, declared: Mapping[str, Access], unknown: str = "unknown") -> None:
        self.declared = dict(declared)
        self.unknown = unknown

    def find(self, scope: Scope) -> tuple[str, Access]:
        path = scope["path"]
        if path in self.declared:
            return path, self.declared[path]
        return self.unknown, Access.KEY


# The caller a secret names (None: no such caller), and the caller of a request without one.
Identify = Callable[[str], Awaitable[Caller | None]]
Keyless = Callable[["Scope"], Caller]
Observe = Callable[[str, int, float], None]


class Gate:
    """ASGI middleware: Host, Origin, body size and the caller, checked against the access the
    request's route declares (`routes`), before the app reads anything. `identify` names the
    caller of a secret (None: the server has no credentials, and every request is keyless);
    `keyless` the caller of a request without one where the policy allows that; `observe` is
    told each request's route label, status and seconds (a refused one too)."""

    def __init__(
        self,
        app: ASGIApp,
        policy: Policy,
        routes: Routes,
        max_body_bytes: int,
        identify: Identify | None,
        keyless: Keyless,
        observe: Observe | None = None,
    ) -> None:
        self.app = app
        self.policy = policy
        self.routes = routes
        self.max_body_bytes = max_body_bytes
        self.identify = identify
        self.keyless = keyless
        self.observe = observe

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        label, access = self.routes.find(scope)
        status = 500
        seen = 0
        too_large = False

        async def bounded() -> Message:
            """`receive`, until a body (one sent without Content-Length) passes the bound:
            then the app is told the client left, and 413 is answered in its place."""
            nonlocal seen, too_large
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body_bytes:
                    too_large = True
                    return {"type": "http.disconnect"}
            return message

        async def sending(message: Message) -> None:
            nonlocal status
            if too_large:
                return
            if message["type"] == "http.response.start":
                status = message["status"]
                message = {**message, "headers": [*message.get("headers", []), *ALWAYS]}
            await send(message)

        try:
            try:
                await self._admit(scope, access)
            except Refusal as refused:
                # Not secure: `sending` adds the security headers, once, as to every reply.
                reply = {"error": refused.reason}
                await send_json(sending, refused.status, reply, refused.headers, secure=False)
                return
            try:
                await self.app(scope, bounded, sending)
            except Exception:
                if not too_large:
                    raise
            if too_large:
                status = 413
                reason = f"the body is over {self.max_body_bytes} bytes"
                await send_json(send, 413, {"error": reason})
        finally:
            if self.observe is not None:
                self.observe(label, status, time.perf_counter() - started)

    async def _admit(self, scope: Scope, access: Access) -> None:
        """Refusal when the request may not reach its route; else its caller in its state."""
        if sum(name == b"host" for name, _ in scope["headers"]) > 1:
            raise Refusal(400, "a request carries one Host header")
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        if not matches(headers.get("host", ""), self.policy.hosts):
            raise Refusal(421, "this Host is not served here")
        origin = headers.get("origin")
        if origin is not None and not matches(origin, self.policy.origins):
            raise Refusal(403, "requests from this browser origin are not allowed")
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > self.max_body_bytes:
            raise Refusal(413, f"the body is over {self.max_body_bytes} bytes")
        state = scope.setdefault("state", {})
        if access is Access.OPEN:
            return
        caller = await self._caller(scope, headers)
        if caller is not None:
            state.update(owner=caller.owner, key_name=caller.name, admin=caller.admin)
        refused = access.refusal(state, self.policy.credential)
        if refused is not None:
            raise refused

    async def _caller(self, scope: Scope, headers: Mapping[str, str]) -> Caller | None:
        """The caller a request's credential names (401 when it names none), the keyless
        local user where the policy allows one, else None."""
        scheme, _, secret = headers.get("authorization", "").partition(" ")
        if scheme and self.identify is not None:
            caller = None
            if scheme.casefold() == "bearer":
                caller = await self.identify(secret.strip())
            if caller is None:
                reason = f"this {self.policy.credential} is not valid (or was revoked)"
                raise Refusal(401, reason, CHALLENGE)
            return caller
        if self.policy.require_keys:
            return None
        if any(name in headers for name in FORWARDING_HEADERS):
            raise Refusal(
                401,
                "this request came through a proxy (it carries a forwarding header), and only "
                "a request made on this machine may go without a key: send Authorization: "
                f"Bearer <{self.policy.credential}>, and {self.policy.proxy_advice}",
                CHALLENGE,
            )
        return self.keyless(scope)


async def send_json(
    send: Send,
    status: int,
    payload: object,
    headers: Mapping[str, str] | None = None,
    secure: bool = True,
) -> None:
    """A JSON reply straight on the ASGI channel: the gate's refusals and the MCP session
    bounds (lexkb_service.serve.sessions) answer before any route. `secure` adds the headers
    every refusal of the gate's carries (a reply that passes through the gate gets them there)."""
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(ALWAYS if secure else ()),
                *((k.lower().encode(), v.encode()) for k, v in (headers or {}).items()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
