"""What the JSON API's routes (/api/v1: lexkb_service.serve.v1 and lexkb_service.serve.v1_people)
share: the Service every route reads, the helpers that run a route's work, send its reply and refuse
what is not there, and the routes whose request and reply have nothing of v1's conventions to follow
(search, a document's tree and Markdown, verification, who the caller is, deleting a conversation or
an answer), which v1 mounts as they are written here.

Each route runs in a worker thread, as the MCP tools do: finding the current snapshot and querying
it block. Routes whose MCP tool has a cost (ask, a reranked search, verify_citations:
lexkb_service.mcp.tools) run in the same pools as MCP's calls, in the costly one, counted against
the caller's key (lexkb_service.mcp.admission); the rest are plain `def`s in the local worker
threads. What a route returns is the query module's own `to_dict()`, sent as it is (the Python API
already bounds and types it; validating it again would cost more than the search on a small index).
A refusal is JSON with the reason (lexkb_service.serve.errors); 409 past the conversations a key may
keep.
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
from fastapi import Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse
from starlette.exceptions import HTTPException

from lexkb import answers
from lexkb.answers.answer import Answer
from lexkb.answers.answer_cache import AnswerCache
from lexkb.answers.ask import ask as ask_question
from lexkb.core.store.snapshot import SnapshotError
from lexkb.current import CurrentIndex
from lexkb.limits import DEFAULT_LIMITS, QueryError
from lexkb.request_types import SearchFilters, chosen
from lexkb_service.mcp import degraded, tools
from lexkb_service.mcp.admission import KeyBudget
from lexkb_service.mcp.pools import Pools
from lexkb_service.mcp.ratelimit import OverLimit, RateLimit
from lexkb_service.mcp.server import Refused
from lexkb_service.serve import models
from lexkb_service.serve.metrics import Metrics
from lexkb_service.serve.store import (
    CONVERSATIONS_PER_KEY,
    Candidate,
    Conversation,
    EarlierTurn,
    Store,
    Trace,
    Turn,
)

if TYPE_CHECKING:
    import polars as pl

    from lexkb.core.store.diff import Diff
    from lexkb.index import Index
    from lexkb.results import Hit

log = logging.getLogger("lexkb_service.serve")
DIFFS_KEPT = 4  # diffs between two snapshots kept in memory, for their pages
T = TypeVar("T")
RefQuery = Annotated[
    str,
    Query(min_length=1, max_length=DEFAULT_LIMITS.max_reference_chars, examples=["Article 6(1)"]),
]


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

    def index(self) -> Index:
        """The snapshot CURRENT names now, counted as the one served (the metrics' gauge)."""
        index = self.current.get()
        self.metrics.serving(index.version)
        return index

    def ask(
        self,
        who: str,
        question: str,
        filters: SearchFilters | None,
        turns: list[EarlierTurn] | None = None,
        conversation_id: str | None = None,
    ) -> tuple[Turn, str]:
        """One ask for `who`, whichever door it came through (/api/v1/ask, a conversation, or
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
            seen: list[tuple[str, list[Hit] | None]] = []
            started = time.perf_counter()
            found = ask_question(
                index, question, filters=chosen(filters), cache=cache, turns=turns,
                observe=lambda searched, hits: seen.append((searched, hits)),
            )  # fmt: skip
            trace = traced(seen, time.perf_counter() - started)
            answer = degraded.noted(found, question).to_dict()
        self.metrics.answer(answer)
        return self.store.record_answer(who, answer, conversation_id, trace), index.version

    def mcp_ask(self, state: Mapping[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
        """MCP's `ask` under `lexkb serve` (lexkb_service.mcp.server.Hosted): the caller is the key
        the Gate found for the request; the reply is the tool's own, the Answer as ask.json
        gives it (which admits no other field: its record's id is on the admin page)."""
        who = state.get("owner")
        if not who:  # the Gate names an owner for every /mcp request; never ask as no one
            raise Refused("this request carries no API key")
        turn, _ = self.ask(who, arguments["question"], arguments.get("filters"))
        return turn["answer"]


def traced(seen: list[tuple[str, list[Hit] | None]], seconds: float) -> Trace:
    """An ask's Trace from what `ask` observed: the text searched and each candidate's chunk,
    citation, rank score, calibrated relevance and (reranked) chance of answering."""
    searched, hits = seen[0] if seen else (None, None)
    candidates: list[Candidate] = [
        {"chunk_id": h.chunk_id, "citation": h.citation, "score": h.score,
         "relevance": h.relevance, "answers": h.answers}
        for h in hits or ()
    ]  # fmt: skip
    return Trace(searched, candidates, round(seconds, 4))


def service(request: Request) -> Service:
    """The Service build_app left in the app's state (Starlette's state holds anything)."""
    served = request.app.state.service
    if not isinstance(served, Service):
        raise TypeError(f"the app's state holds no Service but {type(served).__name__}")
    return served


def owner(request: Request) -> str:
    """The caller's key id, which the Gate left in the request's ASGI state (a route that asks
    for it needs a key, so there is one)."""
    found = request.scope["state"]["owner"]
    if not isinstance(found, str):
        raise TypeError(f"the request's owner is no key id but {type(found).__name__}")
    return found


def sent(payload: object, index: Index | None = None) -> JSONResponse:
    """`payload` (a query result, sent by its to_dict(), or what JSON takes) as the reply, with
    the version of the snapshot that answered when one did."""
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
    has too much in progress: lexkb_service.mcp.admission); a cheap one in the local pool."""
    served = service(request)
    found = tools.BY_NAME[tool]
    cost = found.cost_of(arguments)
    limiter = served.pools.for_tool(found.outbound, cost)
    with served.budget.holding(owner(request), cost):
        return await anyio.to_thread.run_sync(work, limiter=limiter)


async def search(body: models.SearchRequest, request: Request) -> JSONResponse:
    def work() -> JSONResponse:
        index = service(request).index()
        return sent(tools.search(index, **dict(body)), index)

    return await run_costly(request, "search", dict(body), work)


def document_tree(document: str, request: Request) -> JSONResponse:
    from lexkb.export import to_tree

    index = service(request).index()
    info, paragraphs = document_of(index, document)
    return sent(to_tree(info, paragraphs, index.version), index)


class MarkdownResponse(PlainTextResponse):
    """Markdown, documented as what it is (text/markdown; charset=utf-8)."""

    media_type = "text/markdown"


def document_markdown(document: str, request: Request) -> MarkdownResponse:
    from lexkb.export import to_markdown

    index = service(request).index()
    info, paragraphs = document_of(index, document)
    return MarkdownResponse(
        to_markdown(info, paragraphs, index.version),
        headers={"X-Lexkb-Snapshot": index.version},
    )


def new_conversation(request: Request, title: str) -> Conversation:
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


def delete_conversation(conversation_id: str, request: Request) -> JSONResponse:
    if not service(request).store.delete_conversation(owner(request), bounded(conversation_id)):
        raise not_found("conversation")
    return JSONResponse({"deleted": conversation_id})


def delete_answer(answer_id: str, request: Request) -> JSONResponse:
    """An ask outside a conversation had no way to be deleted: this deletes any one answer
    of the caller's (and the feedback that copies it), in a conversation or not."""
    if not service(request).store.delete_answer(owner(request), bounded(answer_id)):
        raise not_found("answer")
    return JSONResponse({"deleted": answer_id})


async def verify_citations(body: models.VerifyCitationsRequest, request: Request) -> JSONResponse:
    def work() -> JSONResponse:
        index = service(request).index()
        items = [c.model_dump(exclude_none=True) for c in body.citations]
        return sent(answers.verify_citations(index, items, body.threshold), index)

    return await run_costly(request, "verify_citations", dict(body), work)


def verify_entities(body: models.VerifyEntitiesRequest, request: Request) -> JSONResponse:
    index = service(request).index()
    found = answers.verify_entities(index, body.entities, body.source_ids, body.threshold)
    return sent(found, index)


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


def answered(
    request: Request, body: models.AskRequest, conversation_id: str | None
) -> tuple[Turn, str]:
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


def document_of(index: Index, document: str) -> tuple[dict[str, Any], pl.DataFrame]:
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
