"""Every refusal of the JSON API as JSON `{"error": reason}`, the reason in words a person
reads: 400 for a bad argument, 404 for what does not exist, 422 for a body or parameter that
does not fit its type (with each field's fault in `detail`), 429 when busy, 503 while the store
cannot be reached, and 500, saying nothing of what failed, for anything else.

Pydantic's own words say where the fault is in its terms ("0: JSON decode error", "Input should
be a valid dictionary or object to extract fields from"); `explained` says it in the request's.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.responses import Response

from lexkb.core.store.snapshot import SnapshotError
from lexkb.limits import QueryError
from lexkb_service.mcp.admission import Busy
from lexkb_service.mcp.ratelimit import OverLimit
from lexkb_service.serve.gate import RETRY_AFTER
from lexkb_service.serve.store import StoreUnavailable

log = logging.getLogger("lexkb_service.serve")
E = TypeVar("E", bound=Exception)


def explained(errors: Sequence[Mapping[str, Any]]) -> str:
    """The first of a request's validation errors in words, and how many more there are."""
    if not errors:
        return "the request does not fit this route"
    first = errors[0]
    said = _one(str(first.get("type", "")), tuple(first.get("loc", ())), first)
    more = len(errors) - 1
    return f"{said} (and {more} more: see detail)" if more else said


def _one(kind: str, loc: tuple[int | str, ...], error: Mapping[str, Any]) -> str:
    if kind == "json_invalid":
        why = (error.get("ctx") or {}).get("error", "it cannot be read")
        at = f", at character {loc[1]}" if len(loc) > 1 else ""
        return f"the body is not valid JSON ({why}{at})"
    if loc == ("body",):
        sent = error.get("input")
        if kind == "missing":
            return "this route takes a JSON object as its body, and none was sent"
        if isinstance(sent, bytes):
            return "the body must be JSON, sent with Content-Type: application/json"
        return f"the body must be a JSON object of this route's fields, not {_kind_of(sent)}"
    name = ".".join(str(part) for part in loc[1:])
    where = {"body": name, "query": f"the parameter {name}", "path": f"{name} in the path"}
    subject = where.get(str(loc[0]) if loc else "", f"{'.'.join(map(str, loc))}")
    if kind == "missing":
        return f"{subject}: required, and not given"
    if kind == "extra_forbidden":
        return f"{subject}: not a field this route takes"
    return f"{subject}: {error.get('msg', 'not valid')}"


def _kind_of(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    return "null" if value is None else type(value).__name__


def add_error_handlers(app: FastAPI) -> None:
    """Every refusal as JSON {"error": reason}."""

    async def refused(_: Request, exc: Exception) -> JSONResponse:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        status = 404 if isinstance(exc, KeyError) else 400
        return JSONResponse({"error": str(message)}, status_code=status)

    async def http_error(_: Request, exc: HTTPException) -> JSONResponse:
        # Its headers too: a 405 says which methods are allowed (Allow).
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code, headers=exc.headers)

    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        return JSONResponse(
            {
                "error": explained(errors),
                "detail": [{"loc": e.get("loc"), "msg": e.get("msg")} for e in errors],
            },
            status_code=422,
        )

    async def busy(_: Request, exc: Exception) -> JSONResponse:
        wait = getattr(exc, "wait", 1)
        return JSONResponse(
            {"error": str(exc)}, status_code=429, headers={"Retry-After": str(wait)}
        )

    async def unavailable(_: Request, exc: Exception) -> JSONResponse:
        return JSONResponse(
            {"error": str(exc)}, status_code=503, headers={"Retry-After": str(RETRY_AFTER)}
        )

    async def failed(request: Request, exc: Exception) -> JSONResponse:
        # Starlette's own answer is the plain text "Internal Server Error"; a client of a JSON
        # API reads JSON. What failed goes to the log (Starlette logs the traceback after).
        log.error("%s %s failed: %s: %s", request.method, request.url.path,
                  type(exc).__name__, exc)  # fmt: skip
        return JSONResponse({"error": "internal error (the server's log says what)"}, 500)

    for kind in (QueryError, ValueError, KeyError, SnapshotError):
        app.add_exception_handler(kind, refused)
    app.add_exception_handler(StoreUnavailable, unavailable)
    app.add_exception_handler(Busy, busy)
    app.add_exception_handler(OverLimit, busy)
    _add_handler(app, HTTPException, http_error)
    _add_handler(app, RequestValidationError, invalid)
    app.add_exception_handler(Exception, failed)


def _add_handler(
    app: FastAPI, kind: type[E], handler: Callable[[Request, E], Awaitable[Response]]
) -> None:
    """`handler` for the exceptions of class `kind`, each handler's argument typed as the class
    it is added for."""
    # Starlette types every handler as taking any Exception, though it calls one only with an
    # instance of the class it was added for (its lookup goes by the exception's classes).
    app.add_exception_handler(
        kind, cast(Callable[[Request, Exception], Awaitable[Response]], handler)
    )
