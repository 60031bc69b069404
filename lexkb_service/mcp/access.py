"""Who may talk to the MCP server over HTTP: the Host and Origin it accepts, and a bearer token.

On a loopback address the SDK's DNS-rebinding protection is kept: Host must name a loopback
address (else 421) and a browser's Origin must be a loopback one (else 403), so a web page
cannot reach the server through a hostname that resolves to 127.0.0.1. Bound to any other
address (0.0.0.0, a LAN address, a hostname) that protection would be off and anyone on the
network could call every tool, so lexkb refuses to start there unless the operator names the
Host values clients send (`--allow-host`), the browser origins allowed (`--allow-origin`) and
a bearer token in the environment (LEXKB_MCP_TOKEN, never on the command line, where `ps` shows
it). Every request is then checked: Host and Origin by the SDK's transport security, and
`Authorization: Bearer` here, compared in constant time. On loopback the token is checked too
when LEXKB_MCP_TOKEN is set.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from lexkb.core import environment

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.types import ASGIApp, Receive, Scope, Send

MIN_TOKEN_CHARS = 32
# What the SDK allows when it binds a loopback address itself (mcp.server.lowlevel.server).
LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
LOOPBACK_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")
_HOST = re.compile(r"^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(?:\d{1,5}|\*))?$")


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
    """The SDK's Host patterns for an --allow-host value: "name:port" as it is, and a bare
    "name" for any port (a Host header carries the port unless it is the scheme's default)."""
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


def with_loopback(
    host: str, hosts: Sequence[str], origins: Sequence[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The Host and Origin patterns of a server bound to the loopback address `host`: the
    loopback names, the address itself, then those the operator named."""
    bound = host if host.startswith("[") or ":" not in host else f"[{host}]"
    allowed_hosts = [*LOOPBACK_HOSTS, f"{bound}:*", *hosts]
    allowed_origins = [*LOOPBACK_ORIGINS, f"http://{bound}:*", *origins]
    return tuple(dict.fromkeys(allowed_hosts)), tuple(dict.fromkeys(allowed_origins))


@dataclass(frozen=True)
class Access:
    """The Host and Origin patterns allowed, and the bearer token required (None: none)."""

    hosts: tuple[str, ...]
    origins: tuple[str, ...]
    token: str | None

    def security(self) -> TransportSecuritySettings:
        """The SDK's settings that check Host and Origin on every request."""
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
) -> Access:
    """What the server bound to `host` lets in; raises ValueError, saying what is missing,
    for a non-loopback host without allowed hosts, allowed origins and a token."""
    hosts, origins = named(allow_hosts, allow_origins)
    token = environment.mcp_token(environ)
    if token is not None and (len(token) < MIN_TOKEN_CHARS or token != token.strip()):
        raise ValueError(
            f"{environment.MCP_TOKEN} must hold at least {MIN_TOKEN_CHARS} characters without "
            "surrounding spaces (for example from `python -c 'import secrets; print(secrets.token_urlsafe(32))'`)"
        )
    if is_loopback(host):
        return Access(*with_loopback(host, hosts, origins), token)
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
    return Access(tuple(hosts), tuple(origins), token)


class BearerGate:
    """ASGI middleware: every HTTP request must carry `Authorization: Bearer <token>`; any
    other gets 401 before its body is read. Other scopes (the lifespan) pass through."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode()

    def _allowed(self, header: str | None) -> bool:
        scheme, _, given = (header or "").partition(" ")
        return scheme.casefold() == "bearer" and hmac.compare_digest(
            given.strip().encode(), self._token
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from starlette.datastructures import Headers
        from starlette.responses import Response

        if scope["type"] == "http" and not self._allowed(Headers(scope=scope).get("authorization")):
            refusal = Response(
                "Unauthorized: this server needs Authorization: Bearer <token>\n",
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="lexkb"'},
            )
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)
