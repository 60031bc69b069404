"""The JSON API's request bodies, typed and bounded as the MCP tools' arguments are (the same
types from lexkb.mcp.schemas), and the shapes of what only the service returns. Every body
refuses unknown fields, so a misspelt option is an error, not a silent default."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from lexkb.limits import DEFAULT_LIMITS
from lexkb.mcp.schemas import (
    CitedClaim,
    Decay,
    Hits,
    Hops,
    Many,
    Mode,
    Reference,
    SearchFilters,
    Share,
    Text,
)
from lexkb.serve.store import MAX_COMMENT_CHARS, MAX_TITLE_CHARS

Rating = Literal["positive", "negative"]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SearchRequest(Body):
    query: Text
    limit: Hits = 10
    mode: Mode | None = None
    filters: SearchFilters | None = None
    expand: bool = False
    rerank: bool = False


class HopRequest(Body):
    start: Reference
    max_hops: Hops = 2
    decay: Decay = 0.7
    limit: Hits = 20


class AskRequest(Body):
    question: Text
    filters: SearchFilters | None = None


class ConversationRequest(Body):
    title: Annotated[str, Field(max_length=MAX_TITLE_CHARS)] = ""


class FeedbackRequest(Body):
    answer_id: Annotated[str, Field(min_length=1, max_length=64)]
    rating: Rating
    comment: Annotated[str, Field(max_length=MAX_COMMENT_CHARS)] = ""


class VerifyCitationsRequest(Body):
    citations: Annotated[
        list[CitedClaim], Field(min_length=1, max_length=DEFAULT_LIMITS.max_list_items)
    ]
    threshold: Share = 0.75


class VerifyEntitiesRequest(Body):
    entities: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=DEFAULT_LIMITS.max_query_chars)]],
        Field(min_length=1, max_length=DEFAULT_LIMITS.max_list_items),
    ]
    source_ids: Many
    threshold: Share = 0.80


class Conversation(BaseModel):
    id: str
    title: str
    created_at: float
    updated_at: float
    turns: int | list[dict] = Field(description="the count in a listing; the turns in one")


class Feedback(BaseModel):
    id: str
    answer_id: str
    rating: Rating
    comment: str
    question: str
    answer: str
    confidence: float
    source_count: int
    created_at: float


class AskResponse(BaseModel):
    """The typed Answer (lexkb.answers.ask.Answer, docs/schemas/ask.schema.json) with the id
    feedback names and the conversation it belongs to."""

    model_config = ConfigDict(extra="allow")
    answer_id: str
    conversation_id: str | None
    question: str
    answer: str
    mode: Literal["DIRECT", "QUALIFIED", "ABSTAIN"]
    abstention_reason: str | None
    confidence: float
    sources: list[dict]
    sentences: list[dict]
    verification: dict
    suggestions: list[str]
    from_cache: bool
    snapshot_version: str | None


class Me(BaseModel):
    key_name: str
    admin: bool
    asks_per_hour: int
    asks_remaining: int
    snapshot_version: str


class Error(BaseModel):
    error: str
