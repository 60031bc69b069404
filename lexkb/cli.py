"""lexkb: build a citable index of legal, regulatory and standards documents, then search it,
look up references, follow citations and export documents, with a snapshot behind every answer;
format prompt context and verify generated answers against it; serve all of it over MCP.

Only `build` loads the pipeline (Dagster, unstructured); every other command needs just the
query module, so it starts fast and works on a machine that only holds snapshots.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import io
import json
import os
import re
import sys
import time
from pathlib import Path

from lexkb.cli_answers import add_commands as add_answer_commands
from lexkb.cli_ask import add_commands as add_ask_commands
from lexkb.embedders import PROVIDERS
from lexkb.index import MODES, Hit, Index
from lexkb.snapshot import SnapshotError


def _default_index() -> str:
    return os.environ.get("LEXKB_ROOT", "var/index")


INDEX_HELP = (
    "index root (follows CURRENT) or one snapshot folder; default $LEXKB_ROOT, else var/index "
    "(here: %(default)s)"
)


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def safe(text: str) -> str:
    """Document text as a terminal may show it: control characters (escape sequences that
    would move the cursor, recolour or retitle the terminal) become visible codes."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _print_hit(hit: Hit, number: int | None = None, full: bool = False) -> None:
    lead = f"{number}. " if number is not None else ""
    score = f"  score {hit.score:.3f}" if hit.score is not None else ""
    relevance = f"  relevance {hit.relevance:.2f}" if hit.relevance is not None else ""
    print(f"{lead}[{safe(hit.citation)}]{score}{relevance}")
    if hit.expanded_from:
        print(f"   (joined through a citation from {safe(hit.expanded_from)})")
    if hit.section_path:
        print(f"   {safe(' > '.join(hit.section_path))}")
    if full:
        for line in hit.text.splitlines():
            print(f"   {safe(line)}")
        return
    text = " ".join(hit.text.split())
    print(f"   {safe(text[:400])}{'…' if len(text) > 400 else ''}")


def _progress(done: int, total: int, started: float) -> None:
    if not sys.stderr.isatty() and done != total:
        return
    width = 30
    filled = width * done // max(total, 1)
    rate = done / max(time.perf_counter() - started, 1e-9)
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {rate:.0f}/s")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def cmd_build(args: argparse.Namespace) -> int:
    from pipelines import dbt_runner
    from transforms import checks_worker
    from transforms.isolation import start_server
    from transforms.sources import formats_in

    for source in args.sources:  # before any worker starts (run_build checks it again)
        if not os.path.exists(source):
            raise ValueError(f"source path does not exist: {source}")
    # The parse workers' imports overlap Dagster's (transforms.isolation).
    start_server(formats_in(args.sources))
    checks_worker.start()  # and Great Expectations' import, in the checks' own worker
    dbt_runner.worker.start()  # and dbt's first run, in dbt's
    try:
        return _build(args)
    finally:  # whatever happened: a live worker would hold the process open at exit (run())
        checks_worker.stop()
        dbt_runner.worker.stop()


def _build(args: argparse.Namespace) -> int:
    from lexkb.root_lock import RootBusy
    from pipelines.build import NothingPublished, run_build

    started = time.perf_counter()
    # dbt's log lines go to stdout; keep stdout for the report (and for --json).
    chatter = sys.stderr if args.verbose else io.StringIO()
    try:
        with contextlib.redirect_stdout(chatter):
            report = run_build(
                args.sources,
                args.out,
                log_level="INFO" if args.verbose else "ERROR",
                embedder=args.embedder,
                wait_seconds=args.wait,
                progress=not (args.quiet or args.json or args.verbose),
                follow_symlinks=args.follow_symlinks,
            )
    except (NothingPublished, RootBusy) as exc:
        if args.json:
            print(json.dumps({"published_new": False, "error": str(exc)}))
        else:
            print(f"lexkb: not published: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(
            json.dumps(
                {
                    "version": report.version,
                    "path": str(report.path) if report.path else None,
                    "published_new": report.published_new,
                    "documents": report.documents,
                    "chunks": report.chunks,
                    "quarantined": report.quarantined,
                    "ignored": report.ignored,
                    "blocked": report.blocked,
                    "seconds": round(time.perf_counter() - started, 1),
                    "steps": report.steps,
                }
            )
        )
        return 1 if report.blocked else 0
    if report.blocked:
        print("not published: blocking checks failed", file=sys.stderr)
        for check, reason in report.blocked.items():
            print(f"  {check}: {reason}", file=sys.stderr)
        print(f"CURRENT still names {report.version or 'nothing'}", file=sys.stderr)
        return 1
    state = "published" if report.published_new else "unchanged, still"
    print(
        f"{state} {report.version}: {report.documents} documents, {report.chunks} chunks "
        f"({time.perf_counter() - started:.1f}s)"
    )
    print(f"  {report.path}")
    if not args.quiet:
        print(
            f"  files: {report.parsed} parsed, {report.cached} reused from cache, "
            f"{len(report.quarantined)} quarantined, {len(report.ignored)} ignored",
            file=sys.stderr,
        )
        for key, reason in report.quarantined.items():
            print(f"  quarantined {safe(key)}: {safe(reason)}", file=sys.stderr)
        for key, reason in report.ignored.items():
            print(f"  ignored {safe(key)}: {reason}", file=sys.stderr)
    if args.timings:
        for step, seconds in sorted(report.steps.items(), key=lambda item: -item[1]):
            print(f"  {seconds:8.2f} s  {step}", file=sys.stderr)
    return 0


_FILTER_FLAGS = {
    "document": "document",
    "document_type": "type",
    "authority_level": "authority",
    "tags": "tag",
    "party": "party",
    "author": "author",
    "source": "source",
    "start": "start",
    "end": "end",
    "period": "period",
    "section": "section",
    "clause_type": "clause_type",
    "cards_only": "cards_only",
    "cluster_id": "cluster",
}


def _filters(args: argparse.Namespace) -> dict | None:
    filters = {
        key: getattr(args, flag)
        for key, flag in _FILTER_FLAGS.items()
        if getattr(args, flag) is not None
    }
    return filters or None


def cmd_search(args: argparse.Namespace) -> int:
    index = Index.open(args.index)
    results = index.search(
        args.query,
        k=args.k,
        mode=args.mode,
        filters=_filters(args),
        expand=args.expand,
        min_relevance=args.min_relevance,
    )
    if args.json:
        print(json.dumps(results.to_dict()))
        return 0
    for warning in results.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if not results.hits:
        print("no results")
    for number, hit in enumerate(results, start=1):
        _print_hit(hit, number, args.full)
    return 0


def cmd_get(args: argparse.Namespace) -> int:
    index = Index.open(args.index)
    lookup = index.get(args.identifier)
    ok = lookup.found or (lookup.match == "enclosing" and args.accept_enclosing)
    if args.json:
        print(json.dumps(lookup.to_dict()))
        return 0 if ok else 1
    if lookup.hit is None:
        print(f"{safe(lookup.asked)}: not found: {safe(lookup.reason)}", file=sys.stderr)
        if lookup.closest:
            print(f"  closest: {safe('; '.join(lookup.closest))}", file=sys.stderr)
        return 1
    if lookup.match != "exact":
        stream = sys.stdout if ok else sys.stderr
        print(f"{lookup.match}: {safe(lookup.reason)}", file=stream)
    _print_hit(lookup.hit)
    if lookup.section is not None:
        print(f"   in {safe(lookup.section.citation)}")
    around = [
        f"{label} {hit.ref or hit.chunk_id}"
        for label, hit in (("previous:", lookup.previous), ("next:", lookup.next))
        if hit is not None
    ]
    if around:
        print(f"   {safe('  '.join(around))}")
    for label, hits in (("cites:", lookup.cites), ("cited by:", lookup.cited_by)):
        if hits:
            print(f"   {label} {safe('; '.join(hit.citation for hit in hits))}")
    if lookup.unresolved:
        texts = "; ".join(item["reference_text"] for item in lookup.unresolved)
        print(f"   also cites (not in this index): {safe(texts)}")
    if lookup.alternatives:
        others = "; ".join(hit.citation for hit in lookup.alternatives)
        print(f"   the reference also names: {safe(others)}")
    if not ok:
        print("   (not an exact match: pass --accept-enclosing to accept it)", file=sys.stderr)
    return 0 if ok else 1


def cmd_hop(args: argparse.Namespace) -> int:
    index = Index.open(args.index)
    try:
        reached = index.hop(args.identifier, max_hops=args.max_hops, decay=args.decay, k=args.k)
    except KeyError as exc:
        print(f"lexkb: {exc.args[0]}", file=sys.stderr)
        lookup = index.get(args.identifier)
        if lookup.closest:
            print(f"  closest: {safe('; '.join(lookup.closest))}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps([item.to_dict() for item in reached]))
        return 0
    if not reached:
        print("no citations lead from or to this paragraph")
    for number, item in enumerate(reached, start=1):
        route = " ".join(
            f"{'→' if step.direction == 'cites' else '←'} {step.ref or step.chunk_id}"
            for step in item.path
        )
        print(f"{number}. [{item.hit.citation}]  score {item.score:.3f}  via {route}")
    return 0


def print_listing(found: list, where: str) -> None:
    """`snapshots list` for people: CURRENT's marked with a star."""
    if not found:
        print(f"no snapshots under {where}")
    for item in found:
        mark = "*" if item.current else " "
        print(
            f"{mark} {item.version}  {item.created_at[:19]}  {item.documents} documents  "
            f"{item.chunks} chunks  {item.bytes / 1e6:.1f} MB"
        )


def print_pruned(deleted: list[str], kept: dict[str, str]) -> None:
    print(f"deleted {len(deleted)} snapshot(s)")
    for version in deleted:
        print(f"  - {version}")
    for version, why in kept.items():
        print(f"  kept {version}: {why}")


def cmd_snapshots(args: argparse.Namespace) -> int:
    from lexkb import snapshots
    from lexkb.diff import diff
    from lexkb.object_store import is_remote

    if is_remote(args.index):
        from lexkb.cli_remote import cmd_remote_snapshots

        return cmd_remote_snapshots(args)
    root = Path(args.index)
    if args.action == "list":
        found = snapshots.list_snapshots(root)
        if args.json:
            print(json.dumps([{**vars(s), "path": str(s.path)} for s in found]))
            return 0
        print_listing(found, str(root))
        return 0
    if args.action == "rollback":
        if len(args.versions) != 1:
            raise ValueError("rollback takes one VERSION (a version, a prefix, or previous)")
        loaded = snapshots.rollback(root, args.versions[0])
        if args.json:
            print(json.dumps({"current": loaded.version, "verified": True}))
        else:
            print(f"CURRENT now names {loaded.version} (every file verified)")
        return 0
    if args.action == "prune":
        pruned = snapshots.prune(root, keep=args.keep)
        if args.json:
            print(json.dumps({"deleted": pruned.deleted, "kept": pruned.kept}))
            return 0
        print_pruned(pruned.deleted, pruned.kept)
        return 0
    if args.action == "verify":
        if len(args.versions) > 1:
            raise ValueError("verify takes at most one VERSION (default: CURRENT)")
        checked = snapshots.verify(root, args.versions[0] if args.versions else "CURRENT")
        if args.json:
            print(
                json.dumps(
                    {
                        "version": checked.version,
                        "files": checked.files,
                        "tables": checked.tables,
                        "ok": True,
                    }
                )
            )
        else:
            rows = sum(checked.tables.values())
            print(
                f"{checked.version}: {checked.files} files match their SHA-256, "
                f"{len(checked.tables)} tables hold the {rows:,} rows the manifest lists"
            )
        return 0
    if len(args.versions) not in (1, 2):
        raise ValueError("diff takes OLD [NEW] (versions, prefixes, previous or CURRENT)")
    old, new = args.versions if len(args.versions) == 2 else ("previous", args.versions[0])
    change = diff(root, old, new)
    if args.json:
        print(json.dumps(change.to_dict()))
        return 0
    print(f"{change.old} -> {change.new}")
    for name, count in change.summary().items():
        print(f"  {name.replace('_', ' ')}: {count}")
        items = getattr(change, name)
        shown = list(items.items()) if isinstance(items, dict) else list(items)
        for item in shown[: args.show]:
            if isinstance(item, tuple):
                fields = "; ".join(f"{k}: {v[0]!r} -> {v[1]!r}" for k, v in item[1].items())
                print(f"      {safe(item[0])}: {safe(fields)}")
            elif hasattr(item, "changes"):
                print(f"      {safe(item.chunk)}: {safe('; '.join(item.changes))}")
            else:
                print(f"      {safe(item)}")
    return 0


def cmd_documents(args: argparse.Namespace) -> int:
    docs = Index.open(args.index).documents()
    if args.json:
        print(json.dumps(docs))
        return 0
    for doc in docs:
        pages = f", {doc['page_count']} pages" if doc["page_count"] else ""
        version = f", version {doc['version']}" if doc.get("version") else ""
        quality = doc["extraction_quality"]
        print(
            f"{safe(doc['document_key'])} [{safe(str(doc['number']))}]: {safe(doc['title'])} "
            f"({doc['format']}{pages}, {doc['paragraph_count']} paragraphs{version}, "
            f"extraction quality {quality:.2f})"
        )
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from lexkb.export import to_markdown, to_tree

    index = Index.open(args.index)
    document, paragraphs = index.document_paragraphs(args.document)
    if args.json:
        text = json.dumps(to_tree(document, paragraphs, index.version))
    else:
        text = to_markdown(document, paragraphs, index.version)
    if args.out:
        Path(args.out).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        print(text, end="" if text.endswith("\n") else "\n")
    return 0


def cmd_search_batch(args: argparse.Namespace) -> int:
    index = Index.open(args.index)
    queries = []
    with Path(args.queries).open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                queries.append((item["qid"], item["query"]))
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise ValueError(
                    f"{args.queries} line {number}: expected {{qid, query}} ({exc})"
                ) from exc
    started = time.perf_counter()
    filters = _filters(args)
    failed = 0
    with Path(args.out).open("w", encoding="utf-8") as out:
        for done, (qid, query) in enumerate(queries, start=1):
            try:
                results = index.search(
                    query,
                    k=args.k,
                    mode=args.mode,
                    filters=filters,
                    expand=args.expand,
                    min_relevance=args.min_relevance,
                )
            except ValueError as exc:  # one bad query costs its own line, not the batch
                failed += 1
                out.write(json.dumps({"qid": qid, "error": str(exc), "hits": []}) + "\n")
                continue
            hits = [
                {
                    "chunk_id": h.chunk_id,
                    "document_key": h.document_key,
                    "ref": h.ref,
                    "citation": h.citation,
                    "score": h.score,
                    "relevance": h.relevance,
                    "text": h.text,
                }
                for h in results
            ]
            out.write(json.dumps({"qid": qid, "mode": results.mode, "hits": hits}) + "\n")
            if done % 50 == 0 or done == len(queries):
                _progress(done, len(queries), started)
    if failed:
        print(
            f"lexkb: {failed} of {len(queries)} queries failed (see their error)", file=sys.stderr
        )
        return 1
    return 0


class _Formatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows an option's default when it has one worth showing (not unset, not off)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "%(default)" in text or action.default in (None, False, argparse.SUPPRESS):
            return text
        return super()._get_help_string(action) or text


def _add_filters(parser: argparse.ArgumentParser) -> None:
    """The search filters, shared by `search` and `search-batch` (see lexkb.filters)."""
    parser.add_argument(
        "--min-relevance",
        type=float,
        help="drop hits below this calibrated relevance (0-1); unset: hybrid and vector "
        "searches whose best hit is below 0.15 return nothing",
    )
    group = parser.add_argument_group("filters (combined with AND; repeat a flag for any of)")
    group.add_argument("--document", action="append", help="a document key, title or code")
    group.add_argument("--type", action="append", help="document type, e.g. rulebook, contract")
    group.add_argument("--authority", action="append", help="authority level, e.g. primary")
    group.add_argument("--tag", action="append", help="documents carrying this tag (all given)")
    group.add_argument("--author", action="append", help="issuing body")
    group.add_argument("--party", action="append", help="a contract's party, by part of its name")
    group.add_argument("--source", action="append", help="prefix of the source URL or file name")
    group.add_argument("--start", help="documents dated on or after this day (YYYY-MM-DD)")
    group.add_argument("--end", help="documents dated on or before this day (YYYY-MM-DD)")
    group.add_argument(
        "--period", help="today, yesterday, last_7_days, last_30_days, last_90_days, last_365_days"
    )
    group.add_argument(
        "--section", help="heading path prefix, heading or section number (e.g. 4.3, Article 5)"
    )
    group.add_argument(
        "--clause-type", action="append", help="contract clause type, e.g. 'governing law'"
    )
    group.add_argument(
        "--cluster", type=int, action="append", help="a topic cluster's id (see `lexkb clusters`)"
    )
    group.add_argument(
        "--cards-only",
        action="store_const",
        const=True,
        help="only paragraphs that define a term (the snapshot's definitions)",
    )


def build_parser() -> argparse.ArgumentParser:
    from lexkb import __version__

    parser = argparse.ArgumentParser(
        prog="lexkb",
        description=__doc__.split("\n\n")[0].replace("\n", " "),
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"lexkb {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    formatter = _Formatter

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help, description=help, formatter_class=formatter)

    def with_index(p: argparse.ArgumentParser, json_help: str = "print JSON") -> None:
        p.add_argument("--index", default=_default_index(), help=INDEX_HELP)
        p.add_argument("--json", action="store_true", help=json_help + " (docs/schemas/)")

    build = command("build", "parse sources and publish a snapshot under --out")
    build.add_argument(
        "sources", nargs="+", help="files or folders (PDF, DOCX, MD, TXT, HTML, JSON/JSONL)"
    )
    build.add_argument("--out", required=True, help="index root: receives snapshots/ and CURRENT")
    build.add_argument(
        "--embedder",
        choices=PROVIDERS,
        default=None,
        help="dense vectors from: auto (Voyage AI when VOYAGE_API_KEY is set, else the local "
        "model), local, voyage, none (keyword only); unset: $LEXKB_EMBEDDER, else auto",
    )
    build.add_argument("--verbose", action="store_true", help="show the pipeline's full log")
    build.add_argument("--quiet", action="store_true", help="print only the result line")
    build.add_argument(
        "--timings", action="store_true", help="print the seconds each pipeline step took"
    )
    build.add_argument(
        "--wait", type=float, default=60.0, help="seconds to wait while another build holds --out"
    )
    build.add_argument(
        "--follow-symlinks",
        action="store_true",
        help="follow symbolic links that lead out of the source folders (refused otherwise)",
    )
    build.add_argument("--json", action="store_true", help="print the result as JSON")
    build.set_defaults(func=cmd_build)

    search = command("search", "ranked paragraphs for a question, each a citation")
    search.add_argument("query")
    search.add_argument("-k", "--k", type=int, default=10, help="how many hits")
    search.add_argument(
        "--mode", choices=MODES, help="unset: hybrid when the index has vectors, else keyword"
    )
    search.add_argument(
        "--expand", action="store_true", help="let paragraphs the hits cite join the ranking"
    )
    search.add_argument("--full", action="store_true", help="print whole texts, not excerpts")
    _add_filters(search)
    with_index(search)
    search.set_defaults(func=cmd_search)

    get = command(
        "get",
        "a paragraph by chunk id or reference ('Article 6(1)', 'Rule 4.3.1 of the Lexkb "
        "Rulebook', 'LSA 230, para. A8'), with how it matched",
    )
    get.add_argument("identifier")
    get.add_argument(
        "--accept-enclosing",
        action="store_true",
        help="exit 0 when only the nearest enclosing unit exists (exit 1 otherwise)",
    )
    with_index(get)
    get.set_defaults(func=cmd_get)

    hop = command("hop", "paragraphs reached along citations in both directions, with paths")
    hop.add_argument("identifier", help="chunk id or reference")
    hop.add_argument("--max-hops", type=int, default=3, help="edges at most (1 to 10)")
    hop.add_argument("--decay", type=float, default=0.7, help="score kept per edge, in (0, 1]")
    hop.add_argument("-k", "--k", type=int, default=30, help="how many paragraphs")
    with_index(hop)
    hop.set_defaults(func=cmd_hop)

    manage = command("snapshots", "list, verify, compare, roll back or prune an index's snapshots")
    manage.add_argument("action", choices=["list", "verify", "diff", "rollback", "prune"])
    manage.add_argument(
        "versions",
        nargs="*",
        help="rollback VERSION | diff OLD [NEW] | verify [VERSION]; a version may be CURRENT, "
        "previous, or a unique prefix",
    )
    manage.add_argument("--keep", type=int, default=5, help="prune: newest snapshots to keep")
    manage.add_argument("--show", type=int, default=10, help="diff: items listed per change")
    with_index(manage)
    manage.set_defaults(func=cmd_snapshots)

    documents = command("documents", "the indexed documents with their catalog entries")
    with_index(documents)
    documents.set_defaults(func=cmd_documents)

    export = command(
        "export", "one document as Markdown (headings, refs, pages) or as its section tree"
    )
    export.add_argument("document", help="document key, title or code")
    export.add_argument("--markdown", action="store_true", help="Markdown (the default)")
    export.add_argument("--out", help="write to this file instead of stdout")
    with_index(export, "the section tree with its paragraphs as JSON")
    export.set_defaults(func=cmd_export)

    batch = command("search-batch", "run a JSONL file of {qid, query}; write hits as JSONL")
    batch.add_argument("--queries", required=True, help="input: one {qid, query} per line")
    batch.add_argument("--out", required=True, help="output: one {qid, mode, hits} per line")
    batch.add_argument("-k", "--k", type=int, default=10, help="hits per query")
    batch.add_argument("--mode", choices=MODES, help="unset: hybrid when the index has vectors")
    batch.add_argument("--expand", action="store_true", help="as search --expand")
    _add_filters(batch)
    batch.add_argument("--index", default=_default_index(), help=INDEX_HELP)
    batch.set_defaults(func=cmd_search_batch)
    add_answer_commands(command, with_index)
    add_ask_commands(command, with_index)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (SnapshotError, ValueError, FileNotFoundError, KeyError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"lexkb: error: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`lexkb search ... | head`): stop quietly, and keep Python from
        # complaining when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def run() -> None:
    """The `lexkb` command. After a build that published it leaves without the interpreter's
    teardown: freeing Dagster's, dbt's and the tables' objects one by one took 1.7 s of a 28 s
    rebuild, after the snapshot was published and fsynced and the report printed. Exit handlers
    still run; the build's worker processes were stopped (cmd_build)."""
    argv = sys.argv[1:]
    code = main(argv)
    if argv[:1] == ["build"] and code == 0:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    run()
