"""Parsing each source file in a worker process of its own, within limits.

One hostile or broken file must never cost the others: a parser that hangs, eats memory or
crashes the interpreter takes down only its worker. Each file is parsed in a process forked from
a small server process (multiprocessing's forkserver, so no Dagster thread or lock is copied),
watched by the parent: past `timeout_seconds` or `memory_mb` of resident memory it is killed and
the file quarantined with that reason. Up to `workers` files parse at once, which also puts the
machine's cores to work on a large corpus.

The worker writes the element frame straight to its cache file and sends back only a status, so
no frame is pickled across the pipe.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

from transforms.reading.file_limits import ParseLimits
from transforms.reading.quarantine import SourceError
from transforms.reading.source_files import SourceFile

POLL_SECONDS = 0.02


@dataclass(frozen=True)
class Outcome:
    """How parsing one file ended: `error` is None when its elements were written."""

    source: SourceFile
    seconds: float
    peak_mb: float
    rows: int = 0
    error: SourceError | None = None


def _work(source: SourceFile, target: str, limits: ParseLimits, conn) -> None:
    """Runs in the worker: parse, check, write the frame, report."""
    try:
        from transforms.reading.elements import document_elements

        _unchanged(source)
        frame = document_elements(source, limits)
        chars = int(frame["text"].str.len_chars().sum() or 0)
        if chars > limits.max_chars:
            raise SourceError(
                f"{chars:,} characters of text, over the limit of {limits.max_chars:,}",
                kind="too_large",
            )
        _unchanged(source)
        partial = f"{target}.{os.getpid()}.partial"
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        frame.write_parquet(partial)
        os.replace(partial, target)
        conn.send(("ok", frame.height))
    except SourceError as exc:
        conn.send(("error", exc.stage, exc.kind, exc.reason))
    except MemoryError:
        conn.send(("error", "parse", "memory", "ran out of memory while parsing"))
    except RecursionError:
        conn.send(("error", "parse", "too_deep", "nested too deeply for the parser"))
    except Exception as exc:  # any parser bug or odd file: reported, never fatal
        last = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
        where = f" (in {Path(last.filename).name}:{last.lineno})" if last else ""
        message = " ".join(str(exc).split())[:300]
        conn.send(("error", "parse", type(exc).__name__, f"{type(exc).__name__}: {message}{where}"))
    finally:
        conn.close()


def _unchanged(source: SourceFile) -> None:
    from lexkb.core.store.snapshot import file_sha256

    try:
        sha = file_sha256(source.path)
    except FileNotFoundError as exc:
        raise SourceError(
            "the file vanished during the build", stage="parse", kind="vanished"
        ) from exc
    if sha != source.sha256:
        raise SourceError(
            "the file changed during the build; the next build will read the new version",
            stage="parse",
            kind="changed",
        )


# What every worker needs; unstructured's partitioners only when a format needs them. The
# server imports them once, so a worker starts already holding them (about 3 s each otherwise).
_PRELOAD = ["transforms.reading.elements", "polars", "pypdfium2"]
_UNSTRUCTURED = {
    "docx": "unstructured.partition.docx",
    "html": "unstructured.partition.html",
    "markdown": "unstructured.partition.md",
}


def _context(formats: set[str]):
    from transforms.reading.offline_nlp import TELEMETRY_OFF

    # The server inherits this environment: unstructured must see it before its first import.
    for name, value in TELEMETRY_OFF.items():
        os.environ.setdefault(name, value)
    context = multiprocessing.get_context("forkserver")
    # Only the first call before the server starts decides; later builds reuse the server.
    context.set_forkserver_preload(preloaded(formats))
    return context


def preloaded(formats: set[str]) -> list[str]:
    """The modules the parse server imports before it forks a worker per file of `formats`."""
    partitioners = [_UNSTRUCTURED[f] for f in sorted(formats) if f in _UNSTRUCTURED]
    # With a partitioner, what it loads on first use (transforms.reading.parse_preload).
    return _PRELOAD + partitioners + (["transforms.reading.parse_preload"] if partitioners else [])


def start_server(formats: set[str] | None = None) -> None:
    """Start the worker server now, loading the unstructured partitioners of `formats` (every
    one when None), instead of when the first file is parsed: its imports (about 5 s) then
    overlap the build's own start-up. A build that has already started it reuses it.
    `lexkb build`, one build a process, names the formats its sources have: a corpus of JSON
    passages then costs the other core no partitioner imports while Dagster starts."""
    from multiprocessing import forkserver

    _context(set(_UNSTRUCTURED) if formats is None else formats)
    with main_hidden():
        forkserver.ensure_running()


@contextmanager
def main_hidden() -> Iterator[None]:
    """Start a worker without having it re-import the caller's __main__.

    multiprocessing re-runs the main script in each child, which fails for code read from stdin
    or a notebook and re-runs an unguarded script's top level. The worker's target lives in this
    module, so the child needs nothing from __main__.
    """
    main = sys.modules["__main__"]
    spec, file = getattr(main, "__spec__", None), getattr(main, "__file__", None)
    main.__spec__ = None
    if file is not None:
        del main.__file__
    try:
        yield
    finally:
        main.__spec__ = spec
        if file is not None:
            main.__file__ = file


@dataclass
class _Running:
    source: SourceFile
    process: multiprocessing.Process
    conn: Connection
    started: float
    peak_mb: float = 0.0


def parse_all(
    jobs: Iterable[tuple[SourceFile, Path]],
    limits: ParseLimits,
    done: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Parse every (source, target) pair, `limits.workers` at a time; `done` hears of each."""
    import psutil

    if multiprocessing.current_process().daemon:
        raise RuntimeError(
            "each file is parsed in a child process, which a daemonic process may not start; "
            "run Dask workers with distributed.worker.daemon false "
            "(DASK_DISTRIBUTED__WORKER__DAEMON=False)"
        )
    pending = list(jobs)
    context = _context({source.format for source, _ in pending})
    pending.reverse()
    running: list[_Running] = []
    outcomes: list[Outcome] = []

    def finish(item: _Running, outcome: Outcome) -> None:
        running.remove(item)
        item.process.join(timeout=5)
        outcomes.append(outcome)
        if done is not None:
            done(outcome)

    while pending or running:
        while pending and len(running) < max(1, limits.workers):
            source, target = pending.pop()
            parent, child = context.Pipe(duplex=False)
            process = context.Process(
                target=_work, args=(source, str(target), limits, child), daemon=True
            )
            with main_hidden():
                process.start()
            child.close()
            running.append(_Running(source, process, parent, time.perf_counter()))
        time.sleep(POLL_SECONDS)
        for item in list(running):
            elapsed = time.perf_counter() - item.started
            try:
                rss = psutil.Process(item.process.pid).memory_info().rss / 1e6
                item.peak_mb = max(item.peak_mb, rss)
            except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
                rss = 0.0
            if item.conn.poll():
                try:
                    message = item.conn.recv()
                except EOFError:
                    message = None
                finish(item, _outcome(item, elapsed, message))
            elif not item.process.is_alive():
                finish(item, _outcome(item, elapsed, None))
            elif (over := _over_limit(limits, rss, elapsed)) is not None:
                item.process.kill()
                finish(item, Outcome(item.source, elapsed, item.peak_mb, error=over))
    return outcomes


def _over_limit(limits: ParseLimits, rss_mb: float, elapsed: float) -> SourceError | None:
    """Why a running worker must be stopped, if it must."""
    if rss_mb > limits.memory_mb:
        reason = f"parsing needed more than {limits.memory_mb} MB of memory (limit)"
        return SourceError(reason, kind="memory")
    if elapsed > limits.timeout_seconds:
        reason = f"parsing took longer than {limits.timeout_seconds:g} s (limit)"
        return SourceError(reason, kind="timeout")
    return None


def _outcome(item: _Running, elapsed: float, message: tuple | None) -> Outcome:
    if message is None:
        code = item.process.exitcode
        reason = (
            f"the parser crashed (signal {-code})" if code and code < 0 else "the parser crashed"
        )
        error = SourceError(reason, kind="crash")
        return Outcome(item.source, elapsed, item.peak_mb, error=error)
    if message[0] == "ok":
        return Outcome(item.source, elapsed, item.peak_mb, rows=message[1])
    _, stage, kind, reason = message
    return Outcome(
        item.source, elapsed, item.peak_mb, error=SourceError(reason, stage=stage, kind=kind)
    )
