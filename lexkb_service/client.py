"""A typed Python client for `lexkb serve`'s JSON API, /api/v1, for programs that reach the
service over HTTP rather than open an index (`lexkb.Index`).

    from lexkb_service.client import Client
    api = Client("http://127.0.0.1:8000", key="lk_...")
    hits = api.search("client money reconciliation", limit=3)["hits"]
    turn = api.ask("How long must reconciliation records be kept?")
    api.give_feedback(turn["answer_id"], "positive")
    for conversation in api.every(api.list_conversations):
        ...

One method per operation of the OpenAPI document (/api/v1/openapi.json), named by its
operation id, taking its path parameters, query parameters and body fields by their names and
with their defaults; tests/service/test_serve_v1.py holds the methods to the served
document, so the two cannot drift. Replies are the documented JSON, typed as TypedDicts: the
lookups' (SearchResults of Hits, a Lookup, HopResults) as the query library sends them, and the
service's own (Turn, Conversation, Feedback, pages of them); tests/service/test_serve_v1.py
checks each against real replies. A refusal raises ApiError with the status and the service's
reason.
Only the standard library is used (and lexkb.defaults, the tools' defaults, which imports
nothing).
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypedDict, TypeVar, cast
from urllib.parse import quote, urlencode, urlsplit

from lexkb import defaults

T = TypeVar("T")
Rating = Literal["positive", "negative"]
DiffPart = Literal[
    "chunks_added", "chunks_removed", "chunks_changed", "edges_added", "edges_removed"
]
SearchMode = Literal["hybrid", "keyword", "vector"]
# How a reference matched (lexkb.core.vocabulary.MatchKind).
Match = Literal["exact", "contains", "ambiguous", "enclosing", "not_found"]
# Operation id -> (method, path): what each method calls.
ROUTES: dict[str, tuple[str, str]] = {
    "search": ("POST", "/api/v1/search"),
    "get_reference": ("GET", "/api/v1/get"),
    "hop": ("POST", "/api/v1/hop"),
    "list_documents": ("GET", "/api/v1/documents"),
    "document_tree": ("GET", "/api/v1/documents/{document}/tree"),
    "document_markdown": ("GET", "/api/v1/documents/{document}/markdown"),
    "document_page": ("GET", "/api/v1/documents/{document}/pages/{page}"),
    "list_snapshots": ("GET", "/api/v1/snapshots"),
    "snapshot_diff": ("GET", "/api/v1/snapshots/diff"),
    "snapshot_diff_part": ("GET", "/api/v1/snapshots/diff/{part}"),
    "verify_citations": ("POST", "/api/v1/verify/citations"),
    "verify_entities": ("POST", "/api/v1/verify/entities"),
    "me": ("GET", "/api/v1/me"),
    "ask": ("POST", "/api/v1/ask"),
    "ask_in_conversation": ("POST", "/api/v1/conversations/{conversation_id}/ask"),
    "get_answer": ("GET", "/api/v1/answers/{answer_id}"),
    "delete_answer": ("DELETE", "/api/v1/answers/{answer_id}"),
    "create_conversation": ("POST", "/api/v1/conversations"),
    "list_conversations": ("GET", "/api/v1/conversations"),
    "get_conversation": ("GET", "/api/v1/conversations/{conversation_id}"),
    "delete_conversation": ("DELETE", "/api/v1/conversations/{conversation_id}"),
    "list_turns": ("GET", "/api/v1/conversations/{conversation_id}/turns"),
    "give_feedback": ("POST", "/api/v1/feedback"),
    "list_feedback": ("GET", "/api/v1/feedback"),
    "get_feedback": ("GET", "/api/v1/feedback/{feedback_id}"),
    "admin_feedback": ("GET", "/api/v1/admin/feedback"),
    "admin_traces": ("GET", "/api/v1/admin/answers"),
}


class Hit(TypedDict):
    """A paragraph (or section) as a citation: `citation` is how a person cites it ("DORA,
    Article 19(4)"), `content_hash` and `snapshot_version` pin its text; `score` ranks it
    within one search, `relevance` (0-1) means the same across searches, `answers` (0-1) is set
    by a reranked search (lexkb.results.Hit; docs/schemas/hit.json)."""

    chunk_id: str
    document_key: str
    document_title: str
    chunk_level: Literal["paragraph", "section", "part", "note"]
    ref: str | None
    cited_ref: str | None
    citation: str
    section_path: list[str]
    page: int | None
    score: float | None
    relevance: float | None
    answers: float | None
    text: str
    expanded_from: str | None
    source_url: str | None
    parent_chunk_id: str | None
    metadata: dict[str, Any]
    content_hash: str | None
    snapshot_version: str | None


class SearchResults(TypedDict):
    """A search's hits, best first, and what was said of it (a filter that matched nothing, a
    model that could not be used)."""

    query: str
    mode: SearchMode
    snapshot_version: str | None
    warnings: list[str]
    hits: list[Hit]


class Lookup(TypedDict):
    """What a reference found, and how (`match`); `found` when the unit exists, exactly or as a
    point inside `hit`. An ambiguous one (units of several documents) has no `hit` and each
    candidate in `alternatives`; one that names nothing has the nearest unit (`enclosing`) or
    the `closest` references (lexkb.results.Lookup; docs/schemas/get.json)."""

    asked: str
    match: Match
    found: bool
    reason: str
    found_ref: str | None
    hit: Hit | None
    section: Hit | None
    previous: Hit | None
    next: Hit | None
    cites: list[Hit]
    cited_by: list[Hit]
    unresolved: list[dict[str, Any]]
    closest: list[str]
    alternatives: list[Hit]


class Step(TypedDict):
    """One citation followed: the paragraph reached, and whether the one before cites it
    (`cites`) or it cites the one before (`cited-by`), with the citation's words."""

    chunk_id: str
    ref: str | None
    direction: Literal["cites", "cited-by"]
    relation: str
    reference_text: str
    weight: float


class GraphHit(TypedDict):
    """A paragraph reached along citations: its score (decay x weight along the path), the
    number of citations followed, and each step."""

    hit: Hit
    score: float
    hops: int
    path: list[Step]


class HopResults(TypedDict):
    start: str
    snapshot_version: str
    results: list[GraphHit]


class Page(TypedDict, Generic[T]):
    items: list[T]
    next_cursor: str | None


class Turn(TypedDict):
    answer_id: str
    conversation_id: str | None
    question: str
    answer: dict[str, Any]  # docs/schemas/ask.json
    at: str


class Conversation(TypedDict):
    id: str
    title: str
    created_at: str
    updated_at: str
    turn_count: int


class Feedback(TypedDict, total=False):
    id: str
    answer_id: str
    rating: Rating
    comment: str
    question: str
    answer: str
    confidence: float
    source_count: int
    created_at: str
    updated_at: str
    owner: str  # the admin's listing only
    owner_name: str


class Candidate(TypedDict):
    chunk_id: str
    citation: str
    score: float | None
    relevance: float | None
    answers: float | None


class Trace(TypedDict):
    answer_id: str
    owner: str
    owner_name: str
    conversation_id: str | None
    question: str
    searched: str | None
    candidates: list[Candidate]
    seconds: float | None
    answer: dict[str, Any]
    at: str


class Me(TypedDict):
    key_name: str
    admin: bool
    asks_per_hour: int
    asks_remaining: int
    snapshot_version: str


class Snapshot(TypedDict):
    version: str
    created_at: str
    documents: int
    chunks: int
    bytes: int
    current: bool


class Diff(TypedDict):
    old: str
    new: str
    summary: dict[str, int]
    documents_added: list[dict[str, str]]
    documents_removed: list[dict[str, str]]
    documents_changed: list[dict[str, str]]
    metadata_changed: dict[str, dict[str, list[Any]]]


@dataclass(frozen=True)
class Response:
    """One reply: its status, headers (names in lower case) and body (JSON, text or bytes)."""

    status: int
    headers: dict[str, str]
    body: Any


@dataclass
class ApiError(Exception):
    """A refusal: the status and the service's reason (`error`), with the whole reply."""

    status: int
    error: str
    response: Response = field(repr=False)

    def __str__(self) -> str:
        return f"{self.status}: {self.error}"


class Client:
    """The API of the service at `base_url`, with `key` (None: loopback single-user mode)."""

    def __init__(self, base_url: str, key: str | None = None, timeout: float = 120.0) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"a base URL is http(s)://host[:port], not {base_url!r}")
        self.scheme, self.host, self.port = parts.scheme, parts.hostname, parts.port
        self.key = key
        self.timeout = timeout

    # -- lookups ---------------------------------------------------------------------------

    def search(
        self,
        query: str,
        limit: int = defaults.SEARCH_LIMIT,
        mode: SearchMode | None = None,
        filters: Mapping[str, Any] | None = None,
        expand: bool = False,
        rerank: bool = False,
    ) -> SearchResults:
        """Paragraphs for `query`, best first: up to `limit` hits, each a citation with its
        text, section path, scores and content hash. `mode` (hybrid, keyword, vector; None: the
        index's default), `filters` (document, document_type, authority, dates, party,
        section, clause_type, ...: the MCP tool `search`'s), `expand` (add the paragraphs the
        hits cite), `rerank` (reorder by the relevance model, which sets each hit's `answers`).
        Raises ApiError: 400 for a filter or argument refused (its reason says which), 401/403
        for the key, 429 past the key's costly work in progress."""
        return cast(SearchResults, self._call("search", locals()))

    def get_reference(self, reference: str) -> Lookup:
        """The paragraph a chunk id or reference names, with how it matched. ApiError 404 when
        it names no unit, or units of several documents (`match` ambiguous): its
        `response.body` is then the Lookup, with the candidates in `alternatives` and the
        reason as `error`."""
        return cast(Lookup, self._call("get_reference", locals()))

    def hop(
        self,
        start: str,
        max_hops: int = defaults.HOP_MAX_HOPS,
        decay: float = defaults.DECAY,
        limit: int = defaults.HOP_LIMIT,
    ) -> HopResults:
        """Paragraphs reached from `start` (a chunk id or reference) along citations, both
        ways, best first, each with its path. ApiError 404 as `get_reference`'s, with the
        same Lookup as its body, when `start` names no unit or several documents' units."""
        return cast(HopResults, self._call("hop", locals()))

    def list_documents(
        self, limit: int = defaults.PAGE, cursor: str | None = None
    ) -> Page[dict[str, Any]]:
        return cast("Page[dict[str, Any]]", self._call("list_documents", locals()))

    def document_tree(self, document: str) -> dict[str, Any]:
        return cast("dict[str, Any]", self._call("document_tree", locals()))

    def document_markdown(self, document: str) -> str:
        return cast(str, self._call("document_markdown", locals()))

    def document_page(self, document: str, page: int) -> bytes:
        """A page of a PDF document as a PNG."""
        return cast(bytes, self._call("document_page", locals()))

    def list_snapshots(
        self, limit: int = defaults.PAGE, cursor: str | None = None
    ) -> Page[Snapshot]:
        return cast("Page[Snapshot]", self._call("list_snapshots", locals()))

    def snapshot_diff(self, old: str = "previous", new: str = "CURRENT") -> Diff:
        return cast(Diff, self._call("snapshot_diff", locals()))

    def snapshot_diff_part(
        self,
        part: DiffPart,
        old: str = "previous",
        new: str = "CURRENT",
        limit: int = defaults.PAGE,
        cursor: str | None = None,
    ) -> Page[Any]:
        return cast("Page[Any]", self._call("snapshot_diff_part", locals()))

    def verify_citations(
        self,
        citations: list[Mapping[str, Any]],
        threshold: float = defaults.CITATION_THRESHOLD,
    ) -> dict[str, Any]:
        return cast("dict[str, Any]", self._call("verify_citations", locals()))

    def verify_entities(
        self,
        entities: list[str],
        source_ids: list[str],
        threshold: float = defaults.ENTITY_THRESHOLD,
    ) -> dict[str, Any]:
        return cast("dict[str, Any]", self._call("verify_entities", locals()))

    def me(self) -> Me:
        return cast(Me, self._call("me", locals()))

    # -- asks, conversations, feedback ------------------------------------------------------

    def ask(self, question: str, filters: Mapping[str, Any] | None = None) -> Turn:
        """Ask `question` of the documents served (kept to `filters`, as `search`'s): the Turn
        made, its `answer` the typed Answer (docs/schemas/ask.json: the text with numbered
        citations, sources, mode DIRECT/QUALIFIED/ABSTAIN, confidence, verification), stored
        under this key with a new `answer_id` and no conversation. Raises ApiError: 400 for a
        filter refused, 401/403 for the key, 429 past the key's asks this hour or its costly
        work in progress (`response.headers["retry-after"]` says when to try again)."""
        return cast(Turn, self._call("ask", locals()))

    def ask_in_conversation(
        self, conversation_id: str, question: str, filters: Mapping[str, Any] | None = None
    ) -> Turn:
        return cast(Turn, self._call("ask_in_conversation", locals()))

    def get_answer(self, answer_id: str) -> Turn:
        return cast(Turn, self._call("get_answer", locals()))

    def delete_answer(self, answer_id: str) -> dict[str, str]:
        return cast("dict[str, str]", self._call("delete_answer", locals()))

    def create_conversation(self, title: str = "") -> Conversation:
        return cast(Conversation, self._call("create_conversation", locals()))

    def list_conversations(
        self, limit: int = defaults.PAGE, cursor: str | None = None
    ) -> Page[Conversation]:
        return cast("Page[Conversation]", self._call("list_conversations", locals()))

    def get_conversation(self, conversation_id: str) -> Conversation:
        return cast(Conversation, self._call("get_conversation", locals()))

    def delete_conversation(self, conversation_id: str) -> dict[str, str]:
        return cast("dict[str, str]", self._call("delete_conversation", locals()))

    def list_turns(
        self, conversation_id: str, limit: int = defaults.PAGE, cursor: str | None = None
    ) -> Page[Turn]:
        return cast("Page[Turn]", self._call("list_turns", locals()))

    def give_feedback(self, answer_id: str, rating: Rating, comment: str = "") -> Feedback:
        """Feedback on one of this key's answers; given again, it changes the one given."""
        return cast(Feedback, self._call("give_feedback", locals()))

    def list_feedback(
        self, limit: int = defaults.PAGE, cursor: str | None = None
    ) -> Page[Feedback]:
        return cast("Page[Feedback]", self._call("list_feedback", locals()))

    def get_feedback(self, feedback_id: str) -> Feedback:
        return cast(Feedback, self._call("get_feedback", locals()))

    def admin_feedback(
        self, limit: int = defaults.PAGE, cursor: str | None = None
    ) -> Page[Feedback]:
        return cast("Page[Feedback]", self._call("admin_feedback", locals()))

    def admin_traces(self, limit: int = defaults.PAGE, cursor: str | None = None) -> Page[Trace]:
        return cast("Page[Trace]", self._call("admin_traces", locals()))

    # -- plumbing ---------------------------------------------------------------------------

    def every(self, listing: Callable[..., Page[T]], **arguments: Any) -> Iterator[T]:
        """Every item of a listing (`client.list_conversations`, ...), page after page."""
        cursor = None
        while True:
            page = listing(**arguments, cursor=cursor)
            yield from page["items"]
            cursor = page["next_cursor"]
            if cursor is None:
                return

    def request(
        self, method: str, path: str, body: Any = None, headers: Mapping[str, str] | None = None
    ) -> Response:
        """One request to `path` (with its query), `body` sent as JSON; any status returned."""
        connection_type = (
            http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        )
        connection = connection_type(self.host, self.port, timeout=self.timeout)
        sent = {"Accept": "application/json", **(headers or {})}
        if self.key is not None:
            sent["Authorization"] = f"Bearer {self.key}"
        data = None if body is None else json.dumps(body).encode()
        if data is not None:
            sent["Content-Type"] = "application/json"
        try:
            connection.request(method, path, body=data, headers=sent)
            reply = connection.getresponse()
            content = reply.read()
            kind = reply.getheader("content-type") or ""
        finally:
            connection.close()
        parsed: Any = content
        if "json" in kind and content:
            parsed = json.loads(content)
        elif kind.startswith("text/"):
            parsed = content.decode("utf-8", "replace")
        return Response(reply.status, {k.lower(): v for k, v in reply.getheaders()}, parsed)

    def _call(self, operation: str, given: Mapping[str, Any]) -> Any:
        """The operation with the method's arguments: those named in the path go there, the
        rest into the query (GET, DELETE) or the JSON body (POST); None is left out."""
        method, template = ROUTES[operation]
        arguments = {k: v for k, v in given.items() if k != "self" and v is not None}
        path = template
        for name in list(arguments):
            if "{" + name + "}" in path:
                path = path.replace("{" + name + "}", quote(str(arguments.pop(name)), safe=""))
        body = None
        if method == "POST":
            body = arguments
        elif arguments:
            path += "?" + urlencode({k: _query(v) for k, v in arguments.items()})
        reply = self.request(method, path, body)
        if reply.status >= 400:
            error = reply.body.get("error") if isinstance(reply.body, dict) else None
            raise ApiError(reply.status, str(error or reply.body), reply)
        return reply.body


def _query(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)
