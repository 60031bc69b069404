"""The JSON API's request bodies, typed and bounded as the MCP tools' arguments are (the same
types from lexkb.mcp.schemas). Every body refuses unknown fields, so a misspelt option is an
error, not a silent default. Responses are described by the JSON Schemas in lexkb/schemas
(lexkb.serve.openapi)."""

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
