"""Tools for the assistant's side of the loop: prompt context from paragraphs, checks of a
generated answer against the snapshot (entities, citations, relations, contradictions), whether
there is evidence enough to answer, guardrails, extraction, and `ask`, which runs the whole loop;
plus web search for what the index does not hold. Each takes an open `lexkb.Index`."""

from lexkb.answers.ask import ask
from lexkb.answers.claims import verify_citations
from lexkb.answers.classify import classify
from lexkb.answers.context import format_context
from lexkb.answers.contradictions import check_contradictions
from lexkb.answers.entities import verify_entities
from lexkb.answers.evidence import evidence
from lexkb.answers.extract import extract
from lexkb.answers.guardrails import check_question
from lexkb.answers.relations import verify_relations

__all__ = [
    "ask",
    "check_contradictions",
    "check_question",
    "classify",
    "evidence",
    "extract",
    "format_context",
    "verify_citations",
    "verify_entities",
    "verify_relations",
]
