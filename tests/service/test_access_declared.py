"""Access is declared on the routes, read by one Gate for `lexkb serve` and `lexkb mcp --http`,
and each caller has one ask allowance, standalone or not (issue 60 item 2).

- Every route of the service declares what it needs (OPEN, KEY, ADMIN), where it is written;
  an app with a route that declares none is not built, and the refusal names the route.
- The gate refuses by the route's declaration, not by a path prefix: an admin route outside
  /api/v1/admin is refused to a non-admin key (before: open to every key), before its body is
  read; a route served without the gate refuses by its declaration too.
- `lexkb mcp --http` is behind the same Gate (two Host headers, a keyless request through a
  proxy: refused as lexkb serve refuses them) and limits asks per caller, as lexkb serve limits
  them per key: past `--asks-per-hour`, a tool error that says when to retry. The real server
  over real HTTP, with the SDK's client.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastapi import APIRouter, FastAPI, Request
from mcp import Client
from pydantic import BaseModel
from starlette.responses import PlainTextResponse
from starlette.testclient import TestClient

from lexkb_service.mcp.access import Access
from lexkb_service.mcp.http import HttpSettings
from lexkb_service.serve import app as service_app
from lexkb_service.serve.access_rules import RouteTable, UndeclaredAccess, requires
from lexkb_service.serve.app import build_app
from lexkb_service.serve.errors import add_error_handlers
from lexkb_service.serve.gate import gate, policy_for
from lexkb_service.serve.metrics import Metrics
from lexkb_service.serve.store import Store
from lexkb_service.serve.versions import V1
from tests.support.mcp_process import LEXKB, environment, free_port, start, stop

QUESTION = "How long must client money reconciliation records be kept?"
TOKEN = "t0k3n-for-the-access-tests-only-0123456789abcdef"
INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "access-test", "version": "1"}},
}  # fmt: skip
OPEN = {"/", f"{V1}/openapi.json", "/healthz", "/readyz", "/static"}
ADMIN = {"/metrics", f"{V1}/admin/feedback", f"{V1}/admin/answers"}


class Report(BaseModel):
    title: str


def _test_app() -> FastAPI:
    """An app with routes as lexkb serve writes them: a router that needs a key, an admin
    route on it outside /api/v1/admin (which the gate's prefixes let every key use), and an
    open one."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    router = APIRouter(prefix=V1, dependencies=[requires(Access.KEY)])
    ran: list[str] = []
    app.state.ran = ran

    @router.post("/reports", dependencies=[requires(Access.ADMIN)])
    def report(body: Report) -> dict:
        ran.append(body.title)
        return {"made": body.title}

    @router.get("/notes")
    def notes(request: Request) -> dict:
        return {"owner": request.scope["state"]["owner"]}

    @app.get("/hello", dependencies=[requires(Access.OPEN)])
    def hello() -> dict:
        return {"hello": "world"}

    app.include_router(router)
    add_error_handlers(app)
    return app


def _drive(app: Any, method: str, path: str, key: str | None = None, body: object = None):
    """One request straight on the ASGI channel: (status, reply, times the body was read)."""
    raw = json.dumps(body).encode() if body is not None else b""
    reads: list[int] = []
    sent: list[dict] = []

    async def receive() -> dict:
        reads.append(1)
        return {"type": "http.request", "body": raw, "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    headers = [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json"),
               (b"content-length", str(len(raw)).encode())]  # fmt: skip
    if key is not None:
        headers.append((b"authorization", f"Bearer {key}".encode()))
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
        "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
        "root_path": "", "headers": headers, "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }  # fmt: skip
    anyio.run(app, scope, receive, send)
    reply = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent[0]["status"], json.loads(reply) if reply else None, len(reads)


def test_a_route_that_declares_no_access_is_named_and_the_app_not_built():
    app = _test_app()

    @app.get(f"{V1}/undeclared")
    def undeclared() -> dict:
        return {}

    app.mount("/files", PlainTextResponse("a file"))  # an app of its own, declaring nothing
    sub = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)  # walked into
    sub.get("/ok", dependencies=[requires(Access.OPEN)])(lambda: {})
    sub.get("/forgotten")(lambda: {})
    app.mount("/sub", sub)
    with pytest.raises(UndeclaredAccess) as refused:
        RouteTable(app.routes)
    assert refused.value.routes == [f"{V1}/undeclared (GET)", "/files (*)", "/sub/forgotten (GET)"]
    assert f"{V1}/undeclared" in str(refused.value) and "/hello" not in str(refused.value)


def test_the_service_is_not_built_with_an_undeclared_route(built_root, tmp_path, monkeypatch):
    undeclared = APIRouter(prefix=V1)  # as a router written without its declaration

    @undeclared.get("/reports")
    def reports() -> dict:
        return {}

    monkeypatch.setattr(service_app, "pages", undeclared)
    policy = policy_for("127.0.0.1", 8000)
    with pytest.raises(UndeclaredAccess, match=f"{V1}/reports \\(GET\\)"):
        build_app(str(built_root), Store(str(tmp_path / "s.db")), policy, HttpSettings())


def test_every_route_of_the_service_declares_its_access(built_root, tmp_path):
    policy = policy_for("127.0.0.1", 8000, require_keys=True)
    served = build_app(str(built_root), Store(str(tmp_path / "s.db")), policy, HttpSettings())
    declared = {(methods, path): access for methods, path, access in served.routes.declarations()}
    paths = {path for _, path in declared}
    assert (
        OPEN | ADMIN | {"/mcp", f"{V1}/ask", f"{V1}/documents/{{document}}/pages/{{page}}"} <= paths
    )
    for (methods, path), access in declared.items():
        expected = Access.OPEN if path in OPEN else Access.ADMIN if path in ADMIN else Access.KEY
        assert access is expected, (methods, path, access)
    # Every operation the API documents is in the table the gate reads.
    with TestClient(served, base_url="http://127.0.0.1:8000") as client:
        document = client.get(f"{V1}/openapi.json").json()
    assert set(document["paths"]) <= paths
    # ... and says, per operation, what the gate will ask of its caller.
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            access = next(a for (m, p), a in declared.items() if p == path and method.upper() in m)
            assert operation["x-lexkb-access"] == access.value, (method, path)
            assert ("security" in operation) is (access is Access.OPEN), (method, path)
    admin_ops = [op for ops in document["paths"].values() for op in ops.values()
                 if op["x-lexkb-access"] == "admin"]  # fmt: skip
    assert admin_ops, "the admin's operations are documented as such"


@pytest.fixture()
def keyed(tmp_path: Path) -> tuple[Any, dict[str, str]]:
    """The test app behind lexkb serve's gate, keys required: alice's key, and an admin's."""
    store = Store(str(tmp_path / "keys.db"))
    keys = {name: store.add_key(name, admin=name == "boss")[1] for name in ("alice", "boss")}
    app = _test_app()
    policy = policy_for("127.0.0.1", 8000, require_keys=True)
    return gate(app, policy, store, Metrics(), 1 << 20, RouteTable(app.routes)), keys


def test_an_admin_route_outside_the_admin_prefix_is_refused_to_a_non_admin_key(keyed):
    served, keys = keyed
    ran = served.app.state.ran
    report = {"title": "everyone's answers"}
    status, reply, reads = _drive(served, "POST", f"{V1}/reports", keys["alice"], report)
    assert (status, reads) == (403, 0) and "admin key" in reply["error"]
    status, reply, reads = _drive(served, "POST", f"{V1}/reports", None, report)
    assert (status, reads) == (401, 0)
    assert ran == []  # refused before the body was read, and before the route ran
    assert _drive(served, "POST", f"{V1}/reports", keys["boss"], report)[:2] == (
        200, {"made": "everyone's answers"},
    )  # fmt: skip
    status, reply, _ = _drive(served, "GET", f"{V1}/notes", keys["alice"])
    assert status == 200 and reply["owner"] != "local"
    assert _drive(served, "GET", "/hello")[:2] == (200, {"hello": "world"})
    # A path no route declares needs a key to learn it is not there.
    assert _drive(served, "GET", f"{V1}/nothing-here")[0] == 401
    assert _drive(served, "GET", f"{V1}/nothing-here", keys["alice"])[0] == 404


def test_a_route_served_without_the_gate_refuses_by_its_declaration():
    app = _test_app()
    report = {"title": "x"}
    with TestClient(app) as client:
        assert client.get("/hello").status_code == 200
        refused = client.get(f"{V1}/notes")
        assert refused.status_code == 401 and refused.headers["www-authenticate"]
        assert client.post(f"{V1}/reports", json=report).status_code == 401

    async def as_alice(scope, receive, send):  # the caller a gate would have found
        scope.setdefault("state", {}).update(owner="alice", key_name="alice", admin=False)
        await app(scope, receive, send)

    with TestClient(as_alice) as client:
        assert client.get(f"{V1}/notes").status_code == 200
        assert client.post(f"{V1}/reports", json=report).status_code == 403
    assert app.state.ran == []


# lexkb mcp --http: the same gate, and an ask allowance per caller ----------------------------


@pytest.fixture(scope="module")
def standalone(built_root: Path) -> Iterator[int]:
    """lexkb mcp --http on loopback without a token, two asks an hour per caller."""
    port = free_port()
    server = start(built_root, f"127.0.0.1:{port}", "--asks-per-hour", "2")
    yield port
    stop(server)


def _asks(port: int, questions: list[dict], source: str = "127.0.0.1", token: str | None = None):
    """Each `ask` in turn in one MCP session from the address `source`: the results."""

    async def session() -> list[Any]:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        headers = {"Authorization": f"Bearer {token}"} if token else {}
        transport = httpx2.AsyncHTTPTransport(local_address=source)
        async with httpx2.AsyncClient(transport=transport, headers=headers, timeout=120) as http:
            url = f"http://127.0.0.1:{port}/mcp"
            async with Client(streamable_http_client(url, http_client=http)) as client:
                return [await client.call_tool("ask", arguments) for arguments in questions]

    return asyncio.run(session())


def _text(result: Any) -> str:
    return " ".join(getattr(part, "text", "") for part in result.content)


def test_the_standalone_server_limits_asks_per_client(standalone):
    bad = {"question": QUESTION, "filters": {"document": "no-such-document"}}
    asked = _asks(standalone, [bad, {"question": QUESTION}, {"question": QUESTION}, bad,
                               {"question": QUESTION}])  # fmt: skip
    assert [result.is_error for result in asked] == [True, False, False, True, True]
    assert "no-such-document" in _text(asked[0])  # refused: it used none of the allowance
    assert asked[1].structured_content["mode"] in ("DIRECT", "QUALIFIED", "ABSTAIN")
    assert "over 2 asks an hour: retry in" in _text(asked[4]), _text(asked[4])
    # Another client has an allowance of its own.
    (other,) = _asks(standalone, [{"question": QUESTION}], source="127.0.0.2")
    assert not other.is_error, _text(other)


def _raw(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), 10) as sock:
        sock.sendall(request)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
        return received


def test_the_standalone_server_refuses_as_lexkb_serve_does(standalone):
    host = f"Host: 127.0.0.1:{standalone}\r\n".encode()
    opening = json.dumps(INITIALIZE).encode()
    head = (b"POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nConnection: close\r\n"
            b"Accept: application/json, text/event-stream\r\n")  # fmt: skip
    length = f"Content-Length: {len(opening)}\r\n".encode()
    assert _raw(standalone, head + host + length + b"\r\n" + opening).startswith(b"HTTP/1.1 200 ")
    # Each was answered 200 before: the SDK reads one Host, and has no forwarding rule.
    two_hosts = _raw(standalone, head + host + host + length + b"\r\n" + opening)
    assert two_hosts.startswith(b"HTTP/1.1 400 "), two_hosts[:200]
    proxied = _raw(standalone, head + host + b"X-Forwarded-For: 203.0.113.7\r\n" + length
                   + b"\r\n" + opening)  # fmt: skip
    assert proxied.startswith(b"HTTP/1.1 401 ") and b"proxy" in proxied, proxied[:400]
    assert b"LEXKB_MCP_TOKEN" in proxied and b"x-frame-options: DENY" in proxied


def test_the_standalone_servers_token_is_one_caller(built_root):
    port = free_port()
    server = start(built_root, f"127.0.0.1:{port}", "--asks-per-hour", "1", LEXKB_MCP_TOKEN=TOKEN)
    try:
        (first,) = _asks(port, [{"question": QUESTION}], token=TOKEN)
        assert not first.is_error, _text(first)
        (second,) = _asks(port, [{"question": QUESTION}], source="127.0.0.2", token=TOKEN)
        assert second.is_error and "over 1 asks an hour" in _text(second)
    finally:
        stop(server)


def test_the_ask_allowance_is_an_http_option(built_root):
    done = subprocess.run(
        [LEXKB, "mcp", "--index", str(built_root), "--asks-per-hour", "5"],
        env=environment(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "--asks-per-hour applies to --http only" in done.stderr
    done = subprocess.run(
        [LEXKB, "mcp", "--index", str(built_root), "--http", f"127.0.0.1:{free_port()}",
         "--asks-per-hour", "0"],
        env=environment(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "at least 1" in done.stderr
