"""The `lexkb build` command's work, offered to the query module's CLI as the entry point
`build` in the group `lexkb.pipeline` (pyproject.toml; lexkb.cli.build loads it by that name).
It starts the build's worker processes, runs the pipeline (pipelines.in_process) and reports what
was published, as text or JSON."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import time

from lexkb.core.text.terminal import safe


def build_command(args: argparse.Namespace) -> int:
    from transforms.publishing import checks_worker, dbt_runner
    from transforms.reading.isolation import start_server
    from transforms.reading.source_files import formats_in

    for source in args.sources:  # before any worker starts (run_build checks it again)
        if not os.path.exists(source):
            raise ValueError(f"source path does not exist: {source}")
    # The parse workers' imports overlap Dagster's (transforms.reading.isolation).
    start_server(formats_in(args.sources))
    checks_worker.start()  # and Great Expectations' import, in the checks' own worker
    dbt_runner.worker.start()  # and dbt's first run, in dbt's
    try:
        return _build(args)
    finally:  # whatever happened: a live worker would hold the process open at exit (run())
        checks_worker.stop()
        dbt_runner.worker.stop()


def _build(args: argparse.Namespace) -> int:
    from lexkb.core.store.root_lock import RootBusy
    from pipelines.in_process import NothingPublished, run_build

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
                parts=args.parts,
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
                    "catalog_would_add": report.catalog_would_add,
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
        for name, keys in report.catalog_would_add.items():
            print(f"  a catalog would add {name} to {_listed(keys)}", file=sys.stderr)
    if args.timings:
        for step, seconds in sorted(report.steps.items(), key=lambda item: -item[1]):
            print(f"  {seconds:8.2f} s  {step}", file=sys.stderr)
    return 0


def _listed(keys: list[str], shown: int = 5) -> str:
    """ "a, b and 3 more": document keys, a few by name."""
    named = ", ".join(safe(key) for key in keys[:shown])
    return named + (f" and {len(keys) - shown} more" if len(keys) > shown else "")
