"""CLI commands for the answer tools (lexkb.answers).

Each prints plain text by default and the tool's `to_dict()` with `--json`. A verifier exits 0
when its check passed and 1 when it did not, so a script can gate on it. Plain text holds
document and web text, so it goes through `safe` (no escape sequence reaches the terminal).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lexkb import defaults
from lexkb.cli.output import Reportable
from lexkb.core.text.terminal import safe
from lexkb.graph import CITES
from lexkb.index import Index


def _json_list(path: str, what: str) -> list[Any]:
    """A JSON list from a file, or from stdin for "-"."""
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"--input is not JSON: {exc}") from exc
    if not isinstance(value, list):
        raise ValueError(f"--input must hold a JSON list of {what}")
    return value


def _emit(result: Reportable, as_json: bool, lines: Callable[[], list[str]]) -> None:
    if as_json:
        print(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    else:
        print(safe("\n".join(lines())))


def cmd_context(args: argparse.Namespace) -> int:
    from lexkb.answers import format_context

    index = Index.open(args.index)
    context = format_context(index, args.ids, args.query, max_tokens=args.max_tokens)
    if args.json:
        print(json.dumps(context.to_dict(), ensure_ascii=False, indent=2))
        return 0
    print(safe(context.xml))
    for omitted in context.omitted:
        print(safe(f"left out {omitted.chunk_id}: {omitted.reason}"), file=sys.stderr)
    print(f"{context.tokens} of {context.max_tokens} tokens ({context.tokenizer})", file=sys.stderr)
    return 0


def cmd_verify_entities(args: argparse.Namespace) -> int:
    from lexkb.answers import verify_entities

    result = verify_entities(Index.open(args.index), args.entities, args.sources, args.threshold)
    _emit(
        result,
        args.json,
        lambda: (
            [
                f"{'found' if e.found else e.match.replace('_', ' ')}: {e.entity!r} ({e.kind}): "
                f"{e.reason}"
                for e in result.entities
            ]
            + [f"score {result.score:.2f}, {'passed' if result.passed else 'failed'}"]
        ),
    )
    return 0 if result.passed else 1


def cmd_verify_citations(args: argparse.Namespace) -> int:
    from lexkb.answers import verify_citations

    citations = [{"ref": ref, "claim": claim} for ref, claim in args.cite or []]
    if args.input:
        citations += _json_list(args.input, "{paragraph_id or ref, claim} objects")
    if not citations:
        raise ValueError("give --cite REF CLAIM or --input FILE")
    result = verify_citations(Index.open(args.index), citations, args.threshold)

    def lines() -> list[str]:
        out = []
        for c in result.citations:
            out.append(f"{c.verdict.replace('_', ' ')}: {c.cited} - {c.reason}")
            if c.best_sentence:
                out.append(f"   best sentence: {c.best_sentence}")
        out += [f"warning: {w}" for w in result.warnings]
        return [*out, f"score {result.score:.2f}, {'passed' if result.passed else 'failed'}"]

    _emit(result, args.json, lines)
    return 0 if result.passed else 1


def cmd_verify_relations(args: argparse.Namespace) -> int:
    from lexkb.answers import verify_relations

    relations = []
    if args.source and args.target:
        relations.append({"source": args.source, "target": args.target, "relation_type": args.type})
    if args.input:
        relations += _json_list(args.input, "{source, target, relation_type} objects")
    if not relations:
        raise ValueError("give SOURCE TARGET or --input FILE")
    result = verify_relations(Index.open(args.index), relations, args.max_hops, args.threshold)
    _emit(
        result,
        args.json,
        lambda: (
            [
                f"{r.status.replace('_', ' ')}: {r.source} {r.relation_type} {r.target} - {r.reason}"
                for r in result.relations
            ]
            + [f"score {result.score:.2f}, {'passed' if result.passed else 'failed'}"]
        ),
    )
    return 0 if result.passed else 1


def cmd_contradictions(args: argparse.Namespace) -> int:
    from lexkb.answers import check_contradictions

    result = check_contradictions(Index.open(args.index), args.ids, args.claim)

    def lines() -> list[str]:
        out = []
        for c in result.conflicts:
            out.append(f"{c.kind}: {c.first} vs {c.second}: {' / '.join(c.words)}")
            out.append(f"   {c.first_sentence}")
            out.append(f"   {c.second_sentence}")
        return [*out, f"{result.count} conflict(s)"]

    _emit(result, args.json, lines)
    return 0 if result.passed else 1


def cmd_web_search(args: argparse.Namespace) -> int:
    from lexkb.answers.external.web import web_search

    result = web_search(args.queries, args.max_results, args.prefer or ())
    _emit(
        result,
        args.json,
        lambda: (
            [f"{r.score:.2f} {r.title} <{r.url}>\n   {r.snippet}" for r in result.results]
            + [f"warning: {w}" for w in result.warnings]
        ),
    )
    return 0


def add_commands(
    command: Callable[[str, str], argparse.ArgumentParser],
    with_index: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Register the commands on the CLI's subparsers (`command(name, help)` makes one)."""
    context = command("context", "paragraphs as XML prompt context within a token budget")
    context.add_argument("ids", nargs="+", help="chunk ids, primary first")
    context.add_argument("--query", help="the question, recorded in the XML")
    context.add_argument(
        "--max-tokens", type=int, default=defaults.CONTEXT_TOKENS, help="budget (cl100k_base)"
    )
    with_index(context)
    context.set_defaults(func=cmd_context)

    entities = command(
        "verify-entities", "are an answer's numbers, dates, amounts, names in the sources?"
    )
    entities.add_argument("entities", nargs="+", help="e.g. '30 days' 'USD 5,000' 'Client Money'")
    entities.add_argument("--sources", nargs="+", required=True, help="chunk ids or references")
    entities.add_argument(
        "--threshold", type=float, default=defaults.ENTITY_THRESHOLD, help="share found to pass"
    )
    with_index(entities)
    entities.set_defaults(func=cmd_verify_entities)

    citations = command(
        "verify-citations", "does each cited paragraph exist and support its claim?"
    )
    citations.add_argument(
        "--cite", nargs=2, action="append", metavar=("REF", "CLAIM"), help="repeatable"
    )
    citations.add_argument("--input", help="JSON list of {paragraph_id or ref, claim}; - = stdin")
    citations.add_argument(
        "--threshold",
        type=float,
        default=defaults.CITATION_THRESHOLD,
        help="share supported to pass",
    )
    with_index(citations)
    citations.set_defaults(func=cmd_verify_citations)

    relations = command(
        "verify-relations", "is a stated relation an edge (or path) of the citation graph?"
    )
    relations.add_argument("source", nargs="?", help="chunk id or reference")
    relations.add_argument("target", nargs="?", help="chunk id or reference")
    relations.add_argument(
        "--type", default=CITES, choices=["cites", "defined-in", "cited-by", "related"]
    )
    relations.add_argument(
        "--max-hops", type=int, default=defaults.RELATION_MAX_HOPS, help="path length allowed"
    )
    relations.add_argument("--input", help="JSON list of {source, target, relation_type}")
    relations.add_argument(
        "--threshold",
        type=float,
        default=defaults.RELATION_THRESHOLD,
        help="share confirmed to pass",
    )
    with_index(relations)
    relations.set_defaults(func=cmd_verify_relations)

    conflicts = command("contradictions", "conflicts between paragraphs, or claims and paragraphs")
    conflicts.add_argument("ids", nargs="+", help="chunk ids or references")
    conflicts.add_argument("--claim", action="append", help="a claim to check (repeatable)")
    with_index(conflicts)
    conflicts.set_defaults(func=cmd_contradictions)

    web = command("web-search", "web results (Brave Search; needs BRAVE_API_KEY)")
    web.add_argument("queries", nargs="+")
    web.add_argument(
        "--max-results",
        type=int,
        default=defaults.WEB_RESULTS_PER_QUERY,
        help="per query (1 to 20)",
    )
    web.add_argument("--prefer", action="append", help="a preferred domain (repeatable)")
    web.add_argument("--json", action="store_true", help="print JSON (docs/schemas/)")
    web.set_defaults(func=cmd_web_search)
