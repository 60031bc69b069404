"""The commands that read a snapshot: search, get, hop, documents, export, search-batch."""

from __future__ import annotations

import argparse
import errno
import json
import os
import stat
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from lexkb.cli.output import print_hit, progress
from lexkb.core.text.terminal import safe
from lexkb.core.vocabulary import MatchKind
from lexkb.index import Index

_FILTER_FLAGS = {
    "document": "document",
    "document_type": "type",
    "authority_level": "authority",
    "tags": "tag",
    "party": "party",
    "governing_law": "governing_law",
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


def filters_from(args: argparse.Namespace) -> dict[str, Any] | None:
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
        filters=filters_from(args),
        expand=args.expand,
        min_relevance=args.min_relevance,
        rerank=args.rerank,
    )
    if args.json:
        print(json.dumps(results.to_dict()))
        return 0
    for warning in results.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if not results.hits:
        print("no results")
    for number, hit in enumerate(results, start=1):
        print_hit(hit, number, args.full)
    return 0


def cmd_get(args: argparse.Namespace) -> int:
    index = Index.open(args.index)
    lookup = index.get(args.identifier)
    ok = lookup.found or (lookup.match == MatchKind.ENCLOSING and args.accept_enclosing)
    if args.json:
        print(json.dumps(lookup.to_dict()))
        return 0 if ok else 1
    if lookup.hit is None:
        what = "ambiguous" if lookup.match == MatchKind.AMBIGUOUS else "not found"
        print(f"{safe(lookup.asked)}: {what}: {safe(lookup.reason)}", file=sys.stderr)
        if lookup.closest:
            print(f"  closest: {safe('; '.join(lookup.closest))}", file=sys.stderr)
        for candidate in lookup.alternatives:  # each document the reference fits
            print(f"  {safe(candidate.citation)} ({candidate.chunk_id})", file=sys.stderr)
        return 1
    if lookup.match != MatchKind.EXACT:
        stream = sys.stdout if ok else sys.stderr
        print(f"{lookup.match}: {safe(lookup.reason)}", file=stream)
    print_hit(lookup.hit)
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
        print(f"{number}. [{safe(item.hit.citation)}]  score {item.score:.3f}  via {safe(route)}")
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
        if head := contract_head(doc):
            print(f"  {safe(head)}")
    return 0


def contract_head(doc: dict[str, Any]) -> str | None:
    """A contract's head on one line, as a reviewer notes it: parties, dates, governing law,
    renewal ("parties: Acme Corp.; Widget Ltd · made 2023-03-03 · New York law · renews
    successive 1 year"); None for any other document, or a contract whose head says none."""
    if (doc.get("document_type") or "").casefold() != "contract":
        return None
    parts = []
    if doc.get("parties"):
        parts.append("parties: " + "; ".join(doc["parties"]))
    if doc.get("published"):
        parts.append(f"made {doc['published']}")
    if doc.get("effective") and doc["effective"] != doc.get("published"):
        parts.append(f"effective {doc['effective']}")
    if doc.get("governing_law"):
        parts.append(f"{doc['governing_law']} law")
    if doc.get("renewal_term"):
        parts.append(f"renews {doc['renewal_term']}")
    return " · ".join(parts) or None


def cmd_export(args: argparse.Namespace) -> int:
    from lexkb.export import to_markdown, to_tree

    index = Index.open(args.index)
    document, paragraphs = index.document_paragraphs(args.document)
    if args.json:
        text = json.dumps(to_tree(document, paragraphs, index.version))
    else:
        text = to_markdown(document, paragraphs, index.version)
    if args.out:
        write_new(Path(args.out), text if text.endswith("\n") else text + "\n", args.force)
        print(f"wrote {safe(args.out)}", file=sys.stderr)
    else:
        print(text if args.json else safe(text), end="" if text.endswith("\n") else "\n")
    return 0


def write_new(path: Path, text: str, replace: bool) -> None:
    """Write `text` to `path` whole or not at all: into a new file beside it, then moved into
    place. A path that exists is refused unless `replace` (and then only a regular file), and a
    symbolic link always: neither is ever written through, so `--out` cannot overwrite CURRENT,
    a snapshot or what a link points at by accident. ValueError says which."""
    try:
        found = path.lstat()
    except FileNotFoundError:
        found = None
    if found is not None:
        if stat.S_ISLNK(found.st_mode):
            raise ValueError(f"{path} is a symbolic link; export never writes through one")
        if not stat.S_ISREG(found.st_mode):
            raise ValueError(f"{path} exists and is not a regular file")
        if not replace:
            raise ValueError(f"{path} exists; pass --force to replace it")
    staging = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(staging, flags, 0o666)
    except OSError as exc:
        raise ValueError(f"cannot write beside {path}: {exc.strerror}") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        if replace:
            # Replaces the name: a link put there meanwhile goes, its target stays untouched.
            os.replace(staging, path)
        else:
            _place_new(staging, path)
    except OSError as exc:
        raise ValueError(f"cannot write {path}: {exc.strerror}") from exc
    finally:
        staging.unlink(missing_ok=True)


def _place_new(staging: Path, path: Path) -> None:
    """Give `staging` the name `path` only if nothing has it: a hard link fails on any entry
    there, symbolic links included, and is never followed."""
    try:
        os.link(staging, path, follow_symlinks=False)
    except FileExistsError:
        raise ValueError(f"{path} exists; pass --force to replace it") from None
    except OSError as exc:  # a filesystem without hard links
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP):
            raise
        if os.path.lexists(path):
            raise ValueError(f"{path} exists; pass --force to replace it") from None
        os.rename(staging, path)


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
    filters = filters_from(args)
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
                    rerank=args.rerank,
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
                    "answers": h.answers,
                    "text": h.text,
                }
                for h in results
            ]
            out.write(json.dumps({"qid": qid, "mode": results.mode, "hits": hits}) + "\n")
            if done % 50 == 0 or done == len(queries):
                progress(done, len(queries), started)
    if failed:
        print(
            f"lexkb: {failed} of {len(queries)} queries failed (see their error)", file=sys.stderr
        )
        return 1
    return 0


def add_filters(parser: argparse.ArgumentParser) -> None:
    """The search filters, shared by `search` and `search-batch` (see lexkb.filters)."""
    parser.add_argument(
        "--min-relevance",
        type=float,
        help="drop hits below this calibrated relevance (0-1); unset: hybrid and vector "
        "searches whose best hit is below 0.15 return nothing",
    )
    parser.add_argument(
        "--rerank",
        action="store_true",
        help="reorder the first 30 hits with the relevance model (slower; better for questions)",
    )
    group = parser.add_argument_group("filters (combined with AND; repeat a flag for any of)")
    group.add_argument("--document", action="append", help="a document key, title or code")
    group.add_argument("--type", action="append", help="document type, e.g. rulebook, contract")
    group.add_argument("--authority", action="append", help="authority level, e.g. primary")
    group.add_argument("--tag", action="append", help="documents carrying this tag (all given)")
    group.add_argument("--author", action="append", help="issuing body")
    group.add_argument("--party", action="append", help="a contract's party, by part of its name")
    group.add_argument(
        "--governing-law",
        action="append",
        help="contracts governed by the law of this place (e.g. 'New York'), by part of its name",
    )
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
