"""The types the tools' arguments are validated against (lexkb.requests' fields), published as
JSON schemas by MCP and the JSON API.

Each bound and each closed list is taken from the module that enforces it (lexkb.limits'
default QueryLimits, lexkb.core.vocabulary, lexkb.filters, lexkb.answers), so the schema an
assistant reads cannot drift from what the query module accepts. They live in the query module,
not the service that publishes them, because the request models are the library's: a program
that only calls `Index` imports them without the service. Schemas are built once, at import, so
they follow the default limits, not those a server was started with.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from lexkb.answers.classify import FITTED_SET, MAX_TYPES
from lexkb.answers.context import ROLES
from lexkb.answers.relations import RELATION_TYPES
from lexkb.core.vocabulary import ChunkLevel, SearchMode
from lexkb.filters import PERIODS
from lexkb.graph import CITES
from lexkb.limits import DEFAULT_LIMITS

# The tools' own caps, tighter than QueryLimits.max_k (which bounds the Python API): the hits of
# a search or hop, and the answer spans of extract, that one tool result may carry.
MAX_HITS = 100
MAX_SPANS = 20


def one_of(values: Iterable[str]) -> Any:
    """A Literal of `values` (a StrEnum or a tuple of names): its JSON schema is an inline
    `enum` of plain strings, as clients have always seen it, where a StrEnum annotation would
    become a `$defs` reference and hand the tools enum members instead of text."""
    return Literal[tuple(str(value) for value in values)]


if TYPE_CHECKING:
    # To a type checker each closed list is text, which its values are: it cannot build a
    # Literal from a list known only at run time, where pydantic reads the one below.
    Mode = str
    Level = str
    Period = str
    Role = str
    RelationType = str
    FittedSet = str
else:
    Mode = one_of(SearchMode)
    Level = one_of(ChunkLevel)
    Period = one_of(PERIODS)
    Role = one_of(ROLES)
    RelationType = one_of(RELATION_TYPES)
    FittedSet = one_of([FITTED_SET])

Text = Annotated[str, Field(min_length=1, max_length=DEFAULT_LIMITS.max_query_chars)]
Reference = Annotated[
    str,
    Field(
        min_length=1,
        max_length=DEFAULT_LIMITS.max_reference_chars,
        description="a chunk id or a reference as people write it",
        examples=["Article 6(1)(a)", "Rule 4.3.1 of the Lexkb Rulebook", "LSA 230, para. A8"],
    ),
]
Many = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=DEFAULT_LIMITS.max_reference_chars)]],
    Field(min_length=1, max_length=DEFAULT_LIMITS.max_list_items),
]


def not_a_boolean(value: Any) -> Any:
    """`value`, unless it is true or false: pydantic's lax mode reads `true` as 1 (and 1.0),
    so `"limit": true` was a search for one hit, where a client had surely meant something
    else. Numbers written as text still pass (query strings carry nothing else)."""
    if isinstance(value, bool):
        raise ValueError("a number is needed, not true or false")
    return value


Number = BeforeValidator(not_a_boolean)
Hops = Annotated[int, Field(ge=1, le=DEFAULT_LIMITS.max_hops), Number]
Hits = Annotated[int, Field(ge=1, le=MAX_HITS), Number]
# A share of 0 to 1 inclusive (thresholds); decay is (0, 1], as lexkb.limits.fraction checks it.
Share = Annotated[float, Field(ge=0, le=1), Number]
Decay = Annotated[float, Field(gt=0, le=1), Number]
Label = Annotated[str, Field(min_length=1, max_length=200)]  # as classify.label_set checks it
ClauseDescriptions = Annotated[
    dict[Label, Annotated[str, Field(max_length=1000)]],
    Field(
        min_length=1,
        max_length=MAX_TYPES,
        examples=[{"non-solicitation": "a party may not hire the other's employees"}],
    ),
]
ClauseNames = Annotated[
    list[Label],
    Field(min_length=1, max_length=MAX_TYPES, examples=[["Cap On Liability", "Non-Compete"]]),
]


class DateRange(BaseModel):
    model_config = ConfigDict(extra="forbid")
    start: date | None = Field(None, description="first day included (YYYY-MM-DD)")
    end: date | None = Field(None, description="last day included (YYYY-MM-DD)")


class SearchFilters(BaseModel):
    """Filters combine with AND; a list means any of its values (all of them for `tags`)."""

    model_config = ConfigDict(extra="forbid")
    document: str | list[str] | None = Field(None, description="document key, title or code")
    document_type: str | list[str] | None = Field(None, examples=["regulation", "contract"])
    authority_level: str | list[str] | None = Field(None, examples=["primary", "guidance"])
    author: str | list[str] | None = None
    tags: str | list[str] | None = None
    source: str | list[str] | None = None
    party: str | list[str] | None = Field(None, description="a contract party")
    governing_law: str | list[str] | None = Field(
        None, description="the place whose law a contract chooses", examples=["New York"]
    )
    date_range: DateRange | None = Field(None, description="effective (else published) date")
    period: Period | None = Field(None, description="relative dates; not with date_range")
    section: str | None = Field(None, description="a section heading, path prefix or number")
    chunk_level: Level | None = None
    clause_type: str | list[str] | None = Field(
        None, description="contract clause type", examples=["governing law", "termination"]
    )
    cards_only: bool | None = Field(None, description="only paragraphs that define a term")
    cluster_id: Annotated[int, Number] | list[Annotated[int, Number]] | None = Field(
        None, description="topic clusters (see clusters)"
    )
    deprecated: bool | None = None


class ContextParagraph(BaseModel):
    model_config = ConfigDict(extra="forbid")
    chunk_id: Annotated[str, Field(min_length=1, max_length=DEFAULT_LIMITS.max_reference_chars)]
    role: Role | None = None


class CitedClaim(BaseModel):
    model_config = ConfigDict(extra="forbid")
    paragraph_id: str | None = Field(
        None, max_length=DEFAULT_LIMITS.max_reference_chars, description="a chunk id"
    )
    ref: str | None = Field(
        None, max_length=DEFAULT_LIMITS.max_reference_chars, examples=["Article 5(1)(e)"]
    )
    document: str | None = Field(
        None,
        max_length=DEFAULT_LIMITS.max_reference_chars,
        description="a whole document, when no paragraph is cited",
    )
    claim: Text


class Relation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    source: Reference
    target: Reference
    relation_type: RelationType = CITES
    max_hops: Hops | None = None


def chosen(filters: SearchFilters | None) -> dict[str, Any] | None:
    """The filters as the query module takes them: only those given, dates as ISO text."""
    return filters.model_dump(exclude_none=True, mode="json") if filters else None
