"""One process, one port: MCP at /mcp, the JSON API at /api/v1, the web page at /, and what
operators watch (/metrics, /healthz, /readyz), all on one CurrentIndex that follows CURRENT.

The MCP SDK's streamable HTTP app takes /mcp and the lifespan (it runs the MCP session manager); the
FastAPI app with the API and the page takes every other path (`Split`), and the Gate
(lexkb_service.serve.gate) stands in front of both, refusing each request that its route's
declared access does not allow (lexkb_service.serve.access_rules: the app is not built when a
route declares none); between the Gate and MCP, KeySessions bounds each key's MCP sessions
(lexkb_service.serve.sessions). The API and MCP share one set of worker
pools and one budget of costly work per key (lexkb_service.mcp.pools, lexkb_service.mcp.admission),
so a key's costly calls count the same through either door and never take the threads the page,
health checks and plain searches run in. uvicorn runs it with the MCP server's bounds
(lexkb_service.mcp.http: read deadline, head and body size, connections, sessions).
"""

from __future__ import annotations

import logging
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from lexkb.current import CurrentIndex
from lexkb_service.mcp.access import Access, Policy
from lexkb_service.mcp.admission import KeyBudget
from lexkb_service.mcp.http import ACCESS as MCP_ACCESS
from lexkb_service.mcp.http import PATH as MCP_PATH
from lexkb_service.mcp.http import HttpSettings, run_bounded, sdk_app
from lexkb_service.mcp.pools import Pools
from lexkb_service.mcp.ratelimit import ASKS_PER_HOUR, RateLimit
from lexkb_service.mcp.server import build_server
from lexkb_service.serve import v1, v1_people
from lexkb_service.serve.access_rules import RouteTable, declare, requires
from lexkb_service.serve.api import Service
from lexkb_service.serve.errors import add_error_handlers
from lexkb_service.serve.gate import gate
from lexkb_service.serve.metrics import CONTENT_TYPE, Metrics
from lexkb_service.serve.openapi import document
from lexkb_service.serve.pages import router as pages
from lexkb_service.serve.sessions import SESSIONS_PER_KEY, KeySessions
from lexkb_service.serve.store import CONVERSATIONS_PER_KEY, Store
from lexkb_service.serve.versions import V1

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("lexkb_service.serve")
READY_CHECKS = 2  # /readyz checks at once, in threads of their own
STATIC = Path(__file__).resolve().parent / "static"
# The page loads nothing from elsewhere and runs no inline script (the Gate adds nosniff,
# no-referrer and DENY framing to every reply).
PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    ),
}


@dataclass(frozen=True)
class Quotas:
    """What one key may have: asks an hour (lexkb_service.mcp.ratelimit), cost units of costly
    work in progress (lexkb_service.mcp.admission; None: LEXKB_SERVE_COST_PER_KEY, else its
    default), MCP sessions open (lexkb_service.serve.sessions) and conversations kept
    (lexkb_service.serve.store)."""

    asks_per_hour: int = ASKS_PER_HOUR
    cost_per_key: int | None = None
    sessions_per_key: int = SESSIONS_PER_KEY
    conversations_per_key: int = CONVERSATIONS_PER_KEY


def build_app(
    root: str,
    store: Store,
    policy: Policy,
    settings: HttpSettings,
    quotas: Quotas | None = None,
) -> ASGIApp:
    """The whole service for the index at `root` (opened now: a bad root fails at start)."""
    from lexkb import __version__

    quotas = quotas or Quotas()
    current = CurrentIndex(root)
    metrics = Metrics()
    metrics.serving(current.get().version)
    api = FastAPI(
        title="lexkb",
        version=__version__,
        summary="Citable search, lookup and verified answers over a lexkb snapshot",
        openapi_url=None,  # served by a route of our own, which declares its access
        docs_url=None,
        redoc_url=None,
    )
    api.openapi = lambda: document(api)  # type: ignore[method-assign]
    # One set of pools and one budget per key for the API and MCP alike: a key's costly work
    # is counted whichever door it came through, and queues in one costly pool.
    pools, budget = Pools.sized(), KeyBudget(quotas.cost_per_key)
    service = Service(
        current, store, RateLimit(quotas.asks_per_hour), metrics, pools=pools, budget=budget,
        conversations_per_key=quotas.conversations_per_key,
    )  # fmt: skip
    api.state.service = service
    for router in (v1.router, v1_people.router, pages):
        api.include_router(router)
    add_error_handlers(api)
    _add_operator_routes(api, current, store, metrics)
    metrics.counted_by(
        "lexkb_busy_refused",
        "costly requests refused: their key had too many cost units in progress",
        lambda: budget.refused,
    )
    # The page's files carry the page's headers: /static/index.html is the same page as /.
    api.mount("/static", WithHeaders(StaticFiles(directory=STATIC), PAGE_HEADERS), name="static")
    declare(api.router.routes[-1], Access.OPEN)

    # MCP's `ask` is the API's ask: the same key's hourly allowance, recorded the same way.
    server = build_server(
        root, pools=pools, current=current, hosted={"ask": service.mcp_ask}, budget=budget
    )
    mcp = sdk_app(server, MCP_PATH, policy, settings)
    sessions = KeySessions(mcp, quotas.sessions_per_key, settings.session_idle)
    metrics.counted_by(
        "lexkb_mcp_sessions_refused",
        "MCP sessions refused: their key had as many open as it may",
        lambda: sessions.refused,
    )
    # What every route needs, read from the routes: UndeclaredAccess when one declares none.
    routes = RouteTable(api.routes, {MCP_PATH: MCP_ACCESS})
    app = Split(sessions, api)
    return gate(app, policy, store, metrics, settings.max_body_bytes, routes)


class WithHeaders:
    """An ASGI app whose every reply also carries `headers` (the page's CSP on its files)."""

    def __init__(self, app: ASGIApp, headers: dict[str, str]) -> None:
        self.app = app
        self.headers = [(k.lower().encode(), v.encode()) for k, v in headers.items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *self.headers]}
            await send(message)

        await self.app(scope, receive, sending)


class Split:
    """/mcp to the MCP app (which also takes the lifespan: it runs the MCP session manager),
    every other path to the API app, whose router answers what matches nothing with JSON."""

    def __init__(self, mcp: ASGIApp, api: ASGIApp) -> None:
        self.mcp = mcp
        self.api = api

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan" or scope.get("path") == MCP_PATH:
            await self.mcp(scope, receive, send)
        else:
            await self.api(scope, receive, send)


def _add_operator_routes(
    api: FastAPI, current: CurrentIndex, store: Store, metrics: Metrics
) -> None:
    # The page and /healthz are answered on the event loop, and /readyz in threads of its
    # own: none of them waits for a worker thread behind searches or costly calls.
    checks = anyio.CapacityLimiter(READY_CHECKS)

    # The page, health and the API's description show nothing of the index or anyone's data.
    public = [requires(Access.OPEN)]

    @api.get("/", include_in_schema=False, dependencies=public)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers=PAGE_HEADERS)

    @api.get(f"{V1}/openapi.json", include_in_schema=False, dependencies=public)
    async def openapi() -> JSONResponse:
        return JSONResponse(api.openapi())

    @api.get("/healthz", include_in_schema=False, dependencies=public)
    async def healthz() -> JSONResponse:
        return JSONResponse({"status": "ok"})

    @api.get("/readyz", include_in_schema=False, dependencies=public)
    async def readyz() -> JSONResponse:
        return await anyio.to_thread.run_sync(ready, limiter=checks)

    def ready() -> JSONResponse:
        """Ready when the store answers and a snapshot is served. Anyone may ask, so the
        reply names no file or folder (the store's path, the index root): the reasons are
        fixed sentences, and what failed in detail goes to the server's log."""
        try:
            version = current.get().version
        except Exception as exc:
            log.warning("readyz: no snapshot can be served: %s", exc)
            return JSONResponse(
                {"status": "not ready", "reason": "no snapshot can be served (see the log)"},
                status_code=503,
            )
        if not store.ping():
            return JSONResponse(
                {"status": "not ready", "reason": "the store does not answer"}, status_code=503
            )
        body = {"status": "ready", "snapshot_version": version, "store": store.kind}
        if current.last_error:
            log.warning("readyz: following CURRENT failed: %s", current.last_error)
            body["warning"] = "following CURRENT failed; the last snapshot opened is served"
        return JSONResponse(body)

    @api.get("/metrics", include_in_schema=False, dependencies=[requires(Access.ADMIN)])
    def prometheus(request: Request) -> Response:
        metrics.serving(current.get().version)
        return Response(metrics.text(), media_type=CONTENT_TYPE)


def serve(
    root: str,
    host: str,
    port: int,
    store: Store,
    policy: Policy,
    quotas: Quotas | None = None,
) -> None:
    """Serve until stopped, under the MCP server's HTTP bounds (LEXKB_MCP_* settings). The
    address is taken before the service says where it serves: a port in use is a ValueError
    that says so, and nothing claims to be served."""
    import sys

    settings = HttpSettings.from_env()
    bound = listening(host, port)
    try:
        app = build_app(root, store, policy, settings, quotas)
    except BaseException:
        bound.close()
        raise
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    print(f"lexkb serve: http://{shown}:{port}/ (store: {store.where})", file=sys.stderr)
    run_bounded(app, host, port, settings, sockets=[bound])


def listening(host: str, port: int) -> socket.socket:
    """A socket bound to `host`:`port`, as uvicorn binds one (SO_REUSEADDR); ValueError when the
    address cannot be taken (in use, or not this machine's)."""
    name = host.strip("[]")
    try:
        family = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)[0][0]
        bound = socket.socket(family, socket.SOCK_STREAM)
    except OSError as exc:
        raise ValueError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    try:
        bound.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        bound.bind((name, port))
    except OSError as exc:
        bound.close()
        raise ValueError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    return bound
