"""/api/v1, the JSON API's current version: the lookups, documents, snapshots and what changed
between two, verification, and who the caller is (lexkb_service.serve.v1_people has what users
write: asks, conversations, feedback, and the admin's reading of them).

What v1 holds to, route by route:
- every listing is a page, `limit` and `cursor` in, `{"items", "next_cursor"}` out
  (lexkb_service.serve.paging); a diff names its documents with their titles in one reply, and pages
  its paragraphs and citations, one part at a time;
- a reference that names nothing, or fits units of several documents alike, is answered
  alike by `get` and `hop`: 404 with the lookup that says why (its reason, the nearest unit,
  the closest references, or the candidates in `alternatives`);
- each route has an operation id, the name of its method in lexkb_service.client;
- every route needs a key (declared on the router: lexkb_service.serve.access_rules).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response

from lexkb_service.mcp import tools
from lexkb_service.mcp.access import Access
from lexkb_service.serve import api, models
from lexkb_service.serve.access_rules import requires
from lexkb_service.serve.api import RefQuery, diff_between, local_root, sent, service
from lexkb_service.serve.paging import PAGE, Cursor, Limit, envelope, position_page
from lexkb_service.serve.versions import V1

if TYPE_CHECKING:
    from lexkb.index import Index
    from lexkb.results import Lookup

router = APIRouter(prefix=V1, dependencies=[requires(Access.KEY)])
Version = Annotated[
    str, Query(max_length=100, description="a version, a prefix, previous, CURRENT")
]
# The parts of a diff too long for one reply, each paged on its own.
DiffPart = Literal[
    "chunks_added", "chunks_removed", "chunks_changed", "edges_added", "edges_removed"
]


class Same(NamedTuple):
    """A route whose work is one of lexkb_service.serve.api's functions, mounted on a v1 router as
    it is: its request and reply have nothing of v1's conventions (pages, 201, ISO times) to follow.
    The summary is the route's own line in the OpenAPI document."""

    method: str
    path: str
    endpoint: Callable[..., Any]
    operation_id: str
    summary: str
    response_class: type[Response] = JSONResponse


SAME = (
    Same("POST", "/search", api.search, "search", "ranked paragraphs, each a citation"),
    Same("GET", "/documents/{document}/tree", api.document_tree, "document_tree",
         "a document's section tree and paragraphs"),
    Same("GET", "/documents/{document}/markdown", api.document_markdown, "document_markdown",
         "a document as Markdown", api.MarkdownResponse),
    Same("POST", "/verify/citations", api.verify_citations, "verify_citations",
         "does each cited paragraph support its claim?"),
    Same("POST", "/verify/entities", api.verify_entities, "verify_entities",
         "are an answer's names and numbers in its sources?"),
    Same("GET", "/me", api.me, "me", "who this key is, and its asks left this hour"),
)  # fmt: skip


def add_same(target: APIRouter, routes: tuple[Same, ...]) -> None:
    """Each of `routes` on `target`, under its operation id and summary."""
    for route in routes:
        target.add_api_route(
            route.path, route.endpoint, methods=[route.method], operation_id=route.operation_id,
            summary=route.summary, response_class=route.response_class,
        )  # fmt: skip


def unknown_reference(lookup: Lookup, index: Index) -> JSONResponse:
    """404 for a reference that names no unit, or several alike, `get`'s and `hop`'s alike: the
    lookup (how it matched, why not, the nearest unit, the closest references, the candidates)
    with the reason as its error."""
    body = {**lookup.to_dict(), "error": lookup.reason}
    return JSONResponse(body, status_code=404, headers={"X-Lexkb-Snapshot": index.version})


@router.get(
    "/get",
    operation_id="get_reference",
    summary="a paragraph by chunk id or reference, with how it matched (404 with the lookup: "
    "it names nothing, or several documents' units, each in `alternatives`)",
)
def get(request: Request, reference: RefQuery) -> JSONResponse:
    index = service(request).index()
    found = tools.get(index, reference)
    return sent(found, index) if found.found else unknown_reference(found, index)


@router.post(
    "/hop",
    operation_id="hop",
    summary="paragraphs reached along citations, with paths (404 with the lookup, as `get`: "
    "the start names nothing, or several documents' units)",
)
def hop(body: models.HopRequest, request: Request) -> JSONResponse:
    index = service(request).index()
    try:
        return sent(tools.hop(index, **dict(body)), index)
    except (KeyError, ValueError):
        # Not a unit to walk from: none, or several (an ambiguous reference, refused as a bad
        # argument by Index.hop). Answered as `get` answers it; where `get` finds one unit,
        # walked from that unit (an argument refused for itself is refused again there).
        lookup = index.get(body.start)
        if not lookup.found or lookup.hit is None:
            return unknown_reference(lookup, index)
        walked = tools.hop(index, **{**dict(body), "start": lookup.hit.chunk_id})
        return sent(walked, index)


@router.get("/documents", operation_id="list_documents", summary="the documents, a page at a time")
def documents(request: Request, limit: Limit = PAGE, cursor: Cursor = None) -> JSONResponse:
    index = service(request).index()
    page, following = position_page("documents", index.version, cursor, limit, index.documents())
    return sent(envelope(page, following), index)


@router.get(
    "/snapshots",
    operation_id="list_snapshots",
    summary="the published snapshots, newest first, a page at a time (X-Lexkb-Snapshot: served)",
)
def snapshots(request: Request, limit: Limit = PAGE, cursor: Cursor = None) -> JSONResponse:
    from lexkb.core.store import index_root

    index = service(request).index()
    listed = [
        {k: v for k, v in vars(s).items() if k != "path"}
        for s in reversed(index_root.list_snapshots(local_root(request)))
    ]
    of = ",".join(s["version"] for s in listed)
    page, following = position_page("snapshots", of, cursor, limit, listed)
    return sent(envelope(page, following), index)


@router.get(
    "/snapshots/diff",
    operation_id="snapshot_diff",
    summary="what changed between two snapshots: the documents by name, and counts of the rest",
)
def snapshot_diff(
    request: Request, old: Version = "previous", new: Version = "CURRENT"
) -> JSONResponse:
    change = diff_between(request, old, new)
    titles = _titles(local_root(request), change.old, change.new)

    def named(keys: list[str]) -> list[dict[str, str]]:
        return [{"document_key": k, "title": titles.get(k, "")} for k in keys]

    return JSONResponse(
        {
            "old": change.old,
            "new": change.new,
            "summary": change.summary(),
            "documents_added": named(change.documents_added),
            "documents_removed": named(change.documents_removed),
            "documents_changed": named(change.documents_changed),
            "metadata_changed": change.metadata_changed,
        }
    )


@router.get(
    "/snapshots/diff/{part}",
    operation_id="snapshot_diff_part",
    summary="one part of what changed between two snapshots (paragraphs, citations), paged",
)
def snapshot_diff_part(
    request: Request,
    part: DiffPart,
    old: Version = "previous",
    new: Version = "CURRENT",
    limit: Limit = PAGE,
    cursor: Cursor = None,
) -> JSONResponse:
    change = diff_between(request, old, new)
    items = change.to_dict()[part] if part == "chunks_changed" else getattr(change, part)
    listing = f"the diff's {part}"
    page, following = position_page(listing, f"{change.old}..{change.new}", cursor, limit, items)
    return JSONResponse(envelope(page, following))


add_same(router, SAME)


@lru_cache(maxsize=8)
def _titles(root: Path, old: str, new: str) -> dict[str, str]:
    """Each document's title in `new`, else in `old` (a document removed keeps its last)."""

    from lexkb.core.store import snapshot as snap

    titles: dict[str, str] = {}
    for version in (old, new):
        loaded = snap.load(snap.snapshot_dir(root, version))
        frame = loaded.read_table("documents", columns=["document_key", "title"])
        titles.update(zip(frame["document_key"], frame["title"].fill_null(""), strict=True))
    return titles
