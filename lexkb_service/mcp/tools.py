"""The MCP tools: one function per tool, and TOOLS, the table the server is built from.

Each function takes the open index first, then its request model's fields (lexkb.requests),
and returns what the query module returns (an object with `to_dict()`, or a dict); the server
hides `index` from the published schema, runs the call off the event loop (outbound tools in a
pool of their own) and turns refusals into tool errors. A docstring is the tool's description
as assistants read it, so it is written for them.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from lexkb import answers
from lexkb.answers.ask import ask as ask_question
from lexkb.answers.classify import classify as classify_clauses
from lexkb.answers.evidence import evidence as judge_evidence
from lexkb.answers.external.web import web_search as search_web
from lexkb.answers.extract import extract as extract_span
from lexkb.answers.guardrails import check_question as guard_question
from lexkb.answers.ranking.answered import ANSWER_DEPTH
from lexkb.index import Index
from lexkb.request_types import MAX_SPANS, SearchFilters, chosen
from lexkb.requests import BY_TOOL, parameters
from lexkb.rerank import RERANK_DEPTH
from lexkb_service.mcp import degraded


def flat(function: Callable[..., Any]) -> Callable[..., Any]:
    """The tool named as `function` takes its request's fields (lexkb.requests) as flat
    arguments after the index: its signature, which the server publishes as the tool's schema,
    is the model's, with each field's type, bounds and default, and a call that leaves an
    argument out gets the model's default. The function names the same fields, in order."""
    request = BY_TOOL[function.__name__]
    index, *named = inspect.signature(function).parameters.values()
    fields = parameters(request)
    if [p.name for p in named] != [p.name for p in fields]:
        raise TypeError(f"{function.__name__} does not take {request.__name__}'s fields")
    signature = inspect.Signature([index.replace(annotation=Index), *fields])

    @functools.wraps(function)
    def tool(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return function(*bound.args, **bound.kwargs)

    tool.__signature__ = signature  # type: ignore[attr-defined]
    return tool


@flat
def search(
    index: Index,
    query: str,
    mode: str | None,
    limit: int,
    filters: SearchFilters | None,
    expand: bool,
    rerank: bool,
) -> Any:
    """Search the snapshot: hits best first, each with citation, document metadata, section
    path, page, parent_chunk_id, calibrated relevance (0-1) and content hash. With `rerank`, a
    model trained to judge whether a passage answers a question reorders the first 30 and
    gives each hit `answers` (0-1): slower, better for questions."""
    return degraded.without_model(
        lambda reranked: index.search(
            query, k=limit, mode=mode, filters=chosen(filters), expand=expand, rerank=reranked
        ),
        rerank,
        degraded.RERANK_SKIPPED,
    )


@flat
def get(index: Index, reference: str) -> Any:
    """A paragraph by chunk id or reference, with its section, neighbours and citations.
    `match` says how it matched; `found` is false for ambiguous (each document's unit it
    fits in `alternatives`: name the document), enclosing and not_found, with the nearest
    unit or the closest refs."""
    return index.get(reference)


@flat
def hop(index: Index, start: str, max_hops: int, decay: float, limit: int) -> Any:
    """Paragraphs reachable from `start` along citations (both directions), with paths."""
    reached = index.hop(start, max_hops=max_hops, decay=decay, k=limit)
    return {
        "start": start,
        "snapshot_version": index.version,
        "results": [g.to_dict() for g in reached],
    }


@flat
def documents(index: Index) -> Any:
    """Every document: number, title, type, version, dates, paragraph count."""
    return {"snapshot_version": index.version, "documents": index.documents()}


@flat
def clusters(index: Index) -> Any:
    """The snapshot's topic clusters (paragraphs grouped by their vectors), each with its
    id, label (top words), size and main documents; search takes `filters.cluster_id`."""
    return {"snapshot_version": index.version, "clusters": index.clusters()}


@flat
def format_context(index: Index, paragraphs: list[Any], query: str | None, max_tokens: int) -> Any:
    """Chunk ids (or {chunk_id, role}) as XML for a prompt, grouped by document, within
    max_tokens (cl100k_base); lists what was left out and why."""
    items = [p if isinstance(p, str) else p.model_dump(exclude_none=True) for p in paragraphs]
    return answers.format_context(index, items, query, max_tokens=max_tokens)


@flat
def verify_entities(
    index: Index, entities: list[str], source_ids: list[str], threshold: float
) -> Any:
    """Are an answer's names, numbers, amounts, dates, periods and terms in the sources?
    Each: exact, normalized, near_miss (with what the sources say) or not_found."""
    return answers.verify_entities(index, entities, source_ids, threshold)


@flat
def verify_citations(index: Index, citations: list[Any], threshold: float) -> Any:
    """Does each cited paragraph exist, and support, contradict or not address its claim?"""
    items = [c.model_dump(exclude_none=True) for c in citations]
    return answers.verify_citations(index, items, threshold)


@flat
def verify_relations(index: Index, relations: list[Any], max_hops: int, threshold: float) -> Any:
    """Is each stated relation an edge (or path) of the citation graph, of that type and
    direction? Near misses: wrong_direction, wrong_type, too_far."""
    items = [r.model_dump(exclude_none=True) for r in relations]
    return answers.verify_relations(index, items, max_hops, threshold)


@flat
def check_contradictions(index: Index, paragraph_ids: list[str], claims: list[str] | None) -> Any:
    """Conflicts on the same subject between paragraphs, or between claims and paragraphs:
    opposed obligations, differing numbers, amounts or periods."""
    return answers.check_contradictions(index, paragraph_ids, claims)


@flat
def web_search(
    index: Index,
    queries: list[str],
    max_results_per_query: int,
    preferred_domains: list[str] | None,
) -> Any:
    """Web results (Brave Search) for what the snapshot does not hold; needs BRAVE_API_KEY,
    else no results and a warning. Web results are not snapshot sources."""
    return search_web(queries, max_results_per_query, preferred_domains or (), limits=index.limits)


@flat
def ask(index: Index, question: str, filters: SearchFilters | None) -> Any:
    """The whole loop: guardrails, retrieval, evidence, an answer whose every sentence is
    cited [n] and verified, the mode (DIRECT, QUALIFIED, ABSTAIN) with its reason, sources
    with relevance and authority, and whether it came from the cache."""
    return degraded.noted(ask_question(index, question, filters=chosen(filters)), question)


@flat
def evidence(index: Index, query: str, filters: SearchFilters | None) -> Any:
    """Is there enough to answer? Searches, then judges scope, relevance, authority and
    conflicts: mode DIRECT, QUALIFIED or ABSTAIN with the reason."""
    return degraded.noted(judge_evidence(index, query, filters=chosen(filters)), query)


@flat
def extract(
    index: Index, question: str, document: str | None, limit: int, clause_type: str | None
) -> Any:
    """The sentences that answer `question` (in one document, or anywhere), each with its
    citation and character offsets in its paragraph; no_answer when nothing addresses it.
    Name the `clause_type` that answers (as `classify` names them: "Cap On Liability") to have
    the paragraphs labelled with it first."""
    return degraded.without_model(
        lambda reranked: extract_span(
            index, question, document=document, k=limit, rerank=reranked, clause_type=clause_type
        ),
        True,
        degraded.EXTRACT_UNRANKED,
    )


@flat
def classify(
    index: Index, document: str, clause_types: dict[str, str] | list[str] | str | None
) -> Any:
    """A document's clauses by type, each with ref, page, text, score and method. Without
    clause_types: termination, indemnity, limitation of liability, confidentiality, dispute
    resolution, governing law, force majeure, assignment, warranties, payment terms. CUAD's
    41 categories ("Cap On Liability", "Change Of Control", ...) are fitted on
    lawyer-marked contracts: name them, or give "cuad" for all. Your own labels work
    without training: give each a one-line description (method zero-shot)."""
    return classify_clauses(index, document=document, clause_types=clause_types)


@flat
def check_question(index: Index, question: str) -> Any:
    """Would lexkb answer this? Refuses predictive, estimation, advice, own-data and
    out-of-scope questions, with the reason and three questions the index can answer."""
    return degraded.noted(guard_question(index, question), question)


# A cost unit (lexkb_service.mcp.admission) is about this many reads of a pair model: a question
# or a claim read with one paragraph, some 50 ms of one core.
READS_PER_UNIT = 5


def units(reads: int) -> int:
    """The cost units of `reads` pair-model reads: at least 1."""
    return max(1, math.ceil(reads / READS_PER_UNIT))


def _search_cost(arguments: Mapping[str, Any]) -> int:
    return units(RERANK_DEPTH) if arguments.get("rerank") else 0


def _contradictions_cost(arguments: Mapping[str, Any]) -> int:
    """Claims are read by the support model against each paragraph; paragraphs alone, by
    rules (cheap)."""
    claims = arguments.get("claims") or []
    return units(len(claims) * len(arguments["paragraph_ids"])) if claims else 0


def _classify_cost(arguments: Mapping[str, Any]) -> int:
    chosen_types = arguments.get("clause_types")
    if isinstance(chosen_types, list | dict):
        return units(len(chosen_types))
    return units(50 if chosen_types else 10)  # "cuad": 41 types; none: the 10 defaults


def _fixed(reads: int) -> Callable[[Mapping[str, Any]], int]:
    return lambda _: units(reads)


@dataclass(frozen=True)
class Tool:
    """A row of the table: the published name, the function, its description, whether it may
    wait on another host (an LLM endpoint, Brave), so that it runs in the outbound pool
    (lexkb_service.mcp.pools) and cannot starve the local tools, and what a call costs in cost units
    (lexkb_service.mcp.admission) given its arguments: 0 for a cheap call, which runs in the local
    pool; above 0, a call that runs the pair models, in the costly pool, counted against the
    caller's key under lexkb serve."""

    name: str
    function: Callable[..., Any]
    outbound: bool = False
    cost: Callable[[Mapping[str, Any]], int] | None = None

    def cost_of(self, arguments: Mapping[str, Any]) -> int:
        return self.cost(arguments) if self.cost is not None else 0

    @property
    def description(self) -> str:
        """The docstring with each further line indented by eight spaces: byte for byte the
        description clients received when the tools were closures nested in build_server."""
        return "\n        ".join(inspect.cleandoc(self.function.__doc__ or "").splitlines())


# The published names, in the order clients list them.
# Costs: evidence and check_question read the first ANSWER_DEPTH hits with the relevance
# model; extract those and its answers' sentences; ask evidence's reads and a check of each
# sentence of the answer; verify_citations one read (or a few) per citation.
TOOLS = (
    Tool("search", search, cost=_search_cost),
    Tool("get", get),
    Tool("hop", hop),
    Tool("documents", documents),
    Tool("clusters", clusters),
    Tool("format_context", format_context),
    Tool("verify_entities", verify_entities),
    Tool("verify_citations", verify_citations, cost=lambda a: units(len(a["citations"]))),
    Tool("verify_relations", verify_relations),
    Tool("check_contradictions", check_contradictions, cost=_contradictions_cost),
    Tool("web_search", web_search, outbound=True),
    Tool("ask", ask, outbound=True, cost=_fixed(2 * ANSWER_DEPTH)),
    Tool("evidence", evidence, cost=_fixed(ANSWER_DEPTH)),
    Tool("extract", extract, cost=_fixed(ANSWER_DEPTH + MAX_SPANS)),
    Tool("classify", classify, cost=_classify_cost),
    Tool("check_question", check_question, cost=_fixed(ANSWER_DEPTH)),
)
BY_NAME = {tool.name: tool for tool in TOOLS}
