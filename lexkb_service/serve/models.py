"""The JSON API's request bodies. A tool's body is its request model (lexkb.requests), the one
MCP's arguments are read from, so the two take the same fields, bounds and defaults; the bodies
here are the API's own. Every body refuses unknown fields, so a misspelt option is an error,
not a silent default. Responses are described by the JSON Schemas in lexkb/schemas
(lexkb_service.serve.openapi)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from lexkb.requests import (
    AskRequest,
    HopRequest,
    Request,
    SearchRequest,
    VerifyCitationsRequest,
    VerifyEntitiesRequest,
)
from lexkb_service.serve.store import MAX_COMMENT_CHARS, MAX_TITLE_CHARS

__all__ = [
    "AskRequest",
    "ConversationRequest",
    "FeedbackRequest",
    "HopRequest",
    "Rating",
    "SearchRequest",
    "VerifyCitationsRequest",
    "VerifyEntitiesRequest",
]

Rating = Literal["positive", "negative"]


class ConversationRequest(Request):
    title: Annotated[str, Field(max_length=MAX_TITLE_CHARS)] = ""


class FeedbackRequest(Request):
    answer_id: Annotated[str, Field(min_length=1, max_length=64)]
    rating: Rating
    comment: Annotated[str, Field(max_length=MAX_COMMENT_CHARS)] = ""
