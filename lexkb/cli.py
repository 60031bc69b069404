"""`lexkb` command line: build an index, search it, look up paragraphs, follow citations, run
query batches.

Only `build` loads the pipeline (Dagster, unstructured); every other command needs just the
query module, so it starts fast and works on a machine that only holds snapshots.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import sys
import time
from pathlib import Path

from lexkb.embedders import PROVIDERS
from lexkb.index import MODES, Hit, Index
from lexkb.snapshot import SnapshotError


def _default_index() -> str:
    return os.environ.get("LEXKB_ROOT", "var/index")


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def safe(text: str) -> str:
    """Document text as a terminal may show it: control characters (escape sequences that
    would move the cursor, recolour or retitle the terminal) become visible codes."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _print_hit(hit: Hit, number: int | None = None) -> None:
    lead = f"{number}. " if number is not None else ""
    score = f"  score {hit.score:.3f}" if hit.score is not None else ""
    print(f"{lead}[{safe(hit.citation)}]{score}")
    if hit.section_path:
        print(f"   {safe(' > '.join(hit.section_path))}")
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
        for key, reason in report.quarantined.items():
            print(f"  quarantined {key}: {reason}", file=sys.stderr)
        for key, reason in report.ignored.items():
            print(f"  ignored {key}: {reason}", file=sys.stderr)
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
        args.query, k=args.k, mode=args.mode, filters=_filters(args), expand=args.expand
    )
    if args.json:
        print(
            json.dumps(
                {
                    "query": args.query,
                    "mode": results.mode,
                    "warnings": results.warnings,
                    "hits": [h.to_dict() for h in results],
                }
            )
        )
        return 0
    for warning in results.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if not results.hits:
        print("no results")
    for number, hit in enumerate(results, start=1):
        _print_hit(hit, number)
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


def cmd_snapshots(args: argparse.Namespace) -> int:
    from lexkb import snapshots
    from lexkb.diff import diff

    root = Path(args.index)
    if args.action == "list":
        found = snapshots.list_snapshots(root)
        if args.json:
            print(json.dumps([{**vars(s), "path": str(s.path)} for s in found]))
            return 0
        if not found:
            print(f"no snapshots under {root}")
        for item in found:
            mark = "*" if item.current else " "
            print(
                f"{mark} {item.version}  {item.created_at[:19]}  {item.documents} documents  "
                f"{item.chunks} chunks  {item.bytes / 1e6:.1f} MB"
            )
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
        print(f"deleted {len(pruned.deleted)} snapshot(s)")
        for version in pruned.deleted:
            print(f"  - {version}")
        for version, why in pruned.kept.items():
            print(f"  kept {version}: {why}")
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
        print(json.dumps(docs, default=str))
        return 0
    for doc in docs:
        pages = f", {doc['page_count']} pages" if doc["page_count"] else ""
        version = f", version {doc['version']}" if doc.get("version") else ""
        print(
            f"{doc['document_key']} [{doc['number']}]: {doc['title']} "
            f"({doc['format']}{pages}, {doc['paragraph_count']} paragraphs{version})"
        )
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
    failed = 0
    with Path(args.out).open("w", encoding="utf-8") as out:
        for done, (qid, query) in enumerate(queries, start=1):
            try:
                results = index.search(query, k=args.k, mode=args.mode, expand=args.expand)
            except ValueError as exc:  # one bad query costs its own line, not the batch
                failed += 1
                out.write(json.dumps({"qid": qid, "error": str(exc), "hits": []}) + "\n")
                continue
            hits = [
                {
                    "chunk_id": h.chunk_id,
                    "document_key": h.document_key,
                    "ref": h.ref,
                    "score": h.score,
                }
                for h in results
            ]
            out.write(json.dumps({"qid": qid, "hits": hits}) + "\n")
            if done % 50 == 0 or done == len(queries):
                _progress(done, len(queries), started)
    if failed:
        print(
            f"lexkb: {failed} of {len(queries)} queries failed (see their error)", file=sys.stderr
        )
        return 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lexkb", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    build = sub.add_parser("build", help="parse sources and publish a snapshot under --out")
    build.add_argument(
        "sources", nargs="+", help="files or folders (PDF, DOCX, MD, TXT, HTML, JSON/JSONL)"
    )
    build.add_argument("--out", required=True, help="index root: receives snapshots/ and CURRENT")
    build.add_argument(
        "--embedder",
        choices=PROVIDERS,
        help="dense vectors from: auto (Voyage AI when VOYAGE_API_KEY is set, else the local "
        "model; the default, or LEXKB_EMBEDDER), local, voyage, none (keyword only)",
    )
    build.add_argument("--verbose", action="store_true", help="show the pipeline's progress log")
    build.add_argument("--quiet", action="store_true", help="print only the result line")
    build.add_argument(
        "--wait",
        type=float,
        default=60.0,
        help="seconds to wait while another build holds the index root (default: %(default)s)",
    )
    build.add_argument(
        "--follow-symlinks",
        action="store_true",
        help="follow symbolic links that lead out of the source folders (default: refuse them)",
    )
    build.add_argument("--json", action="store_true")
    build.set_defaults(func=cmd_build)

    def with_index(p: argparse.ArgumentParser) -> None:
        p.add_argument("--index", default=_default_index(), help="index root or snapshot directory")
        p.add_argument("--json", action="store_true", help="machine-readable output")

    search = sub.add_parser("search", help="ranked paragraphs for a question")
    search.add_argument("query")
    search.add_argument("--k", type=int, default=10)
    search.add_argument("--mode", choices=MODES, help="default: hybrid when the index has vectors")
    search.add_argument("--document", action="append", help="only this document (repeatable)")
    search.add_argument("--type", action="append", help="document type, e.g. rulebook (repeatable)")
    search.add_argument("--authority", action="append", help="authority level (repeatable)")
    search.add_argument("--tag", action="append", help="documents carrying this tag (all given)")
    search.add_argument("--author", action="append", help="issuing body (repeatable)")
    search.add_argument(
        "--party", action="append", help="a contract's party, by part of its name (repeatable)"
    )
    search.add_argument("--source", action="append", help="source URL or file name prefix")
    search.add_argument("--start", help="documents dated on or after (YYYY-MM-DD)")
    search.add_argument("--end", help="documents dated on or before (YYYY-MM-DD)")
    search.add_argument("--period", help="yesterday, last_7_days, last_30_days, ...")
    search.add_argument("--section", help="only paragraphs whose heading path starts with this")
    search.add_argument(
        "--expand", action="store_true", help="let paragraphs the hits cite join the ranking"
    )
    with_index(search)
    search.set_defaults(func=cmd_search)

    get = sub.add_parser(
        "get",
        help="a paragraph by chunk id or reference ('Article 6(1)', 'Rule 4.3.1 of the Lexkb "
        "Rulebook', 'LSA 230, para. A8'), with how it matched",
    )
    get.add_argument("identifier")
    get.add_argument(
        "--accept-enclosing",
        action="store_true",
        help="exit 0 when only the nearest enclosing unit exists (default: exit 1)",
    )
    with_index(get)
    get.set_defaults(func=cmd_get)

    hop = sub.add_parser("hop", help="paragraphs reached along citations, with their paths")
    hop.add_argument("identifier", help="chunk id or reference")
    hop.add_argument("--max-hops", type=int, default=3)
    hop.add_argument("--decay", type=float, default=0.7)
    hop.add_argument("--k", type=int, default=30)
    with_index(hop)
    hop.set_defaults(func=cmd_hop)

    manage = sub.add_parser(
        "snapshots", help="list, roll back, compare or prune the snapshots of an index root"
    )
    manage.add_argument("action", choices=["list", "rollback", "diff", "prune", "verify"])
    manage.add_argument(
        "versions",
        nargs="*",
        help="rollback VERSION | diff OLD [NEW] | verify [VERSION]; a version may be CURRENT, "
        "previous, or a unique prefix",
    )
    manage.add_argument(
        "--keep", type=int, default=5, help="prune: newest snapshots to keep (default: %(default)s)"
    )
    manage.add_argument("--show", type=int, default=10, help="diff: names listed per change")
    with_index(manage)
    manage.set_defaults(func=cmd_snapshots)

    documents = sub.add_parser("documents", help="list the indexed documents")
    with_index(documents)
    documents.set_defaults(func=cmd_documents)

    batch = sub.add_parser("search-batch", help="run a JSONL file of {qid, query} and write hits")
    batch.add_argument("--queries", required=True)
    batch.add_argument("--out", required=True)
    batch.add_argument("--k", type=int, default=10)
    batch.add_argument("--mode", choices=MODES)
    batch.add_argument("--expand", action="store_true")
    batch.add_argument("--index", default=_default_index())
    batch.set_defaults(func=cmd_search_batch)
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


if __name__ == "__main__":
    sys.exit(main())
