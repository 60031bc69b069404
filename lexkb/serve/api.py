"""The JSON API under /api: the query module's lookups, `ask` with conversations and feedback,
and verification, for applications that do not embed Python (OpenAPI at /api/openapi.json).

Each route runs in a worker thread (plain `def`), as the MCP tools do: finding the current
snapshot and querying it block. What a route returns is the query module's own `to_dict()`,
sent as it is (the Python API already bounds and types it; validating it again would cost more
than the search on a small index). A refusal is JSON with the reason: 400 for a bad argument,
404 for what does not exist (or is another key's), 422 for a body that does not fit its type,
429 past the ask limit with Retry-After.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from starlette.exceptions import HTTPException

from lexkb import answers
from lexkb.answers.ask import ask as ask_question
from lexkb.core.store.snapshot import SnapshotError
from lexkb.current import CurrentIndex
from lexkb.limits import DEFAULT_LIMITS, QueryError
from lexkb.mcp import tools
from lexkb.mcp.schemas import SearchFilters, chosen
from lexkb.mcp.server import Refused
from lexkb.serve import models
from lexkb.serve.metrics import Metrics
from lexkb.serve.ratelimit import RateLimit
from lexkb.serve.store import Store

log = logging.getLogger("lexkb.serve")
LISTED = 100  # conversations, feedback and traces per listing
RefQuery = Annotated[
    str,
    Query(min_length=1, max_length=DEFAULT_LIMITS.max_reference_chars, examples=["Article 6(1)"]),
]


class OverLimit(Refused):
    """An ask past the key's hourly allowance; `wait` is the Retry-After in seconds."""

    def __init__(self, per_window: int, wait: int) -> None:
        super().__init__(f"over {per_window} asks an hour: retry in {wait} s")
        self.wait = wait


@dataclass
class Service:
    """What every route reads: the snapshot CURRENT names, the store, the limits, metrics."""

    current: CurrentIndex
    store: Store
    asks: RateLimit
    metrics: Metrics

    def index(self):
        index = self.current.get()
        self.metrics.serving(index.version)
        return index

    def ask(
        self,
        who: str,
        question: str,
        filters: SearchFilters | None,
        turns: list[dict] | None = None,
        conversation_id: str | None = None,
    ) -> tuple[dict, str]:
        """One ask for `who`, whichever door it came through (/api/ask, a conversation, or
        MCP's `ask` tool): one hourly allowance and one record for all, so that no door asks
        for free or unseen. Counted only when answered (an ask refused for a bad filter, or
        one that failed, is given back); recorded with its trace, and returned as the stored
        turn (with the `answer_id` feedback names) and the version of the snapshot that
        answered. OverLimit past the allowance."""
        with self.asks.spending(who) as wait:
            if wait:
                self.metrics.rate_limited.inc()
                raise OverLimit(self.asks.per_window, wait)
            index = self.index()
            found = ask_question(index, question, filters=chosen(filters), turns=turns)
            answer = found.to_dict()
        self.metrics.answer(answer)
        return self.store.record_answer(who, answer, conversation_id), index.version

    def mcp_ask(self, state: Mapping[str, Any], arguments: dict[str, Any]) -> dict:
        """MCP's `ask` under `lexkb serve` (lexkb.mcp.server.Hosted): the caller is the key
        the Gate found for the request; the reply is the tool's own, the Answer as ask.json
        gives it (which admits no other field: its record's id is on the admin page)."""
        who = state.get("owner")
        if not who:  # the Gate names an owner for every /mcp request; never ask as no one
            raise Refused("this request carries no API key")
        turn, _ = self.ask(who, arguments["question"], arguments.get("filters"))
        return turn["answer"]


def service(request: Request) -> Service:
    return request.app.state.service


def owner(request: Request) -> str:
    return request.scope["state"]["owner"]


def _sent(payload: Any, index=None) -> JSONResponse:
    body = payload.to_dict() if hasattr(payload, "to_dict") else payload
    headers = {"X-Lexkb-Snapshot": index.version} if index is not None else None
    return JSONResponse(body, headers=headers)


def _not_found(what: str) -> HTTPException:
    return HTTPException(404, f"no {what} of yours with that id")


router = APIRouter(prefix="/api")


@router.post("/search", summary="ranked paragraphs, each a citation")
def search(body: models.SearchRequest, request: Request) -> JSONResponse:
    index = service(request).index()
    found = tools.search(index, **dict(body))
    return _sent(found, index)


@router.get("/get", summary="a paragraph by chunk id or reference, with how it matched")
def get(request: Request, reference: RefQuery) -> JSONResponse:
    index = service(request).index()
    return _sent(tools.get(index, reference), index)


@router.post("/hop", summary="paragraphs reached along citations, with paths")
def hop(body: models.HopRequest, request: Request) -> JSONResponse:
    index = service(request).index()
    return _sent(tools.hop(index, **dict(body)), index)


@router.get("/documents", summary="every document with its catalog entry")
def documents(request: Request) -> JSONResponse:
    index = service(request).index()
    return _sent(tools.documents(index), index)


@router.get("/documents/{document}/tree", summary="a document's section tree and paragraphs")
def document_tree(document: str, request: Request) -> JSONResponse:
    from lexkb.export import to_tree

    index = service(request).index()
    info, paragraphs = _document(index, document)
    return _sent(to_tree(info, paragraphs, index.version), index)


@router.get(
    "/documents/{document}/markdown",
    summary="a document as Markdown",
    response_class=PlainTextResponse,
)
def document_markdown(document: str, request: Request) -> PlainTextResponse:
    from lexkb.export import to_markdown

    index = service(request).index()
    info, paragraphs = _document(index, document)
    return PlainTextResponse(
        to_markdown(info, paragraphs, index.version),
        media_type="text/markdown; charset=utf-8",
        headers={"X-Lexkb-Snapshot": index.version},
    )


@router.get("/snapshots", summary="the published snapshots, and which one is served")
def snapshots(request: Request) -> JSONResponse:
    from lexkb.core.store import index_root

    root = _local_root(request)
    index = service(request).index()
    listed = index_root.list_snapshots(root)
    return _sent(
        {
            "served": index.version,
            "snapshots": [{**vars(s), "path": None} for s in listed],
        },
        index,
    )


@router.get("/snapshots/diff", summary="what changed between two snapshots")
def snapshots_diff(
    request: Request,
    old: Annotated[str, Query(max_length=100)] = "previous",
    new: Annotated[str, Query(max_length=100)] = "CURRENT",
) -> JSONResponse:
    from lexkb.core.store import index_root
    from lexkb.core.store.diff import diff

    root = _local_root(request)
    # Versions are resolved here with the root named "the index root": the reply is a key
    # holder's, and where the index lies on the server's disk is the operator's to know.
    known, current = index_root.versions(root), index_root.current_version(root)
    try:
        old, new = (
            index_root.pick_version(v, known, current, "the index root") for v in (old, new)
        )
    except SnapshotError as exc:  # a version that names no snapshot
        raise HTTPException(404, str(exc)) from exc
    try:
        return _sent(diff(root, old, new))
    except (SnapshotError, OSError) as exc:  # a snapshot that cannot be read: say which only
        log.warning("snapshots diff %s %s: %s", old, new, exc)
        raise HTTPException(404, f"snapshot {old} or {new} cannot be read") from exc


@router.post("/ask", summary="a cited, verified answer")
def ask(body: models.AskRequest, request: Request) -> JSONResponse:
    return _ask(request, body, None)


@router.post("/conversations", summary="start a conversation")
def create_conversation(body: models.ConversationRequest, request: Request) -> JSONResponse:
    return JSONResponse(service(request).store.create_conversation(owner(request), body.title))


@router.get("/conversations", summary="my conversations")
def list_conversations(request: Request) -> JSONResponse:
    return JSONResponse(service(request).store.conversations(owner(request), LISTED))


@router.get("/conversations/{conversation_id}", summary="one of my conversations with its turns")
def get_conversation(conversation_id: str, request: Request) -> JSONResponse:
    found = service(request).store.conversation(owner(request), _bounded(conversation_id))
    if found is None:
        raise _not_found("conversation")
    return JSONResponse(found)


@router.delete("/conversations/{conversation_id}", summary="delete one of my conversations")
def delete_conversation(conversation_id: str, request: Request) -> JSONResponse:
    if not service(request).store.delete_conversation(owner(request), _bounded(conversation_id)):
        raise _not_found("conversation")
    return JSONResponse({"deleted": conversation_id})


@router.post(
    "/conversations/{conversation_id}/ask",
    summary="continue a conversation: a follow-up reads the turns before it",
)
def continue_conversation(
    conversation_id: str, body: models.AskRequest, request: Request
) -> JSONResponse:
    return _ask(request, body, _bounded(conversation_id))


@router.post("/feedback", summary="feedback on one of my answers")
def feedback(body: models.FeedbackRequest, request: Request) -> JSONResponse:
    item = service(request).store.add_feedback(
        owner(request), body.answer_id, body.rating, body.comment
    )
    if item is None:
        raise _not_found("answer")
    return JSONResponse(item)


@router.post("/verify/citations", summary="does each cited paragraph support its claim?")
def verify_citations(body: models.VerifyCitationsRequest, request: Request) -> JSONResponse:
    index = service(request).index()
    items = [c.model_dump(exclude_none=True) for c in body.citations]
    return _sent(answers.verify_citations(index, items, body.threshold), index)


@router.post("/verify/entities", summary="are an answer's names and numbers in its sources?")
def verify_entities(body: models.VerifyEntitiesRequest, request: Request) -> JSONResponse:
    index = service(request).index()
    found = answers.verify_entities(index, body.entities, body.source_ids, body.threshold)
    return _sent(found, index)


@router.get("/me", summary="who this key is, and its asks left this hour")
def me(request: Request) -> JSONResponse:
    state, served = request.scope["state"], service(request)
    return JSONResponse(
        {
            "key_name": state["key_name"],
            "admin": state["admin"],
            "asks_per_hour": served.asks.per_window,
            "asks_remaining": served.asks.remaining(owner(request)),
            "snapshot_version": served.index().version,
        }
    )


@router.get("/admin/feedback", summary="everyone's feedback, newest first (admin)")
def admin_feedback(request: Request) -> JSONResponse:
    return JSONResponse(service(request).store.feedback(None, LISTED))


@router.get("/admin/answers", summary="the last answers with their traces (admin)")
def admin_answers(
    request: Request, limit: Annotated[int, Query(ge=1, le=LISTED)] = 50
) -> JSONResponse:
    return JSONResponse(service(request).store.recent_answers(limit))


def _ask(request: Request, body: models.AskRequest, conversation_id: str | None) -> JSONResponse:
    served, who = service(request), owner(request)
    turns = None
    if conversation_id is not None:
        if not served.store.owns(who, conversation_id):
            raise _not_found("conversation")
        turns = served.store.turns(who, conversation_id)
    try:
        turn, version = served.ask(who, body.question, body.filters, turns, conversation_id)
    except OverLimit as exc:
        return JSONResponse(
            {"error": str(exc)}, status_code=429, headers={"Retry-After": str(exc.wait)}
        )
    return JSONResponse(turn, headers={"X-Lexkb-Snapshot": version})


def _document(index, document: str):
    """A document's catalog entry and paragraphs; 404 when the index has no such document."""
    try:
        return index.document_paragraphs(_bounded(document))
    except (KeyError, ValueError) as exc:
        raise HTTPException(404, str(exc.args[0] if exc.args else exc)) from exc


def _bounded(value: str) -> str:
    if not 0 < len(value) <= DEFAULT_LIMITS.max_reference_chars:
        raise QueryError(f"1 to {DEFAULT_LIMITS.max_reference_chars} characters, not {len(value)}")
    return value


def _local_root(request: Request) -> Path:
    root = service(request).current.root
    if not isinstance(root, Path):
        raise QueryError("snapshots are listed and compared for a local index root only")
    return root


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
        first = errors[0] if errors else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        return JSONResponse(
            {
                "error": f"{where}: {first.get('msg', 'invalid')}" if where else "invalid body",
                "detail": [{"loc": e.get("loc"), "msg": e.get("msg")} for e in errors],
            },
            status_code=422,
        )

    for kind in (QueryError, ValueError, KeyError, SnapshotError):
        app.add_exception_handler(kind, refused)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid)
