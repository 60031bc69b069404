"""One process, one port: MCP at /mcp, the JSON API at /api, the web page at /, and what
operators watch (/metrics, /healthz, /readyz), all on one CurrentIndex that follows CURRENT.

The MCP SDK's streamable HTTP app takes /mcp and the lifespan (it runs the MCP session
manager); the FastAPI app with the API and the page takes every other path (`Split`), and the
Gate (lexkb.serve.gate) stands in front of both. uvicorn runs it with the MCP server's bounds
(lexkb.mcp.http: read deadline, head and body size, connections, sessions).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from lexkb.current import CurrentIndex
from lexkb.mcp.http import PATH as MCP_PATH
from lexkb.mcp.http import HttpSettings, run_bounded
from lexkb.mcp.server import build_server
from lexkb.serve.api import Service, add_error_handlers, router
from lexkb.serve.gate import Gate, Policy
from lexkb.serve.metrics import CONTENT_TYPE, Metrics, RouteLabels
from lexkb.serve.openapi import document
from lexkb.serve.ratelimit import ASKS_PER_HOUR, RateLimit
from lexkb.serve.store import Store

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("lexkb.serve")
STATIC = Path(__file__).resolve().parent / "static"
# The page loads nothing from elsewhere and runs no inline script (the Gate adds nosniff,
# no-referrer and DENY framing to every reply).
PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    ),
}


def build_app(
    root: str,
    store: Store,
    policy: Policy,
    settings: HttpSettings,
    asks_per_hour: int = ASKS_PER_HOUR,
) -> ASGIApp:
    """The whole service for the index at `root` (opened now: a bad root fails at start)."""
    from lexkb import __version__

    current = CurrentIndex(root)
    metrics = Metrics()
    metrics.serving(current.get().version)
    api = FastAPI(
        title="lexkb",
        version=__version__,
        summary="Citable search, lookup and verified answers over a lexkb snapshot",
        openapi_url="/api/openapi.json",
        docs_url=None,
        redoc_url=None,
    )
    api.openapi = lambda: document(api)  # type: ignore[method-assign]
    service = Service(current, store, RateLimit(asks_per_hour), metrics)
    api.state.service = service
    api.include_router(router)
    add_error_handlers(api)
    _add_operator_routes(api, current, store, metrics)
    # The page's files carry the page's headers: /static/index.html is the same page as /.
    api.mount("/static", WithHeaders(StaticFiles(directory=STATIC), PAGE_HEADERS), name="static")

    # MCP's `ask` is the API's ask: the same key's hourly allowance, recorded the same way.
    server = build_server(root, current=current, hosted={"ask": service.mcp_ask})
    mcp = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        max_request_body_size=settings.max_body_bytes,
        session_idle_timeout=settings.session_idle,
        max_sessions=settings.max_sessions,
        transport_security=policy.access().security(),
    )
    routes = RouteLabels(api.routes, [MCP_PATH])
    return Gate(Split(mcp, api), policy, store, metrics, settings.max_body_bytes, routes)


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
    @api.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers=PAGE_HEADERS)

    @api.get("/healthz", include_in_schema=False)
    def healthz() -> JSONResponse:
        return JSONResponse({"status": "ok"})

    @api.get("/readyz", include_in_schema=False)
    def readyz() -> JSONResponse:
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

    @api.get("/metrics", include_in_schema=False)
    def prometheus(request: Request) -> Response:
        metrics.serving(current.get().version)
        return Response(metrics.text(), media_type=CONTENT_TYPE)


def serve(
    root: str,
    host: str,
    port: int,
    store: Store,
    policy: Policy,
    asks_per_hour: int = ASKS_PER_HOUR,
) -> None:
    """Serve until stopped, under the MCP server's HTTP bounds (LEXKB_MCP_* settings)."""
    import sys

    settings = HttpSettings.from_env()
    app = build_app(root, store, policy, settings, asks_per_hour)
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    print(f"lexkb serve: http://{shown}:{port}/ (store: {store.where})", file=sys.stderr)
    run_bounded(app, host, port, settings)
