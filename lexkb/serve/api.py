"""The JSON API's first routes, under /api, kept with their first shapes for the clients and
the page that call them (each reply says it is deprecated: lexkb.serve.versions; /api/v1 is the
API's current version, lexkb.serve.v1), and what both versions share: the Service every route
reads, and the helpers that run a route's work, send its reply and refuse what is not there.

Each route runs in a worker thread, as the MCP tools do: finding the current snapshot and
querying it block. Routes whose MCP tool has a cost (ask, a reranked search, verify_citations:
lexkb.mcp.tools) run in the same pools as MCP's calls, in the costly one, counted against the
caller's key (lexkb.mcp.admission); the rest are plain `def`s in the local worker threads. What a
route returns is the query module's own `to_dict()`, sent as it is (the Python API already bounds
and types it; validating it again would cost more than the search on a small index). A refusal
is JSON with the reason (lexkb.serve.errors); 409 past the conversations a key may keep.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import anyio
from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse
from starlette.exceptions import HTTPException

from lexkb import answers, defaults
from lexkb.answers.ask import Answer, AnswerCache
from lexkb.answers.ask import ask as ask_question
from lexkb.core.store.snapshot import SnapshotError
from lexkb.current import CurrentIndex
from lexkb.limits import DEFAULT_LIMITS, QueryError
from lexkb.mcp import degraded, tools
from lexkb.mcp.admission import KeyBudget
from lexkb.mcp.pools import Pools
from lexkb.mcp.schemas import SearchFilters, chosen
from lexkb.mcp.server import Refused
from lexkb.serve import models
from lexkb.serve.metrics import Metrics
from lexkb.serve.ratelimit import RateLimit
from lexkb.serve.store import CONVERSATIONS_PER_KEY, Store, Trace

if TYPE_CHECKING:
    from lexkb.core.store.diff import Diff

log = logging.getLogger("lexkb.serve")
LISTED = defaults.PAGE  # conversations, feedback and traces per listing
MAX_OFFSET = 1_000_000
DIFFS_KEPT = 4  # diffs between two snapshots kept in memory, for their pages
T = TypeVar("T")
RefQuery = Annotated[
    str,
    Query(min_length=1, max_length=DEFAULT_LIMITS.max_reference_chars, examples=["Article 6(1)"]),
]


class OverLimit(Refused):
    """An ask past the key's hourly allowance; `wait` is the Retry-After in seconds."""

    def __init__(self, per_window: int, wait: int) -> None:
        super().__init__(f"over {per_window} asks an hour: retry in {wait} s")
        self.wait = wait


class OwnersCache(AnswerCache):
    """One owner's view of the service's answer cache: its entries are keyed by the owner too.

    `ask`'s own cache is keyed by the question, filters and snapshot, so on a service with many
    keys one key's answer came back to another marked `from_cache` (and faster): it told a key
    that someone else had asked the same question. Under lexkb serve each key finds only the
    answers it was given itself; the entries still share one bounded store (`shared`)."""

    def __init__(self, shared: AnswerCache, owner: str) -> None:
        self.shared = shared
        self.owner = owner
        self.max_entries = shared.max_entries

    def _mine(self, key: str) -> str:
        return json.dumps([self.owner, key])

    def get(self, key: str, version: str | None, seconds: float) -> Answer | None:
        return self.shared.get(self._mine(key), version, seconds)

    def put(self, key: str, answer: Answer) -> None:
        self.shared.put(self._mine(key), answer)

    def clear(self) -> None:
        self.shared.clear()


@dataclass
class Service:
    """What every route reads: the snapshot CURRENT names, the store, the limits, metrics,
    and the answers given, cached per key (OwnersCache)."""

    current: CurrentIndex
    store: Store
    asks: RateLimit
    metrics: Metrics
    answers: AnswerCache = field(default_factory=AnswerCache)
    pools: Pools = field(default_factory=Pools.sized)
    budget: KeyBudget = field(default_factory=KeyBudget)
    conversations_per_key: int = CONVERSATIONS_PER_KEY

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
            cache = OwnersCache(self.answers, who)
            seen: list[tuple[str, list | None]] = []
            started = time.perf_counter()
            found = ask_question(
                index, question, filters=chosen(filters), cache=cache, turns=turns,
                observe=lambda searched, hits: seen.append((searched, hits)),
            )  # fmt: skip
            trace = traced(seen, time.perf_counter() - started)
            answer = degraded.noted(found, question).to_dict()
        self.metrics.answer(answer)
        return self.store.record_answer(who, answer, conversation_id, trace), index.version

    def mcp_ask(self, state: Mapping[str, Any], arguments: dict[str, Any]) -> dict:
        """MCP's `ask` under `lexkb serve` (lexkb.mcp.server.Hosted): the caller is the key
        the Gate found for the request; the reply is the tool's own, the Answer as ask.json
        gives it (which admits no other field: its record's id is on the admin page)."""
        who = state.get("owner")
        if not who:  # the Gate names an owner for every /mcp request; never ask as no one
            raise Refused("this request carries no API key")
        turn, _ = self.ask(who, arguments["question"], arguments.get("filters"))
        return turn["answer"]


def traced(seen: list[tuple[str, list | None]], seconds: float) -> Trace:
    """An ask's Trace from what `ask` observed: the text searched and each candidate's chunk,
    citation, rank score, calibrated relevance and (reranked) chance of answering."""
    searched, hits = seen[0] if seen else (None, None)
    candidates = [
        {"chunk_id": h.chunk_id, "citation": h.citation, "score": h.score,
         "relevance": h.relevance, "answers": h.answers}
        for h in hits or ()
    ]  # fmt: skip
    return Trace(searched, candidates, round(seconds, 4))


def service(request: Request) -> Service:
    return request.app.state.service


def owner(request: Request) -> str:
    return request.scope["state"]["owner"]


def sent(payload: Any, index=None) -> JSONResponse:
    body = payload.to_dict() if hasattr(payload, "to_dict") else payload
    headers = {"X-Lexkb-Snapshot": index.version} if index is not None else None
    return JSONResponse(body, headers=headers)


def not_found(what: str) -> HTTPException:
    return HTTPException(404, f"no {what} of yours with that id")


async def run_costly(
    request: Request, tool: str, arguments: Mapping[str, Any], work: Callable[[], T]
) -> T:
    """`work` in a worker thread of the pool MCP's `tool` runs in, given these `arguments`: a
    costly call in the costly pool, counted against the caller's key (Busy, a 429, when the key
    has too much in progress: lexkb.mcp.admission); a cheap one in the local pool."""
    served = service(request)
    found = tools.BY_NAME[tool]
    cost = found.cost_of(arguments)
    limiter = served.pools.for_tool(found.outbound, cost)
    with served.budget.holding(owner(request), cost):
        return await anyio.to_thread.run_sync(work, limiter=limiter)


router = APIRouter(prefix="/api")


@router.post("/search", summary="ranked paragraphs, each a citation")
async def search(body: models.SearchRequest, request: Request) -> JSONResponse:
    def work() -> JSONResponse:
        index = service(request).index()
        return sent(tools.search(index, **dict(body)), index)

    return await run_costly(request, "search", dict(body), work)


@router.get("/get", summary="a paragraph by chunk id or reference, with how it matched")
def get(request: Request, reference: RefQuery) -> JSONResponse:
    index = service(request).index()
    return sent(tools.get(index, reference), index)


@router.post("/hop", summary="paragraphs reached along citations, with paths")
def hop(body: models.HopRequest, request: Request) -> JSONResponse:
    index = service(request).index()
    return sent(tools.hop(index, **dict(body)), index)


@router.get("/documents", summary="every document with its catalog entry")
def documents(request: Request) -> JSONResponse:
    index = service(request).index()
    return sent(tools.documents(index), index)


@router.get("/documents/{document}/tree", summary="a document's section tree and paragraphs")
def document_tree(document: str, request: Request) -> JSONResponse:
    from lexkb.export import to_tree

    index = service(request).index()
    info, paragraphs = document_of(index, document)
    return sent(to_tree(info, paragraphs, index.version), index)


class MarkdownResponse(PlainTextResponse):
    """Markdown, documented as what it is (text/markdown; charset=utf-8)."""

    media_type = "text/markdown"


@router.get(
    "/documents/{document}/markdown",
    summary="a document as Markdown",
    response_class=MarkdownResponse,
)
def document_markdown(document: str, request: Request) -> MarkdownResponse:
    from lexkb.export import to_markdown

    index = service(request).index()
    info, paragraphs = document_of(index, document)
    return MarkdownResponse(
        to_markdown(info, paragraphs, index.version),
        headers={"X-Lexkb-Snapshot": index.version},
    )


@router.get("/snapshots", summary="the published snapshots, and which one is served")
def snapshots(request: Request) -> JSONResponse:
    from lexkb.core.store import index_root

    root = local_root(request)
    index = service(request).index()
    listed = index_root.list_snapshots(root)
    return sent(
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
    return sent(diff_between(request, old, new))


@router.post("/ask", summary="a cited, verified answer")
async def ask(body: models.AskRequest, request: Request) -> JSONResponse:
    return await run_costly(request, "ask", dict(body), lambda: _ask(request, body, None))


@router.post("/conversations", summary="start a conversation")
def create_conversation(body: models.ConversationRequest, request: Request) -> JSONResponse:
    return JSONResponse(new_conversation(request, body.title))


def new_conversation(request: Request, title: str) -> dict:
    """A new conversation of the caller's; 409 when the key keeps as many as it may."""
    served = service(request)
    made = served.store.create_conversation(owner(request), title, served.conversations_per_key)
    if made is None:
        raise HTTPException(
            409,
            f"this key has {served.conversations_per_key} conversations, as many as a key may "
            "keep: delete one to start another",
        )
    return made


@router.get("/conversations", summary="my conversations, most recent first, a page at a time")
def list_conversations(
    request: Request,
    limit: Annotated[int, Query(ge=1, le=LISTED)] = LISTED,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> JSONResponse:
    """A page of the key's conversations; X-Total-Count says how many it has, and a Link
    header (rel="next") names the next page while there is one. The body stays a list, as
    it was before pages, so clients that read the first page see no change."""
    store, who = service(request).store, owner(request)
    listed = store.conversations(who, limit, offset)
    total = store.conversation_count(who)
    headers = {"X-Total-Count": str(total)}
    if offset + len(listed) < total:
        headers["Link"] = f'</api/conversations?limit={limit}&offset={offset + limit}>; rel="next"'
    return JSONResponse(listed, headers=headers)


@router.get("/conversations/{conversation_id}", summary="one of my conversations with its turns")
def get_conversation(conversation_id: str, request: Request) -> JSONResponse:
    found = service(request).store.conversation(owner(request), bounded(conversation_id))
    if found is None:
        raise not_found("conversation")
    return JSONResponse(found)


@router.delete("/conversations/{conversation_id}", summary="delete one of my conversations")
def delete_conversation(conversation_id: str, request: Request) -> JSONResponse:
    if not service(request).store.delete_conversation(owner(request), bounded(conversation_id)):
        raise not_found("conversation")
    return JSONResponse({"deleted": conversation_id})


@router.post(
    "/conversations/{conversation_id}/ask",
    summary="continue a conversation: a follow-up reads the turns before it",
)
async def continue_conversation(
    conversation_id: str, body: models.AskRequest, request: Request
) -> JSONResponse:
    chosen_id = bounded(conversation_id)
    return await run_costly(request, "ask", dict(body), lambda: _ask(request, body, chosen_id))


@router.delete("/answers/{answer_id}", summary="delete one of my answers and its feedback")
def delete_answer(answer_id: str, request: Request) -> JSONResponse:
    """An ask outside a conversation had no way to be deleted: this deletes any one answer
    of the caller's (and the feedback that copies it), in a conversation or not."""
    if not service(request).store.delete_answer(owner(request), bounded(answer_id)):
        raise not_found("answer")
    return JSONResponse({"deleted": answer_id})


@router.post("/feedback", summary="feedback on one of my answers")
def feedback(body: models.FeedbackRequest, request: Request) -> JSONResponse:
    item = service(request).store.add_feedback(
        owner(request), body.answer_id, body.rating, body.comment
    )
    if item is None:
        raise not_found("answer")
    return JSONResponse(item)


@router.post("/verify/citations", summary="does each cited paragraph support its claim?")
async def verify_citations(body: models.VerifyCitationsRequest, request: Request) -> JSONResponse:
    def work() -> JSONResponse:
        index = service(request).index()
        items = [c.model_dump(exclude_none=True) for c in body.citations]
        return sent(answers.verify_citations(index, items, body.threshold), index)

    return await run_costly(request, "verify_citations", dict(body), work)


@router.post("/verify/entities", summary="are an answer's names and numbers in its sources?")
def verify_entities(body: models.VerifyEntitiesRequest, request: Request) -> JSONResponse:
    index = service(request).index()
    found = answers.verify_entities(index, body.entities, body.source_ids, body.threshold)
    return sent(found, index)


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
    turn, version = answered(request, body, conversation_id)
    return JSONResponse(turn, headers={"X-Lexkb-Snapshot": version})


def answered(
    request: Request, body: models.AskRequest, conversation_id: str | None
) -> tuple[dict, str]:
    """The caller's ask, alone or in one of their conversations (404 otherwise): the stored
    turn and the version of the snapshot that answered; OverLimit (429) past the allowance."""
    served, who = service(request), owner(request)
    turns = None
    if conversation_id is not None:
        if not served.store.owns(who, conversation_id):
            raise not_found("conversation")
        turns = served.store.turns(who, conversation_id)
    return served.ask(who, body.question, body.filters, turns, conversation_id)


def diff_between(request: Request, old: str, new: str) -> Diff:
    """What changed from snapshot `old` to `new` (versions, prefixes, previous or CURRENT) of
    the served root; 404 for a version that names no snapshot, or one that cannot be read."""
    from lexkb.core.store import index_root

    root = local_root(request)
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
        return _diff(root, old, new)
    except (SnapshotError, OSError) as exc:  # a snapshot that cannot be read: say which only
        log.warning("snapshots diff %s %s: %s", old, new, exc)
        raise HTTPException(404, f"snapshot {old} or {new} cannot be read") from exc


@lru_cache(maxsize=DIFFS_KEPT)
def _diff(root: Path, old: str, new: str) -> Diff:
    """Snapshots never change once published, so a diff between two is worked out once: the
    pages of a long one are then read from memory."""
    from lexkb.core.store.diff import diff

    return diff(root, old, new)


def document_of(index, document: str):
    """A document's catalog entry and paragraphs; 404 when the index has no such document."""
    try:
        return index.document_paragraphs(bounded(document))
    except (KeyError, ValueError) as exc:
        raise HTTPException(404, str(exc.args[0] if exc.args else exc)) from exc


def bounded(value: str) -> str:
    if not 0 < len(value) <= DEFAULT_LIMITS.max_reference_chars:
        raise QueryError(f"1 to {DEFAULT_LIMITS.max_reference_chars} characters, not {len(value)}")
    return value


def local_root(request: Request) -> Path:
    root = service(request).current.root
    if not isinstance(root, Path):
        raise QueryError("snapshots are listed and compared for a local index root only")
    return root
