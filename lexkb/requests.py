"""One request model per tool: its arguments, each with its type, bound and default.

The service's MCP tools take these fields as their flat arguments (lexkb_service.mcp.tools
reads its signatures from here), and its JSON API's request bodies are these models
(lexkb_service.serve.models), so a default or a bound is stated once, here (the numbers
themselves in lexkb.defaults, which `Index`, the answer tools and the CLI read too; the fields'
types in lexkb.request_types). Every model refuses unknown fields, so a misspelt option is an
error, not a silent default.
"""

from __future__ import annotations

import inspect
from typing import Annotated, get_type_hints

from pydantic import BaseModel, ConfigDict, Field

from lexkb import defaults
from lexkb.answers.external.web import MAX_RESULTS_PER_QUERY
from lexkb.limits import DEFAULT_LIMITS as LIMITS
from lexkb.request_types import (
    MAX_SPANS,
    CitedClaim,
    ClauseDescriptions,
    ClauseNames,
    ContextParagraph,
    Decay,
    FittedSet,
    Hits,
    Hops,
    Label,
    Many,
    Mode,
    Number,
    Reference,
    Relation,
    SearchFilters,
    Share,
    Text,
)

Listed = Field(min_length=1, max_length=LIMITS.max_list_items)  # a list's bounds


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SearchRequest(Request):
    query: Annotated[
        str,
        Field(
            min_length=1,
            max_length=LIMITS.max_query_chars,
            examples=["how long must client money records be kept"],
        ),
    ]
    mode: Mode | None = None
    limit: Hits = defaults.SEARCH_LIMIT
    filters: SearchFilters | None = None
    expand: bool = False
    rerank: bool = False


class GetRequest(Request):
    reference: Reference


class HopRequest(Request):
    start: Reference
    max_hops: Hops = defaults.HOP_MAX_HOPS
    decay: Decay = defaults.DECAY
    limit: Hits = defaults.HOP_LIMIT


class DocumentsRequest(Request):
    pass


class ClustersRequest(Request):
    pass


class FormatContextRequest(Request):
    paragraphs: Annotated[list[str | ContextParagraph], Listed]
    query: Annotated[str, Field(max_length=LIMITS.max_query_chars)] | None = None
    max_tokens: Annotated[int, Field(ge=1, le=LIMITS.max_tokens), Number] = defaults.CONTEXT_TOKENS


class VerifyEntitiesRequest(Request):
    entities: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=LIMITS.max_query_chars)]],
        Field(
            min_length=1,
            max_length=LIMITS.max_list_items,
            examples=[["30 days", "USD 5,000", "Client Money"]],
        ),
    ]
    source_ids: Many
    threshold: Share = defaults.ENTITY_THRESHOLD


class VerifyCitationsRequest(Request):
    citations: Annotated[list[CitedClaim], Listed]
    threshold: Share = defaults.CITATION_THRESHOLD


class VerifyRelationsRequest(Request):
    relations: Annotated[list[Relation], Listed]
    max_hops: Hops = defaults.RELATION_MAX_HOPS
    threshold: Share = defaults.RELATION_THRESHOLD


class CheckContradictionsRequest(Request):
    paragraph_ids: Many
    claims: Annotated[list[str], Listed] | None = None


class WebSearchRequest(Request):
    queries: Annotated[list[Text], Field(min_length=1, max_length=10)]
    max_results_per_query: Annotated[int, Field(ge=1, le=MAX_RESULTS_PER_QUERY), Number] = (
        defaults.WEB_RESULTS_PER_QUERY
    )
    preferred_domains: Annotated[list[str], Field(max_length=50)] | None = None


class AskRequest(Request):
    question: Annotated[
        str,
        Field(
            min_length=1,
            max_length=LIMITS.max_query_chars,
            examples=["How long must records be kept?"],
        ),
    ]
    filters: SearchFilters | None = None


class EvidenceRequest(Request):
    query: Text
    filters: SearchFilters | None = None


class ExtractRequest(Request):
    question: Text
    document: Reference | None = None
    limit: Annotated[int, Field(ge=1, le=MAX_SPANS), Number] = defaults.EXTRACT_LIMIT
    clause_type: Annotated[
        Label | None,
        Field(
            description="the contract clause type that answers: paragraphs labelled with it first",
            examples=["Cap On Liability"],
        ),
    ] = None


class ClassifyRequest(Request):
    document: Reference
    clause_types: ClauseDescriptions | ClauseNames | FittedSet | None = None


class CheckQuestionRequest(Request):
    question: Text


# Each tool's published name and its request.
BY_TOOL: dict[str, type[Request]] = {
    "search": SearchRequest,
    "get": GetRequest,
    "hop": HopRequest,
    "documents": DocumentsRequest,
    "clusters": ClustersRequest,
    "format_context": FormatContextRequest,
    "verify_entities": VerifyEntitiesRequest,
    "verify_citations": VerifyCitationsRequest,
    "verify_relations": VerifyRelationsRequest,
    "check_contradictions": CheckContradictionsRequest,
    "web_search": WebSearchRequest,
    "ask": AskRequest,
    "evidence": EvidenceRequest,
    "extract": ExtractRequest,
    "classify": ClassifyRequest,
    "check_question": CheckQuestionRequest,
}


def parameters(request: type[Request]) -> list[inspect.Parameter]:
    """The request's fields as a function's parameters, in order: each annotated with its
    type and bounds as the model states them, with the model's default (none when required),
    for a tool that takes its arguments flat."""
    hints = get_type_hints(request, include_extras=True)
    return [
        inspect.Parameter(
            name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=inspect.Parameter.empty if field.is_required() else field.default,
            annotation=hints[name],
        )
        for name, field in request.model_fields.items()
    ]
