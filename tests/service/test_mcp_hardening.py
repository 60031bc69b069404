"""The MCP server under hostile or slow conditions: hung outbound calls, a stalling object store,
malformed stdio lines, slow or oversized HTTP requests, idle sessions, and who may connect
off loopback. Real servers (`lexkb mcp`) and the official client; the slow endpoints are
local stand-ins on 127.0.0.1 (tests/support/stalling.py)."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import select
import signal
import socket
import subprocess
import time

import pytest
from mcp import Client

from tests.conftest import REPO
from tests.support.local_s3 import local_s3
from tests.support.mcp_process import environment, free_port, start, stop
from tests.support.stalling import HangingServer, StallingProxy

LEXKB = str(REPO / ".venv" / "bin" / "lexkb")
QUESTION = "How long must client money reconciliation records be kept?"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "hardening-test", "version": "1"},
    },
}
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
TOKEN = "t0k3n-for-the-hardening-tests-only-0123456789"


def _post(port: int, body: bytes, headers: dict[str, str]) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("POST", "/mcp", body=body, headers=headers)
    response = connection.getresponse()
    response.read()
    return response


def _initialize(port: int, **headers: str) -> http.client.HTTPResponse:
    return _post(port, json.dumps(INITIALIZE).encode(), {**MCP_HEADERS, **headers})


def _seconds_until_closed(connection: socket.socket, trickle: bytes = b"", limit: float = 8):
    """Seconds until the server closes `connection` while it sends `trickle` a byte at a
    time, one every 0.2 s; None if still open after `limit`."""
    started = time.monotonic()
    connection.setblocking(False)
    position = 0
    while time.monotonic() - started < limit:
        readable, _, _ = select.select([connection], [], [], 0.2)
        if readable:
            try:
                if connection.recv(4096) == b"":
                    return time.monotonic() - started
            except (ConnectionResetError, BrokenPipeError):
                return time.monotonic() - started
        if position < len(trickle):
            try:
                connection.send(trickle[position : position + 1])
            except (ConnectionResetError, BrokenPipeError):
                return time.monotonic() - started
            position += 1
    return None


async def _call(client: Client, tool: str, **arguments) -> dict:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    return result.structured_content


# 2: outbound calls never starve the local tools -------------------------------------------


def test_a_local_tool_answers_while_outbound_calls_hang(built_root):
    llm = HangingServer()
    port = free_port()
    server = start(
        built_root,
        f"127.0.0.1:{port}",
        LEXKB_LLM_URL=f"{llm.url}/v1",
        LEXKB_LLM_TIMEOUT="120",  # the asks must outlast the measurement
        LEXKB_MCP_OUTBOUND_CALLS="4",
    )

    async def session() -> tuple[float, int, int]:
        url = f"http://127.0.0.1:{port}/mcp"
        async with Client(url) as asker, Client(url) as searcher:
            await _call(searcher, "search", query="client money", limit=3)  # warm
            asks = [
                asyncio.create_task(asker.call_tool("ask", {"question": QUESTION}))
                for _ in range(40)
            ]
            try:
                reached = await asyncio.to_thread(llm.wait_for, 4, 30)
                await asyncio.sleep(1.0)  # room for any call past the pool's size to arrive
                started = time.monotonic()
                search = _call(searcher, "search", query="reconciliation records", limit=3)
                with contextlib.suppress(TimeoutError):
                    assert (await asyncio.wait_for(search, 20))["hits"]
                seconds = time.monotonic() - started
                still_hanging = sum(not task.done() for task in asks)
                return seconds, max(reached, llm.accepted), still_hanging
            finally:
                for task in asks:
                    task.cancel()
                await asyncio.gather(*asks, return_exceptions=True)

    try:
        seconds, connections, hanging = asyncio.run(session())
    finally:
        stop(server)
        llm.close()
    assert seconds < 2.0, f"search took {seconds:.1f}s while asks hung"
    assert hanging == 40, "every ask should still be waiting on the endpoint"
    assert connections == 4, f"{connections} asks reached the LLM at once; the pool holds 4"


# 8: an s3:// root never blocks the event loop -----------------------------------------------


@pytest.fixture()
def stalling_bucket(built_root, tmp_path):
    """An s3:// root on moto behind a proxy that can stall, holding built_root's snapshot."""
    from lexkb.core.store import snapshot as snap
    from lexkb.core.store.object_store import ObjectRoot

    proxies: list[StallingProxy] = []

    def through_proxy(upstream: tuple[str, int]) -> str:
        proxies.append(StallingProxy(upstream))
        return proxies[0].url

    with local_s3("lexkb-stall", tmp_path / "cache", endpoint=through_proxy):
        url = "s3://lexkb-stall/index"
        ObjectRoot(url).push(snap.resolve(built_root))
        yield url, proxies[0]
        proxies[0].close()


def test_a_stalling_object_store_does_not_delay_other_clients(stalling_bucket, monkeypatch):
    from lexkb_service.mcp.server import build_server

    url, proxy = stalling_bucket
    monkeypatch.setattr("lexkb.current.POLL_SECONDS", 0.0)  # every call reads CURRENT
    server = build_server(url)

    async def session() -> tuple[float, float]:
        async with Client(server) as first:
            await _call(first, "search", query="client money", limit=1)
            proxy.stall()
            started = time.monotonic()
            stuck = asyncio.create_task(
                first.call_tool("search", {"query": "client money", "limit": 1})
            )
            await asyncio.sleep(0.3)
            try:
                async with Client(server) as second:
                    initialized = time.monotonic() - started
                    searched_at = time.monotonic()
                    found = await _call(second, "search", query="records", limit=1)
                    searched = time.monotonic() - searched_at
                    assert found["hits"]
            finally:
                proxy.release()
                await stuck
        return initialized, searched

    initialized, searched = asyncio.run(session())
    assert initialized < 2.0, f"initialize waited {initialized:.1f}s behind the object store"
    assert searched < 2.0, f"search waited {searched:.1f}s behind another call's poll"


# 17: stdio answers a malformed line ----------------------------------------------------------


def test_stdio_answers_a_malformed_line_and_goes_on(built_root):
    server = subprocess.Popen(
        [LEXKB, "mcp", "--index", str(built_root)],
        env=environment(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )

    def send(line: str | dict) -> None:
        text = line if isinstance(line, str) else json.dumps(line)
        server.stdin.write(text.encode() + b"\n")
        server.stdin.flush()

    def reply(timeout: float = 60) -> dict:
        readable, _, _ = select.select([server.stdout], [], [], timeout)
        assert readable, "no reply"
        return json.loads(server.stdout.readline())

    try:
        send(INITIALIZE)
        assert reply()["id"] == 1
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send('{"jsonrpc": "2.0", "id": 7, "method": "tools/list"')  # cut short
        assert reply(10) == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "Parse error: the line is not JSON"},
        }
        send('{"hello": "world"}')
        invalid = reply(10)
        assert invalid["id"] is None and invalid["error"]["code"] == -32600
        call = {"name": "search", "arguments": {"query": "client money", "limit": 1}}
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
        answered = reply()
        assert answered["id"] == 2 and not answered["result"].get("isError")
    finally:
        server.stdin.close()
        server.wait(timeout=30)
        server.stdout.close()


# 16: HTTP resources are bounded --------------------------------------------------------------


@pytest.fixture(scope="module")
def bounded_server(built_root):
    port = free_port()
    server = start(
        built_root,
        f"127.0.0.1:{port}",
        LEXKB_MCP_READ_TIMEOUT="1",
        LEXKB_MCP_MAX_BODY_BYTES="20000",
        LEXKB_MCP_SESSION_IDLE="2",
        LEXKB_MCP_MAX_SESSIONS="3",
    )
    yield port
    stop(server)


def test_slow_requests_are_closed_within_the_read_timeout(bounded_server):
    port = bounded_server
    start = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode()
    with socket.create_connection(("127.0.0.1", port)) as silent:
        assert (_seconds_until_closed(silent) or 99) < 3
    with socket.create_connection(("127.0.0.1", port)) as slowloris:
        slowloris.sendall(start)
        closed = _seconds_until_closed(slowloris, trickle=b"X-Padding: " + b"a" * 100)
        assert closed is not None and closed < 3, "headers trickled in past the read timeout"
    with socket.create_connection(("127.0.0.1", port)) as slow_body:
        slow_body.sendall(
            start + b"Content-Type: application/json\r\nAccept: application/json, "
            b"text/event-stream\r\nContent-Length: 10000\r\n\r\n{"
        )
        closed = _seconds_until_closed(slow_body, trickle=b" " * 100)
        assert closed is not None and closed < 3, "a body trickled in past the read timeout"
    assert _initialize(port).status == 200  # the server goes on


def test_an_oversized_body_is_refused_with_413(bounded_server):
    body = json.dumps({**INITIALIZE, "padding": "x" * 30_000}).encode()
    assert _post(bounded_server, body, MCP_HEADERS).status == 413
    assert _initialize(bounded_server).status == 200


def test_sessions_are_capped_and_idle_ones_expire(bounded_server):
    port = bounded_server
    time.sleep(2.5)  # let sessions opened by other tests expire first
    sessions = []
    for _ in range(3):
        opened = _initialize(port)
        assert opened.status == 200
        sessions.append(opened.getheader("mcp-session-id"))
    assert _initialize(port).status == 503
    listing = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode()
    headers = {**MCP_HEADERS, "mcp-session-id": sessions[0], "mcp-protocol-version": "2025-06-18"}
    assert _post(port, listing, headers).status == 200
    time.sleep(4)
    assert _post(port, listing, headers).status == 404
    assert _initialize(port).status == 200


def test_a_bad_setting_stops_the_server_at_start(built_root):
    done = subprocess.run(
        [LEXKB, "mcp", "--index", str(built_root), "--http", f"127.0.0.1:{free_port()}"],
        env=environment(LEXKB_MCP_READ_TIMEOUT="soon"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "LEXKB_MCP_READ_TIMEOUT" in done.stderr


# 7: who may connect, on loopback and off it --------------------------------------------------


def test_loopback_keeps_the_sdks_dns_rebinding_protection(bounded_server):
    port = bounded_server
    assert _initialize(port, Host="evil.example").status == 421
    assert _initialize(port, Origin="http://evil.example").status == 403
    # The server has no page: a page another local program serves (any loopback port, its
    # own included) is no caller of it. An MCP client sends no Origin.
    assert _initialize(port, Origin="http://localhost:3000").status == 403
    assert _initialize(port, Origin=f"http://127.0.0.1:{port}").status == 403
    assert _initialize(port).status == 200


def test_a_browser_origin_on_loopback_is_served_only_when_named():
    from lexkb_service.mcp.access import access_for

    assert access_for("127.0.0.1", environ={}).origins == ()
    named = access_for("127.0.0.1", [], ["http://localhost:3000"], environ={})
    assert named.security().allowed_origins == ["http://localhost:3000"]


@pytest.mark.parametrize(
    ("flags", "token", "missing"),
    [
        ((), None, "--allow-host, --allow-origin, LEXKB_MCP_TOKEN"),
        (("--allow-host", "mcp.example.test"), TOKEN, "--allow-origin"),
        (("--allow-host", "mcp.example.test", "--allow-origin", "https://a.test"), None,
         "LEXKB_MCP_TOKEN"),
    ],
)  # fmt: skip
def test_a_non_loopback_bind_is_refused_unless_fully_configured(built_root, flags, token, missing):
    env = environment(**({"LEXKB_MCP_TOKEN": token} if token else {}))
    server = subprocess.Popen(
        [LEXKB, "mcp", "--index", str(built_root), "--http", f"0.0.0.0:{free_port()}", *flags],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        code = server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
        pytest.fail("the server started on 0.0.0.0 without hosts, origins and a token")
    message = server.stderr.read()
    server.stderr.close()
    assert code == 2 and "not a loopback address" in message
    assert f"missing: {missing}" in message


def test_a_short_token_is_refused(built_root):
    done = subprocess.run(
        [LEXKB, "mcp", "--index", str(built_root), "--http", f"127.0.0.1:{free_port()}"],
        env=environment(LEXKB_MCP_TOKEN="sh0rt-t0ken"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "at least 32 characters" in done.stderr
    assert "sh0rt-t0ken" not in done.stderr


def test_off_loopback_every_request_needs_host_origin_and_token(built_root):
    port = free_port()
    server = start(
        built_root,
        f"0.0.0.0:{port}",
        "--allow-host",
        "mcp.example.test",
        "--allow-host",
        f"127.0.0.1:{port}",
        "--allow-origin",
        "https://app.example.test",
        LEXKB_MCP_TOKEN=TOKEN,
    )
    bearer = f"Bearer {TOKEN}"
    named = f"mcp.example.test:{port}"
    try:
        assert _initialize(port, Host=named).status == 401
        assert _initialize(port, Host=named, Authorization="Bearer wrong").status == 401
        assert _initialize(port, Host=named, Authorization=TOKEN).status == 401
        assert _initialize(port, Host="evil.example", Authorization=bearer).status == 421
        assert _initialize(port, Host=named, Authorization=bearer, Origin="https://evil.example").status == 403  # fmt: skip
        allowed = _initialize(
            port, Host=named, Authorization=bearer, Origin="https://app.example.test"
        )
        assert allowed.status == 200 and allowed.getheader("mcp-session-id")

        async def session() -> None:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            async with httpx2.AsyncClient(headers={"Authorization": bearer}) as http:
                transport = streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)
                async with Client(transport) as client:
                    found = await _call(client, "search", query="client money", limit=1)
                    assert found["hits"]

        asyncio.run(session())
    finally:
        stop(server)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("[::1]", True),
     ("localhost", True), ("0.0.0.0", False), ("::", False), ("192.168.1.20", False),
     ("localhost.evil.example", False), ("mcp.example.test", False)],
)  # fmt: skip
def test_what_counts_as_loopback(host, loopback):
    from lexkb_service.mcp.access import is_loopback

    assert is_loopback(host) is loopback


def test_allowed_hosts_and_origins_are_checked_and_expanded():
    from lexkb_service.mcp.access import access_for

    environ = {"LEXKB_MCP_TOKEN": TOKEN}
    access = access_for(
        "0.0.0.0", ["mcp.example.test", "10.0.0.5:8765"], ["https://a.test"], environ
    )
    assert access.hosts == ("mcp.example.test", "mcp.example.test:*", "10.0.0.5:8765")
    assert access.origins == ("https://a.test",) and access.token == TOKEN
    # 127.0.0.2 is loopback, but not one the SDK protects by itself.
    assert "127.0.0.2:*" in access_for("127.0.0.2", environ={}).security().allowed_hosts
    for origin in ("*", "null", "https://a.test/path", "ftp://a.test", "https://u@a.test"):
        with pytest.raises(ValueError, match="--allow-origin"):
            access_for("0.0.0.0", ["mcp.example.test"], [origin], environ)
    for host in ("https://mcp.example.test", "a b", "mcp.example.test/mcp"):
        with pytest.raises(ValueError, match="--allow-host"):
            access_for("0.0.0.0", [host], ["https://a.test"], environ)
