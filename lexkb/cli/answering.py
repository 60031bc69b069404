"""CLI commands for answering: ask, evidence, extract, classify, clusters, check-question.

`ask` prints the answer with numbered citations, its mode and any warnings; `--json` prints the
typed Answer. `ask` and `evidence` exit 0 when the question was answered (DIRECT or QUALIFIED)
and 1 when it abstained, so a script can tell the two apart. Plain text holds document and LLM
text, so it goes through `safe` (no escape sequence reaches the terminal).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from lexkb import defaults
from lexkb.cli.output import Reportable
from lexkb.core.text.terminal import safe
from lexkb.index import Index


def _filters(args: argparse.Namespace) -> dict[str, Any] | None:
    chosen = {
        "document": args.document,
        "document_type": args.type,
        "authority_level": args.authority,
    }
    return {k: v for k, v in chosen.items() if v} or None


def _print(result: Reportable, as_json: bool, lines: list[str]) -> None:
    print(
        json.dumps(result.to_dict(), ensure_ascii=False, indent=2)
        if as_json
        else safe("\n".join(lines))
    )


def cmd_ask(args: argparse.Namespace) -> int:
    from lexkb.answers.ask import ask

    answer = ask(Index.open(args.index), args.question, _filters(args), history=args.history)
    lines = [f"[{answer.mode}] {answer.answer or 'no answer'}", answer.explanation]
    if answer.read_as != "read alone":
        lines.append(f"read as: {answer.read_as}")
    lines += [
        f"  [{s.number}] {s.citation}" + (f" <{s.url}>" if s.url else "") for s in answer.sources
    ]
    if answer.suggestions:
        lines.append("questions this index can answer:")
        lines += [f"  - {s}" for s in answer.suggestions]
    if answer.verification:
        v = answer.verification
        lines.append(
            f"verified: {v['supported']}/{v['sentences']} sentences supported, "
            f"entities {v['entity_score']:.2f}; confidence {answer.confidence:.2f}; "
            f"{answer.generated_by}"
        )
        answering = v.get("answering") or {}
        if answering.get("chance") is not None:
            lines.append(
                f"answers the question: {answering['source']} "
                f"(the relevance model's chance {answering['chance']:.2f})"
            )
    lines += [f"warning: {w}" for w in answer.warnings]
    _print(answer, args.json, lines)
    return 0 if answer.mode != "ABSTAIN" else 1


def cmd_evidence(args: argparse.Namespace) -> int:
    from lexkb.answers.evidence import evidence

    found = evidence(Index.open(args.index), args.query, filters=_filters(args))
    lines = [
        f"{found.mode}" + (f" ({found.reason})" if found.reason else "") + f": {found.explanation}",
        f"scope {found.scope:.2f}, best relevance {found.top_relevance:.2f}, "
        f"{found.strong_hits} strong hits, authority "
        + ("unknown" if found.authority is None else f"{found.authority:.2f}")
        + f", {len(found.conflicts)} conflicts",
    ]
    lines += [f"  {h.relevance:.2f}  {h.citation}" for h in found.hits[:5]]
    _print(found, args.json, lines)
    return 0 if found.answerable else 1


def cmd_extract(args: argparse.Namespace) -> int:
    from lexkb.answers.extract import extract

    result = extract(
        Index.open(args.index),
        args.question,
        document=args.document_name,
        k=args.k,
        clause_type=args.clause_type,
    )
    lines = [f"no answer: {result.reason}"] if result.no_answer else []
    lines += [
        f"{a.confidence:.2f}  {a.citation} [{a.start}:{a.end}]"
        f"{'' if a.kind == 'sentence' else '  ' + a.kind}\n      {a.text}"
        for a in result.answers
    ]
    _print(result, args.json, lines)
    return 0


def cmd_classify(args: argparse.Namespace) -> int:
    from lexkb.answers.classify import FITTED_SET, classify

    labels: dict[str, str] | str | None = FITTED_SET if args.cuad else None
    if args.type:
        labels = {}
        for item in args.type:
            name, _, description = item.partition(":")
            labels[name.strip()] = description.strip() or name.strip()
    result = classify(Index.open(args.index), document=args.document_name, clause_types=labels)
    lines = [
        f"{c.score:.2f}  {c.clause_type:<33} {c.method:<9} {c.citation}" for c in result.clauses
    ]
    _print(result, args.json, lines or ["no clause of these types found"])
    return 0


def cmd_clusters(args: argparse.Namespace) -> int:
    index = Index.open(args.index)
    found = index.clusters()
    if args.json:
        print(json.dumps({"snapshot_version": index.version, "clusters": found}, indent=2))
        return 0
    for cluster in found:
        documents = ", ".join(cluster["documents"])
        print(
            f"{cluster['cluster_id']:>4}  {cluster['paragraphs']:>5}  "
            f"{safe(cluster['label'])}  ({safe(documents)})"
        )
    if not found:
        print("no topic clusters: this snapshot has no embeddings")
    return 0


def cmd_check_question(args: argparse.Namespace) -> int:
    from lexkb.answers.guardrails import check_question

    result = check_question(Index.open(args.index), args.question)
    lines = [
        f"{'allowed' if result.allowed else 'refused'} ({result.question_type}): {result.reason}"
    ]
    lines += [f"  - {s}" for s in result.suggestions]
    _print(result, args.json, lines)
    return 0 if result.allowed else 1


def _add_filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--document", action="append", help="only this document (repeatable)")
    parser.add_argument("--type", action="append", help="only this document type")
    parser.add_argument("--authority", action="append", help="only this authority level")


def add_commands(
    command: Callable[[str, str], argparse.ArgumentParser],
    with_index: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Register the commands on the CLI's subparsers (`command(name, help)` makes one)."""
    ask = command("ask", "answer a question with numbered, verified citations and a mode")
    ask.add_argument("question")
    ask.add_argument("--history", help="JSON file of earlier turns: read, then appended to")
    _add_filters(ask)
    with_index(ask)
    ask.set_defaults(func=cmd_ask)

    evidence = command(
        "evidence", "is there enough in the index to answer? DIRECT/QUALIFIED/ABSTAIN"
    )
    evidence.add_argument("query")
    _add_filters(evidence)
    with_index(evidence)
    evidence.set_defaults(func=cmd_evidence)

    extract = command("extract", "the sentences that answer a question, with offsets")
    extract.add_argument("question")
    extract.add_argument("--document", dest="document_name", help="look in this document only")
    extract.add_argument(
        "-k", "--k", type=int, default=defaults.EXTRACT_LIMIT, help="answers to return"
    )
    extract.add_argument(
        "--clause-type", help="the clause type that answers: paragraphs labelled with it first"
    )
    with_index(extract)
    extract.set_defaults(func=cmd_extract)

    classify = command(
        "classify", "a document's clauses by type (CUAD's categories fitted; your own labels too)"
    )
    classify.add_argument("document_name", metavar="DOCUMENT", help="document key, title or code")
    labels = classify.add_mutually_exclusive_group()
    labels.add_argument(
        "--type",
        action="append",
        help="a label: a CUAD category by name ('Non-Compete'), or your own as 'label: one-line "
        "description' (repeatable)",
    )
    labels.add_argument("--cuad", action="store_true", help="every fitted CUAD category")
    with_index(classify)
    classify.set_defaults(func=cmd_classify)

    clusters = command("clusters", "the snapshot's topic clusters, largest first")
    with_index(clusters)
    clusters.set_defaults(func=cmd_clusters)

    guard = command("check-question", "would lexkb answer this question? (guardrails)")
    guard.add_argument("question")
    with_index(guard)
    guard.set_defaults(func=cmd_check_question)
