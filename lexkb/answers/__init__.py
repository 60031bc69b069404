"""Tools for the assistant's side of the loop: prompt context from paragraphs, and checks of a
generated answer against the snapshot (entities, citations, relations, contradictions), plus
web search for what the index does not hold. Each takes an open `lexkb.Index`."""

from lexkb.answers.claims import verify_citations
from lexkb.answers.context import format_context
from lexkb.answers.contradictions import check_contradictions
from lexkb.answers.entities import verify_entities
from lexkb.answers.relations import verify_relations

__all__ = [
    "check_contradictions",
    "format_context",
    "verify_citations",
    "verify_entities",
    "verify_relations",
]
