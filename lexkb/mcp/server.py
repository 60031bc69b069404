"""lexkb over MCP: the query module's tools for AI assistants, on stdio or streamable HTTP.

    lexkb mcp --index ROOT [--http 127.0.0.1:8765]

A thin adapter: each tool validates its arguments against a typed schema (sizes bounded, as
lexkb.limits bounds the Python API), calls the function of the same name in lexkb.index or
lexkb.answers on the snapshot CURRENT names (lexkb.current follows it as new snapshots are
published), and returns that function's `to_dict()` as structured content. A refused argument
comes back as a tool error that says what is wrong; the server stays up for the next call.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field

from lexkb import answers
from lexkb import limits as check
from lexkb.answers.ask import ask as ask_question
from lexkb.answers.classify import classify as classify_clauses
from lexkb.answers.evidence import evidence as judge_evidence
from lexkb.answers.extract import extract as extract_span
from lexkb.answers.guardrails import check_question as guard_question
from lexkb.answers.web import web_search as search_web
from lexkb.core.store.snapshot import SnapshotError
from lexkb.current import CurrentIndex

INSTRUCTIONS = """\
lexkb answers questions from a versioned snapshot of legal, regulatory and standards documents,
with citations. `ask` runs the whole loop and returns a verified, cited answer with its mode
(DIRECT, QUALIFIED, ABSTAIN). To build an answer yourself, work in this order: `search` (hybrid by default; each hit has a citation, a
calibrated relevance 0-1 and a chunk id) -> `hop` from the best hits along citations ->
`get` a reference the text mentions -> `format_context` the chosen chunk ids -> write the
answer citing refs -> check it with `verify_citations`, `verify_entities`, `verify_relations`
and `check_contradictions`. Every lookup says how it matched (exact, contains, enclosing,
not_found): cite only exact and contains matches."""

Text = Annotated[str, Field(min_length=1, max_length=2000)]
Reference = Annotated[
    str,
    Field(
        min_length=1,
        max_length=300,
        description="a chunk id or a reference as people write it",
        examples=["Article 6(1)(a)", "Rule 4.3.1 of the Lexkb Rulebook", "LSA 230, para. A8"],
    ),
]
Many = Annotated[list[str], Field(min_length=1, max_length=200)]


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
    date_range: DateRange | None = Field(None, description="effective (else published) date")
    period: (
        Literal[
            "today", "yesterday", "last_7_days", "last_30_days", "last_90_days", "last_365_days"
        ]
        | None
    ) = Field(None, description="relative dates; not with date_range")
    section: str | None = Field(None, description="a section heading, path prefix or number")
    chunk_level: Literal["paragraph", "section", "part", "note"] | None = None
    clause_type: str | list[str] | None = Field(
        None, description="contract clause type", examples=["governing law", "termination"]
    )
    cards_only: bool | None = Field(None, description="only paragraphs that define a term")
    cluster_id: int | list[int] | None = Field(None, description="topic clusters (see clusters)")
    deprecated: bool | None = None


class ContextParagraph(BaseModel):
    model_config = ConfigDict(extra="forbid")
    chunk_id: Annotated[str, Field(min_length=1, max_length=300)]
    role: Literal["primary", "supporting", "context"] | None = None


class CitedClaim(BaseModel):
    model_config = ConfigDict(extra="forbid")
    paragraph_id: str | None = Field(None, max_length=300, description="a chunk id")
    ref: str | None = Field(None, max_length=300, examples=["Article 5(1)(e)"])
    document: str | None = Field(
        None, max_length=300, description="a whole document, when no paragraph is cited"
    )
    claim: Annotated[str, Field(min_length=1, max_length=2000)]


class Relation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    source: Reference
    target: Reference
    relation_type: Literal["cites", "defined-in", "cited-by", "related"] = "cites"
    max_hops: int | None = Field(None, ge=1, le=10)


def build_server(root: str, limits: check.QueryLimits = check.DEFAULT_LIMITS):
    """The MCP server for the index at `root` (opened now, so a bad root fails at start)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from lexkb import __version__

    current = CurrentIndex(root, limits)
    server = MCPServer("lexkb", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    async def run(work) -> dict[str, Any]:
        """One call on the current snapshot, off the event loop; refusals become tool errors."""
        index = current.get()
        try:
            result = await anyio.to_thread.run_sync(work, index)
        except (check.QueryError, ValueError, KeyError, SnapshotError) as exc:
            message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
            raise ToolError(str(message)) from exc
        payload = result.to_dict() if hasattr(result, "to_dict") else result
        if current.last_error:
            payload = {**payload, "server_warning": current.last_error}
        return payload

    @server.tool(structured_output=True)
    async def search(
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=2000,
                examples=["how long must client money records be kept"],
            ),
        ],
        mode: Literal["hybrid", "keyword", "vector"] | None = None,
        limit: Annotated[int, Field(ge=1, le=100)] = 10,
        filters: SearchFilters | None = None,
        expand: bool = False,
    ) -> dict[str, Any]:
        """Search the snapshot: hits best first, each with citation, document metadata, section
        path, page, parent_chunk_id, calibrated relevance (0-1) and content hash."""
        chosen = filters.model_dump(exclude_none=True, mode="json") if filters else None
        return await run(
            lambda index: index.search(query, k=limit, mode=mode, filters=chosen, expand=expand)
        )

    @server.tool(structured_output=True)
    async def get(reference: Reference) -> dict[str, Any]:
        """A paragraph by chunk id or reference, with its section, neighbours and citations.
        `match` says how it matched; `found` is false for enclosing and not_found, with the
        nearest unit or the closest refs."""
        return await run(lambda index: index.get(reference))

    @server.tool(structured_output=True)
    async def hop(
        start: Reference,
        max_hops: Annotated[int, Field(ge=1, le=10)] = 2,
        decay: Annotated[float, Field(gt=0, le=1)] = 0.7,
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
    ) -> dict[str, Any]:
        """Paragraphs reachable from `start` along citations (both directions), with paths."""
        return await run(
            lambda index: {
                "start": start,
                "snapshot_version": index.version,
                "results": [
                    g.to_dict() for g in index.hop(start, max_hops=max_hops, decay=decay, k=limit)
                ],
            }
        )

    @server.tool(structured_output=True)
    async def documents() -> dict[str, Any]:
        """Every document: number, title, type, version, dates, paragraph count."""
        return await run(
            lambda index: {"snapshot_version": index.version, "documents": index.documents()}
        )

    @server.tool(structured_output=True)
    async def clusters() -> dict[str, Any]:
        """The snapshot's topic clusters (paragraphs grouped by their vectors), each with its
        id, label (top words), size and main documents; search takes `filters.cluster_id`."""
        return await run(
            lambda index: {"snapshot_version": index.version, "clusters": index.clusters()}
        )

    @server.tool(structured_output=True)
    async def format_context(
        paragraphs: Annotated[list[str | ContextParagraph], Field(min_length=1, max_length=200)],
        query: Annotated[str, Field(max_length=2000)] | None = None,
        max_tokens: Annotated[int, Field(ge=1, le=200_000)] = 8000,
    ) -> dict[str, Any]:
        """Chunk ids (or {chunk_id, role}) as XML for a prompt, grouped by document, within
        max_tokens (cl100k_base); lists what was left out and why."""
        items = [p if isinstance(p, str) else p.model_dump(exclude_none=True) for p in paragraphs]
        return await run(
            lambda index: answers.format_context(index, items, query, max_tokens=max_tokens)
        )

    @server.tool(structured_output=True)
    async def verify_entities(
        entities: Annotated[
            list[str],
            Field(
                min_length=1, max_length=200, examples=[["30 days", "USD 5,000", "Client Money"]]
            ),
        ],
        source_ids: Many,
        threshold: Annotated[float, Field(ge=0, le=1)] = 0.80,
    ) -> dict[str, Any]:
        """Are an answer's names, numbers, amounts, dates, periods and terms in the sources?
        Each: exact, normalized, near_miss (with what the sources say) or not_found."""
        return await run(
            lambda index: answers.verify_entities(index, entities, source_ids, threshold)
        )

    @server.tool(structured_output=True)
    async def verify_citations(
        citations: Annotated[list[CitedClaim], Field(min_length=1, max_length=200)],
        threshold: Annotated[float, Field(ge=0, le=1)] = 0.75,
    ) -> dict[str, Any]:
        """Does each cited paragraph exist, and support, contradict or not address its claim?"""
        items = [c.model_dump(exclude_none=True) for c in citations]
        return await run(lambda index: answers.verify_citations(index, items, threshold))

    @server.tool(structured_output=True)
    async def verify_relations(
        relations: Annotated[list[Relation], Field(min_length=1, max_length=200)],
        max_hops: Annotated[int, Field(ge=1, le=10)] = 1,
        threshold: Annotated[float, Field(ge=0, le=1)] = 0.70,
    ) -> dict[str, Any]:
        """Is each stated relation an edge (or path) of the citation graph, of that type and
        direction? Near misses: wrong_direction, wrong_type, too_far."""
        items = [r.model_dump(exclude_none=True) for r in relations]
        return await run(lambda index: answers.verify_relations(index, items, max_hops, threshold))

    @server.tool(structured_output=True)
    async def check_contradictions(
        paragraph_ids: Many,
        claims: Annotated[list[str], Field(min_length=1, max_length=200)] | None = None,
    ) -> dict[str, Any]:
        """Conflicts on the same subject between paragraphs, or between claims and paragraphs:
        opposed obligations, differing numbers, amounts or periods."""
        return await run(lambda index: answers.check_contradictions(index, paragraph_ids, claims))

    @server.tool(structured_output=True)
    async def web_search(
        queries: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=2000)]],
            Field(min_length=1, max_length=10),
        ],
        max_results_per_query: Annotated[int, Field(ge=1, le=20)] = 5,
        preferred_domains: Annotated[list[str], Field(max_length=50)] | None = None,
    ) -> dict[str, Any]:
        """Web results (Brave Search) for what the snapshot does not hold; needs BRAVE_API_KEY,
        else no results and a warning. Web results are not snapshot sources."""
        return await run(
            lambda index: search_web(
                queries, max_results_per_query, preferred_domains or (), limits=index.limits
            )
        )

    @server.tool(structured_output=True)
    async def ask(
        question: Annotated[
            str, Field(min_length=1, max_length=2000, examples=["How long must records be kept?"])
        ],
        filters: SearchFilters | None = None,
    ) -> dict[str, Any]:
        """The whole loop: guardrails, retrieval, evidence, an answer whose every sentence is
        cited [n] and verified, the mode (DIRECT, QUALIFIED, ABSTAIN) with its reason, sources
        with relevance and authority, and whether it came from the cache."""
        chosen = filters.model_dump(exclude_none=True, mode="json") if filters else None
        return await run(lambda index: ask_question(index, question, filters=chosen))

    @server.tool(structured_output=True)
    async def evidence(
        query: Text,
        filters: SearchFilters | None = None,
    ) -> dict[str, Any]:
        """Is there enough to answer? Searches, then judges scope, relevance, authority and
        conflicts: mode DIRECT, QUALIFIED or ABSTAIN with the reason."""
        chosen = filters.model_dump(exclude_none=True, mode="json") if filters else None
        return await run(lambda index: judge_evidence(index, query, filters=chosen))

    @server.tool(structured_output=True)
    async def extract(
        question: Text,
        document: Reference | None = None,
        limit: Annotated[int, Field(ge=1, le=20)] = 3,
    ) -> dict[str, Any]:
        """The sentences that answer `question` (in one document, or anywhere), each with its
        citation and character offsets in its paragraph; no_answer when nothing addresses it."""
        return await run(lambda index: extract_span(index, question, document=document, k=limit))

    @server.tool(structured_output=True)
    async def classify(
        document: Reference,
        clause_types: Annotated[
            dict[
                Annotated[str, Field(min_length=1, max_length=200)],
                Annotated[str, Field(max_length=1000)],
            ],
            Field(
                min_length=1,
                max_length=50,
                examples=[{"non-solicitation": "a party may not hire the other's employees"}],
            ),
        ]
        | Annotated[
            list[Annotated[str, Field(min_length=1, max_length=200)]],
            Field(min_length=1, max_length=50, examples=[["Cap On Liability", "Non-Compete"]]),
        ]
        | Literal["cuad"]
        | None = None,
    ) -> dict[str, Any]:
        """A document's clauses by type, each with ref, page, text, score and method. Without
        clause_types: termination, indemnity, limitation of liability, confidentiality, dispute
        resolution, governing law, force majeure, assignment, warranties, payment terms. CUAD's
        41 categories ("Cap On Liability", "Change Of Control", ...) are fitted on
        lawyer-marked contracts: name them, or give "cuad" for all. Your own labels work
        without training: give each a one-line description (method zero-shot)."""
        return await run(
            lambda index: classify_clauses(index, document=document, clause_types=clause_types)
        )

    @server.tool(structured_output=True)
    async def check_question(question: Text) -> dict[str, Any]:
        """Would lexkb answer this? Refuses predictive, estimation, advice, own-data and
        out-of-scope questions, with the reason and three questions the index can answer."""
        return await run(lambda index: guard_question(index, question))

    @server.prompt()
    def cited_answer(question: str) -> str:
        """The loop for a cited answer from this index."""
        return (
            f"Answer from the lexkb index only, with citations.\n\nQuestion: {question}\n\n"
            "1. search the question (filters if the question names a document or date).\n"
            "2. hop from the two or three best hits to what they cite.\n"
            "3. format_context with the chunk ids you will rely on (primary: the hits that "
            "answer; supporting: what they cite).\n"
            "4. Write the answer from that context alone; cite each claim with its ref.\n"
            "5. verify_citations with each claim and its ref, verify_entities with the "
            "numbers, dates and names you wrote, check_contradictions on the chunks used.\n"
            "6. Fix or drop what failed; if nothing relevant was found, say so instead."
        )

    return server


def serve(root: str, http: str | None = None) -> None:
    """Run until stopped: stdio, or streamable HTTP at `http` ("HOST:PORT", path /mcp)."""
    host, _, port = (http or "").rpartition(":")
    if http is not None and (not host or not port.isdigit()):
        raise ValueError(f"--http takes HOST:PORT, such as 127.0.0.1:8765, not {http!r}")
    server = build_server(root)
    if http is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host=host, port=int(port))
