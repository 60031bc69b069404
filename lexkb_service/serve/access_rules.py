"""What each route of `lexkb serve` needs (lexkb_service.mcp.access.Access: OPEN, KEY, ADMIN),
declared where the route is written, and read back from the app by the gate.

- `requires(Access.KEY)` is a FastAPI dependency, placed on a router
  (`APIRouter(dependencies=[requires(...)])`) or on a route (`dependencies=[...]`). It records
  the access on the route, and checks, when the route runs, that the caller the gate left in the
  request's state may use it: a route served without the gate (a test's app) still refuses.
  A route that declares several (its router's and its own) needs the strictest.
- `declare(route, access)` does the same for what has no dependencies: a mount (the page's
  files), a plain Starlette route.
- `RouteTable` reads every route's declaration when the app is assembled, mounted sub-apps'
  routes included (a mount that declares none is walked into), and refuses to build, naming
  each route, when one declares none (`UndeclaredAccess`): an admin route written without its
  declaration stops the service at start instead of serving everyone. Per request, it matches
  the path with each route's own matching (Starlette's, as the app will) and gives the gate the
  route's access and the label its metrics are counted under: the route's template, never the
  path (a path no route matches is "unknown", and needs a key).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import Request, params
from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute, Match, Mount

from lexkb_service.mcp.access import Access
from lexkb_service.serve.metrics import UNKNOWN_ROUTE

try:  # FastAPI 0.165 on keeps an included router as one route; this walks what it holds
    from fastapi.routing import iter_route_contexts
except ImportError:  # earlier versions copy each included route into the app's list

    def iter_route_contexts(routes: Iterable[BaseRoute]) -> Iterator[BaseRoute]:  # type: ignore[misc]
        return iter(routes)


if TYPE_CHECKING:
    from starlette.types import Scope

# Where `declare` records a route's access.
ATTRIBUTE = "lexkb_access"


class Requires:
    """The dependency `requires` places: its access, read back by `declared`, and the check."""

    def __init__(self, access: Access) -> None:
        self.access = access

    async def __call__(self, request: Request) -> None:
        refused = self.access.refusal(request.scope.get("state") or {})
        if refused is not None:
            raise HTTPException(refused.status, refused.reason, refused.headers or None)

    def __repr__(self) -> str:
        return f"requires({self.access.name})"


def requires(access: Access) -> params.Depends:
    """The dependency that declares what a route (or every route of a router) needs."""
    # What fastapi.Depends returns, made directly: Depends is typed Any, to fit any default.
    return params.Depends(Requires(access))


def declare(route: BaseRoute, access: Access) -> BaseRoute:
    """`route` (a mount, a plain Starlette route) declared to need `access`."""
    setattr(route, ATTRIBUTE, access)
    return route


def declared(route: Any) -> Access | None:
    """The access `route` declares (the strictest of several), or None."""
    found = [
        dependency.dependency.access
        for dependency in getattr(route, "dependencies", None) or ()
        if isinstance(getattr(dependency, "dependency", None), Requires)
    ]
    for holder in (route, getattr(route, "original_route", None)):
        if isinstance(getattr(holder, ATTRIBUTE, None), Access):
            found.append(getattr(holder, ATTRIBUTE))
    return Access.strictest(found) if found else None


class UndeclaredAccess(ValueError):
    """Routes that declare no access: the app is not served."""

    def __init__(self, routes: list[str]) -> None:
        super().__init__(
            "every route must declare its access (requires(Access.OPEN | KEY | ADMIN) on it "
            f"or its router, or declare() on a mount); these declare none: {'; '.join(routes)}"
        )
        self.routes = routes


@dataclass(frozen=True)
class _Entry:
    route: Any  # what Starlette matches: a route, an included route's context, a mount
    label: str  # its template, the mount's own path included
    methods: str  # for the listing: "GET", "GET, HEAD", "*"
    access: Access | None  # None: an undeclared mount, whose routes declare theirs
    inner: tuple[_Entry, ...] = ()
    # The route's path pattern, to pass over it cheaply when the path cannot match (a route's
    # own matching, through an included router's context, costs a few microseconds).
    pattern: re.Pattern[str] | None = None


class RouteTable:
    """Every route of an app with the access it declares, and the whole paths of apps served
    beside it (`paths`: MCP at /mcp); UndeclaredAccess when any route declares none."""

    def __init__(self, routes: Iterable[BaseRoute], paths: Mapping[str, Access] = {}) -> None:
        missing: list[str] = []
        entries = list(_entries(routes, "", missing))
        for path, access in paths.items():
            entries.append(_Entry(_WholePath(path), path, "*", access))
        if missing:
            raise UndeclaredAccess(missing)
        self._entries = tuple(entries)
        self.labels = frozenset(_labels(self._entries)) | {UNKNOWN_ROUTE}

    def find(self, scope: Scope) -> tuple[str, Access]:
        """The label and access of the route a request goes to: the first that matches its
        path and method, else the first that matches its path (the app answers 405), else
        ("unknown", KEY)."""
        return _find(scope, self._entries) or (UNKNOWN_ROUTE, Access.KEY)

    def declarations(self) -> list[tuple[str, str, Access]]:
        """(methods, path, access) of every route, mounted ones' included."""
        return list(_declarations(self._entries))


class _WholePath:
    """One path, any method: an app served beside the routes (MCP)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        return (Match.FULL if scope["path"] == self.path else Match.NONE), {}


def _entries(routes: Iterable[Any], prefix: str, missing: list[str]) -> Iterator[_Entry]:
    for route in iter_route_contexts(list(routes)):
        path = getattr(route, "path", None) or ""
        methods = ", ".join(sorted(getattr(route, "methods", None) or ())) or "*"
        access = declared(route)
        inner: tuple[_Entry, ...] = ()
        mounted = getattr(route, "original_route", route)
        if access is None and isinstance(mounted, Mount) and mounted.routes:
            inner = tuple(_entries(mounted.routes, prefix + path, missing))
        elif access is None:
            missing.append(f"{prefix + path or repr(route)} ({methods})")
        pattern = getattr(route, "path_regex", None)
        pattern = pattern if isinstance(pattern, re.Pattern) else None
        yield _Entry(route, prefix + path, methods, access, inner, pattern)


def _find(scope: Scope, entries: tuple[_Entry, ...]) -> tuple[str, Access] | None:
    partial = None
    path = None if scope.get("root_path") else scope["path"]
    for entry in entries:
        if path is not None and entry.pattern is not None and not entry.pattern.match(path):
            continue
        match, child = entry.route.matches(scope)
        if match is Match.NONE:
            continue
        if entry.access is None:  # a mount whose routes declare theirs: Starlette goes in
            return _find({**scope, **child}, entry.inner) or (UNKNOWN_ROUTE, Access.KEY)
        if match is Match.FULL:
            return entry.label, entry.access
        partial = partial or (entry.label, entry.access)
    return partial


def _labels(entries: Iterable[_Entry]) -> Iterator[str]:
    for entry in entries:
        yield entry.label
        yield from _labels(entry.inner)


def declarations(routes: Iterable[BaseRoute]) -> list[tuple[str, str, Access]]:
    """(methods, path, access) of each of `routes` that declares its access. Unlike
    RouteTable, which refuses an app with an undeclared route, it leaves those out: what the
    OpenAPI document of any app, a test's included, reads to say what each operation needs."""
    return list(_declarations(_entries(routes, "", [])))


def _declarations(entries: Iterable[_Entry]) -> Iterator[tuple[str, str, Access]]:
    for entry in entries:
        if entry.access is not None:
            yield entry.methods, entry.label, entry.access
        yield from _declarations(entry.inner)
