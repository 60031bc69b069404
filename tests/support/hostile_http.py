"""Servers on loopback addresses that answer the way a broken or hostile endpoint does, for the
outbound tests and the faults benchmark: redirects to another host, silence, a byte at a time,
bytes that are not HTTP or not JSON, a reset connection, an endless reply.

Each server records what reached it (method, path, headers, body), so a test can tell whether a
key arrived where it must not. They listen on 127.0.0.0/8 only: "another host" is 127.0.0.2,
a different address of this machine.
"""

from __future__ import annotations

import contextlib
import json
import socket
import socketserver
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

# "Another host": an address of this machine other than the endpoint's 127.0.0.1.
OTHER_HOST = "127.0.0.2"
FOREIGN = "Records may be destroyed immediately."
COMPLETION = {"model": "other-host", "choices": [{"message": {"content": FOREIGN}}]}


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    body: bytes


# A reply writes to the connection; the event is set when the server closes, so that a reply
# that stalls ends with it.
Reply = Callable[[Request, socket.socket, threading.Event], None]


class HostileServer:
    """Serves `reply` on `host` (a loopback address) from a thread, from construction until
    `close`; `requests` is what reached it."""

    def __init__(self, reply: Reply, host: str = "127.0.0.1") -> None:
        self.requests: list[Request] = []
        self.reply = reply
        self._closing = threading.Event()
        outer = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                request = _read_request(self.rfile)
                if request is None:
                    return
                outer.requests.append(request)
                # OSError: the client went away, as a client with a deadline does.
                with contextlib.suppress(OSError):
                    outer.reply(request, self.connection, outer._closing)

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            block_on_close = False
            allow_reuse_address = True

        self._server = Server((host, 0), Handler)
        self.root = f"http://{host}:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> HostileServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _read_request(rfile) -> Request | None:
    line = rfile.readline(65537).decode("latin-1")
    if not line.strip():
        return None
    method, path, *_ = line.split() + ["", ""]
    headers = {}
    while (header := rfile.readline(65537).decode("latin-1").strip()) != "":
        name, _, value = header.partition(":")
        headers[name.strip().lower()] = value.strip()
    body = rfile.read(int(headers.get("content-length", "0") or 0))
    return Request(method, path, headers, body)


def http_bytes(status: int, body: bytes, headers: dict[str, str] | None = None) -> bytes:
    head = [f"HTTP/1.1 {status} X", f"Content-Length: {len(body)}", "Connection: close"]
    head += [f"{name}: {value}" for name, value in (headers or {}).items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


def raw(data: bytes) -> Reply:
    """Send `data` as it is, then close."""

    def reply(request: Request, connection: socket.socket, closing: threading.Event) -> None:
        connection.sendall(data)

    return reply


def json_reply(payload: object, status: int = 200) -> Reply:
    return raw(
        http_bytes(status, json.dumps(payload).encode(), {"Content-Type": "application/json"})
    )


def redirect(status: int, location: str) -> Reply:
    return raw(http_bytes(status, b"", {"Location": location}))


def hang(request: Request, connection: socket.socket, closing: threading.Event) -> None:
    """Read the request and never answer (until the server closes)."""
    closing.wait(120)


def trickle(interval: float = 0.5) -> Reply:
    """A valid JSON reply, one byte every `interval` seconds from its status line on."""
    data = http_bytes(200, json.dumps({"choices": [], "padding": "x" * 10_000}).encode())

    def reply(request: Request, connection: socket.socket, closing: threading.Event) -> None:
        for i in range(len(data)):
            connection.sendall(data[i : i + 1])
            if closing.wait(interval):
                return

    return reply


def reset(request: Request, connection: socket.socket, closing: threading.Event) -> None:
    """Close the connection with a TCP reset instead of a reply."""
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()


def endless(chunk: int = 65536, limit: int = 200_000_000, declared: bool = False) -> Reply:
    """A 200 reply of `limit` spaces (with a Content-Length saying so when `declared`,
    else none); `reply.state["sent"]` counts what was handed to the socket before the client
    hung up."""
    state = {"sent": 0}
    length = f"Content-Length: {limit}\r\n" if declared else ""
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{length}Connection: close\r\n\r\n"
    block = b" " * chunk

    def reply(request: Request, connection: socket.socket, closing: threading.Event) -> None:
        connection.sendall(head.encode())
        while state["sent"] < limit and not closing.is_set():
            connection.sendall(block)
            state["sent"] += len(block)

    reply.state = state  # type: ignore[attr-defined]
    return reply


# What a broken endpoint can send instead of a completion or a list of results.
TRANSPORT_FAULTS = {
    "invalid UTF-8": raw(http_bytes(200, b'{"choices": "\xff\xfe\xfa"}')),
    "not JSON": raw(http_bytes(200, b"<html>upstream error</html>")),
    "deeply nested JSON": raw(http_bytes(200, b"[" * 200_000)),
    "reset connection": reset,
    "closed without a reply": raw(b""),
    "bad status line": raw(b"SPEAK FRIEND AND ENTER\r\n\r\n"),
    "truncated body": raw(b'HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{"choices": ['),
    "HTTP 500": json_reply({"error": "overloaded"}, status=500),
    "oversized, undeclared": endless(),
    "oversized, declared": endless(declared=True),
}
LLM_FAULTS = {
    **TRANSPORT_FAULTS,
    "null content": json_reply({"choices": [{"message": {"content": None}}]}),
    "integer content": json_reply({"choices": [{"message": {"content": 7}}]}),
    "list content": json_reply({"choices": [{"message": {"content": [{"text": "x"}]}}]}),
    "empty content": json_reply({"choices": [{"message": {"content": "  "}}]}),
    "no choices": json_reply({"choices": []}),
    "a list, not an object": json_reply([COMPLETION]),
}
WEB_FAULTS = {
    **TRANSPORT_FAULTS,
    "a list, not an object": json_reply([{"web": {"results": []}}]),
    "web is a list": json_reply({"web": [{"url": "https://a.example"}]}),
    "results is an object": json_reply({"web": {"results": {"url": "https://a.example"}}}),
    "results is text": json_reply({"web": {"results": "https://a.example"}}),
    "results are not objects": json_reply({"web": {"results": [1, "two", None, ["x"]]}}),
    "fields are not text": json_reply({"web": {"results": [{"url": 5, "title": {"a": 1}}]}}),
}


def call_within(seconds: float, call: Callable[[], object]) -> tuple[float, object]:
    """(seconds taken, what `call` returned or raised), or (inf, None) when it has not ended
    within `seconds`: a client with no deadline must fail a test, not hang it."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as error:  # noqa: BLE001 - the test judges what was raised
            outcome.append(error)

    started = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        return float("inf"), None
    return time.monotonic() - started, outcome[0]
