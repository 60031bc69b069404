"""Who may use the service, checked before any route runs: the Host and Origin a request
carries, the API key it presents, and how large its body may be.

- Host: on a loopback address, loopback names (a web page elsewhere cannot reach the service
  through a name that resolves to 127.0.0.1) and those named by --allow-host; on any other
  address, only those, and the service refuses to start without them (`policy_for`). Wrong
  Host: 421.
- Origin: the service's own (http://NAME:PORT for each name it answers on its loopback port)
  and those named by --allow-origin, never another port's: a page served by some other local
  program is another site. Off loopback, only those named, which are then required. Wrong
  Origin: 403.
- Keys: `Authorization: Bearer lk_...`, looked up by hash in the store. A live key is needed
  for the API, MCP and /metrics, except in single-user mode, where a request without one is
  the single local user (who is also admin). Single-user mode needs all of: a loopback
  address, no --require-keys, and no --allow-host naming a host other than a loopback one
  (naming one means clients reach the service through a proxy, under a public name; then
  every request needs a key, whatever the address). Even then, a keyless request that carries
  a proxy's forwarding header (Forwarded, X-Forwarded-*, X-Real-IP, Via) came from elsewhere
  and is refused (401): a proxy that forwards `Host: 127.0.0.1` would otherwise pass for the
  local user. A key that is wrong or revoked is refused (401), never read as no key.
- Bodies: past `max_body_bytes` a request gets 413, before its body is read when
  Content-Length says so and as soon as it passes the bound otherwise.

The page, its assets, /healthz, /readyz and the OpenAPI document need no key: they show
nothing of the index or of anyone's data.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio

from lexkb_service.mcp.access import Access, is_loopback, named, with_loopback
from lexkb_service.serve.store import LOCAL_OWNER, Store, StoreUnavailable

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from lexkb_service.serve.metrics import Metrics, RouteLabels

OPEN_PATHS = ("/", "/healthz", "/readyz", "/api/v1/openapi.json", "/favicon.ico")
OPEN_PREFIXES = ("/static/",)
ADMIN_PREFIXES = ("/api/v1/admin/", "/metrics")
# Seconds a client is asked to wait (Retry-After) when the store cannot be reached.
RETRY_AFTER = 2


# Headers a reverse proxy adds: a request carrying one did not start on this machine.
FORWARDING_HEADERS = ("forwarded", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto",
                      "x-real-ip", "via")  # fmt: skip


@dataclass(frozen=True)
class Policy:
    """The Host and Origin patterns allowed, whether every request needs a key, and why it
    does when the operator did not ask for it (`keys_reason`, said at start)."""

    hosts: tuple[str, ...]
    origins: tuple[str, ...]
    require_keys: bool
    keys_reason: str = ""

    def access(self) -> Access:
        """The same Host and Origin rules for the MCP transport's own check."""
        return Access(self.hosts, self.origins, None)


def policy_for(
    host: str,
    port: int,
    allow_hosts: Sequence[str] = (),
    allow_origins: Sequence[str] = (),
    require_keys: bool = False,
) -> Policy:
    """The policy for a service bound to `host`:`port`; ValueError, saying what is missing,
    off loopback without allowed hosts and origins."""
    hosts, origins = named(allow_hosts, allow_origins)
    if is_loopback(host):
        allowed_hosts, _ = with_loopback(host, hosts, ())
        allowed_origins = tuple(dict.fromkeys([*own_origins(host, port), *origins]))
        public = [value for value in allow_hosts if not is_loopback(host_name(value))]
        reason = ""
        if public and not require_keys:
            reason = (
                f"--allow-host {public[0]} is not a loopback name (clients come through a "
                "proxy), so every request needs an API key"
            )
        return Policy(allowed_hosts, allowed_origins, require_keys or bool(public), reason)
    missing = [n for n, v in (("--allow-host", hosts), ("--allow-origin", origins)) if not v]
    if missing:
        raise ValueError(
            f"{host} is not a loopback address, so lexkb serve answers only the Host values "
            "named by --allow-host and the browser origins named by --allow-origin, and every "
            f"request needs an API key (lexkb serve keys add NAME); missing: {', '.join(missing)}"
        )
    return Policy(tuple(hosts), tuple(origins), True)


def host_name(value: str) -> str:
    """The name or address of an --allow-host value, without its port ("[::1]:8000" ->
    "[::1]", "lexkb.example:443" -> "lexkb.example")."""
    if value.startswith("["):
        return value[: value.index("]") + 1] if "]" in value else value
    return value.rpartition(":")[0] if value.count(":") == 1 else value


def own_origins(host: str, port: int) -> list[str]:
    """The origins of the service's own page on loopback: http://NAME:PORT for each loopback
    name it answers to (a browser leaves the port out when it is 80)."""
    bound = host if host.startswith("[") or ":" not in host else f"[{host}]"
    names = dict.fromkeys(["127.0.0.1", "localhost", "[::1]", bound])
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


class Gate:
    """ASGI middleware: Host, Origin, key and body checks, and each request's metrics, counted
    under `routes`' label for its path (a refused request too: its status says it was)."""

    def __init__(
        self,
        app: ASGIApp,
        policy: Policy,
        store: Store,
        metrics: Metrics,
        max_body_bytes: int,
        routes: RouteLabels,
    ) -> None:
        self.app = app
        self.policy = policy
        self.store = store
        self.metrics = metrics
        self.max_body_bytes = max_body_bytes
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
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
                message = {**message, "headers": [*message.get("headers", []), *_ALWAYS]}
            await send(message)

        try:
            refusal = await self._refusal(scope)
            if refusal is not None:
                # Not secure: `sending` adds the security headers, once, as to every reply.
                code, reason, extra = refusal
                await send_json(sending, code, {"error": reason}, extra, secure=False)
                return
            try:
                await self.app(scope, bounded, sending)
            except Exception:
                if not too_large:
                    raise
            if too_large:
                status = 413
                await _json(send, 413, f"the body is over {self.max_body_bytes} bytes", {})
        finally:
            route = self.routes(scope["path"])
            self.metrics.request(route, status, time.perf_counter() - started)

    async def _refusal(self, scope: Scope) -> tuple[int, str, dict[str, str]] | None:
        if sum(name == b"host" for name, _ in scope["headers"]) > 1:
            return 400, "a request carries one Host header", {}
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        if not matches(headers.get("host", ""), self.policy.hosts):
            return 421, "this Host is not served here", {}
        origin = headers.get("origin")
        if origin is not None and not matches(origin, self.policy.origins):
            return 403, "requests from this browser origin are not allowed", {}
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > self.max_body_bytes:
            return 413, f"the body is over {self.max_body_bytes} bytes", {}
        path = scope["path"]
        scope.setdefault("state", {})
        if path in OPEN_PATHS or path.startswith(OPEN_PREFIXES):
            return None
        scheme, _, secret = headers.get("authorization", "").partition(" ")
        if scheme:
            key = None
            if scheme.casefold() == "bearer":
                # In a worker thread: the lookup is a query, and a database that is slow to
                # answer (PostgreSQL restarting) must not hold the event loop, which answers
                # /healthz and every other client meanwhile.
                try:
                    key = await anyio.to_thread.run_sync(self.store.key_for, secret.strip())
                except StoreUnavailable as exc:
                    return 503, str(exc), {"Retry-After": str(RETRY_AFTER)}
            if key is None:
                return 401, "this API key is not valid (or was revoked)", _CHALLENGE
            scope["state"].update(owner=key.id, key_name=key.name, admin=key.admin)
        elif self.policy.require_keys:
            return 401, "this service needs Authorization: Bearer <API key>", _CHALLENGE
        elif any(name in headers for name in FORWARDING_HEADERS):
            return 401, _PROXIED, _CHALLENGE
        else:
            scope["state"].update(owner=LOCAL_OWNER, key_name=LOCAL_OWNER, admin=True)
        if path.startswith(ADMIN_PREFIXES) and not scope["state"]["admin"]:
            return 403, "this needs an admin key (lexkb serve keys add NAME --admin)", {}
        return None


_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="lexkb"'}
_PROXIED = (
    "this request came through a proxy (it carries a forwarding header), and only a request "
    "made on this machine may go without a key: send Authorization: Bearer <API key>, and "
    "run lexkb serve behind a proxy with --require-keys"
)
# On every reply: no content sniffing, no referrer sent on, never framed by another site.
_ALWAYS = [
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]


async def send_json(
    send: Send,
    status: int,
    payload: object,
    headers: dict[str, str] | None = None,
    secure: bool = True,
) -> None:
    """A JSON reply straight on the ASGI channel: the gate's refusals and the MCP session
    bounds (lexkb_service.serve.sessions) answer before any route. `secure` adds the headers every
    refusal of the gate's carries (a reply that passes through the gate gets them there)."""
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *(_ALWAYS if secure else ()),
                *((k.lower().encode(), v.encode()) for k, v in (headers or {}).items()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _json(send: Send, status: int, reason: str, headers: dict[str, str]) -> None:
    await send_json(send, status, {"error": reason}, headers)
