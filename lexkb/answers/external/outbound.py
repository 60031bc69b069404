"""The one HTTP client for the calls lexkb makes to another machine (an LLM endpoint, Brave).

Why not urllib: it follows redirects and resends every header, the key included, to wherever
`Location` points, and its timeout bounds each read, not the call, so a server that sends a byte
every few seconds holds the caller for as long as it likes. This client, on http.client:
- never follows a redirect: a 3xx is an `OutboundError` that names the host it pointed to and
  says that nothing, the key included, was sent there;
- ends every call at its deadline: a watchdog shuts the socket down when the time is up, so
  neither a silent nor a trickling server can hold a call past it (each read is also bounded by
  the socket's timeout; a DNS lookup is the one step the watchdog cannot cut short);
- reads at most `max_bytes` of a reply, and asks for no compression;
- turns every failure of transport, status or decoding into one `OutboundError` with a
  one-line reason.
Endpoints are parsed, never matched by prefix: `Target.parse` refuses credentials in the URL,
and `Target.loopback` tells a local test server from a host that only looks like one
("http://localhost.evil.example", "http://127.0.0.1@evil.example").
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import json
import socket
import threading
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass

_REASON_CHARS = 200


class OutboundError(RuntimeError):
    """A call to another machine failed; `status` is the HTTP status when there was one."""

    def __init__(self, reason: str, status: int | None = None) -> None:
        super().__init__(one_line(reason))
        self.status = status


def one_line(text: str) -> str:
    """`text` on one line of at most 200 characters, without control characters: a reason
    quotes what a remote server sent, and that must not break or forge a log line."""
    flat = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return flat if len(flat) <= _REASON_CHARS else flat[: _REASON_CHARS - 1] + "…"


@dataclass(frozen=True)
class Target:
    """An http(s) URL taken apart: where a request goes, and whether that is this machine."""

    scheme: str
    host: str
    port: int
    path: str  # with its query string

    @classmethod
    def parse(cls, url: str, name: str = "the endpoint") -> Target:
        """`url` taken apart; reasons name it by `name` and never quote it, since a URL may
        carry a password."""
        try:
            parts = urllib.parse.urlsplit(url.strip())
            port = parts.port
        except ValueError as error:
            raise OutboundError(f"{name} is not a valid URL: {error}") from error
        if parts.scheme not in ("http", "https"):
            raise OutboundError(f"{name} is not an http(s) URL")
        if parts.username is not None or parts.password is not None:
            raise OutboundError(
                f"{name} carries a user name or password; keys are read from the environment"
            )
        if not parts.hostname:
            raise OutboundError(f"{name} names no host")
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        default = 443 if parts.scheme == "https" else 80
        return cls(parts.scheme, parts.hostname, port or default, path)

    @property
    def loopback(self) -> bool:
        """True for localhost, ::1 and 127.0.0.0/8: addresses that never leave this machine."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    @property
    def origin(self) -> str:
        """host:port, as a reason names it."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def joined(self, path: str) -> Target:
        """This target with `path` appended to its own (a base URL's endpoint)."""
        base, _, query = self.path.partition("?")
        joined = base.rstrip("/") + "/" + path.lstrip("/")
        return Target(self.scheme, self.host, self.port, joined + (f"?{query}" if query else ""))


class _Watchdog:
    """Shuts a connection's socket down at the deadline, and never after the call has ended
    (the socket's number could by then belong to another connection)."""

    def __init__(self, connection: http.client.HTTPConnection, seconds: float) -> None:
        self._connection = connection
        self._lock = threading.Lock()
        self._ended = False
        self.fired = False
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            if self._ended:
                return
            self.fired = True
            sock = self._connection.sock
            if sock is not None:
                # The plain socket's shutdown: it wakes a read blocked in TLS as well.
                with contextlib.suppress(OSError):
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def end(self) -> None:
        self._timer.cancel()
        with self._lock:
            self._ended = True


def request(
    method: str,
    target: Target,
    headers: Mapping[str, str],
    body: bytes | None = None,
    *,
    deadline: float,
    max_bytes: int,
) -> bytes:
    """The body of a 2xx reply to one request, within `deadline` seconds in all and at most
    `max_bytes` long; anything else is an OutboundError."""
    if deadline <= 0:
        raise OutboundError(f"no time left to call {target.origin}")
    kind = http.client.HTTPSConnection if target.scheme == "https" else http.client.HTTPConnection
    connection = kind(target.host, target.port, timeout=deadline)
    watchdog = _Watchdog(connection, deadline)
    sent = {"Accept-Encoding": "identity", "Connection": "close", **headers}
    sending = True
    try:
        connection.request(method, target.path, body=body, headers=sent)
        sending = False
        response = connection.getresponse()
        status = response.status
        if 300 <= status < 400:
            raise _redirect(target, status, response.getheader("Location") or "")
        if not 200 <= status < 300:
            raise OutboundError(f"{target.origin} answered HTTP {status}", status)
        declared = response.getheader("Content-Length")
        if declared and declared.isdigit() and int(declared) > max_bytes:
            raise OutboundError(f"{target.origin} sent a reply over {max_bytes:,} bytes")
        data = response.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise OutboundError(f"{target.origin} sent a reply over {max_bytes:,} bytes")
        if response.length:  # http.client returns what came when a read asks for a size
            raise OutboundError(f"{target.origin} closed the connection before its reply's end")
    except OutboundError:
        raise
    except ValueError as error:
        if not sending:
            raise OutboundError(f"{target.origin}: {_describe(error)}") from error
        # http.client quotes an illegal header value in its message: that could be the key.
        raise OutboundError(
            f"the request to {target.origin} could not be sent: a header or the path holds a "
            "character HTTP does not allow"
        ) from error
    except (OSError, http.client.HTTPException) as error:
        if watchdog.fired or isinstance(error, TimeoutError):
            raise _late(target, deadline) from error
        raise OutboundError(f"{target.origin}: {_describe(error)}") from error
    finally:
        watchdog.end()
        connection.close()
    if watchdog.fired:  # the shutdown may read as a clean end of a reply without a length
        raise _late(target, deadline)
    return data


def request_json(
    method: str,
    target: Target,
    headers: Mapping[str, str],
    body: bytes | None = None,
    *,
    deadline: float,
    max_bytes: int,
) -> object:
    """The JSON value of a 2xx reply (see `request`): strict UTF-8, nesting bounded by Python's
    recursion limit."""
    data = request(method, target, headers, body, deadline=deadline, max_bytes=max_bytes)
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise OutboundError(f"{target.origin} sent a reply that is not UTF-8: {error}") from error
    except json.JSONDecodeError as error:
        raise OutboundError(f"{target.origin} sent a reply that is not JSON: {error}") from error
    except RecursionError as error:
        raise OutboundError(f"{target.origin} sent JSON nested too deeply to read") from error


class Clock:
    """What is left of a deadline shared by several calls."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def left(self) -> float:
        return self._end - time.monotonic()


def _redirect(target: Target, status: int, location: str) -> OutboundError:
    pointed = urllib.parse.urljoin(f"{target.scheme}://{target.origin}{target.path}", location)
    try:
        where = Target.parse(pointed).origin
    except OutboundError:
        where = repr(location[:80])
    return OutboundError(
        f"{target.origin} answered HTTP {status}, a redirect to {where}; lexkb follows no "
        "redirect, so nothing (the key included) was sent there",
        status,
    )


def _late(target: Target, deadline: float) -> OutboundError:
    return OutboundError(f"{target.origin} gave no complete reply within {deadline:.3g} s")


def _describe(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
