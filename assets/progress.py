"""What a build is doing, for a person at a terminal: each stage as it starts, each file as it
is parsed, and the embedding with a bar and an estimate of the time left.

The pipeline reports through Dagster's logging, so this is a Dagster logger (`progress`) that
`lexkb build` adds to its runs; it turns step starts and the assets' own progress lines into
short lines on stderr. Runs launched from the UI do not use it.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable

import dagster as dg

# The stage a person recognises, by the step that starts it.
STAGES = {
    "source_files": "scanning sources",
    "document_elements": "parsing",
    "document_chunks": "recovering structure",
    "search_tables": "building tables and BM25",
    "citation_edges": "resolving citations",
    "clause_types": "labelling contract clauses",
    "defined_terms": "finding defined terms",
    "chunk_embeddings": "embedding",
    "topic_clusters": "clustering topics",
    "dbt_models": "dbt models and tests",
    "published_snapshot": "publishing",
}
# Prefixes of the assets' progress lines (see assets/documents.py, assets/embeddings.py).
PARSED = "parsed "
EMBEDDED = "embedded "


class Reporter:
    """Formats progress for one build; `write` receives finished lines or a redrawn bar."""

    def __init__(self, write: Callable[[str], None], interactive: bool) -> None:
        self.write = write
        self.interactive = interactive
        self.checks_started = False
        self.embedding_started: float | None = None

    def step(self, step_key: str) -> None:
        if step_key == "chunk_embeddings":
            self.embedding_started = time.perf_counter()  # the rate counts from here
        if step_key in STAGES:
            self.write(f"{STAGES[step_key]}\n")
        elif not self.checks_started and ("_are_sound" in step_key or "no_document" in step_key):
            self.checks_started = True
            self.write("checking tables (Great Expectations)\n")

    def message(self, text: str) -> None:
        if text.startswith(PARSED):
            self.write(f"  {text[len(PARSED) :]}\n")
        elif text.startswith(EMBEDDED):
            done, total = (int(n) for n in text[len(EMBEDDED) :].split()[0].split("/"))
            self.embedding_started = self.embedding_started or time.perf_counter()
            self.write(self.bar(done, total))

    def bar(self, done: int, total: int, width: int = 30) -> str:
        elapsed = time.perf_counter() - (self.embedding_started or time.perf_counter())
        rate = done / elapsed if elapsed > 0 else 0.0
        left = (total - done) / rate if rate > 0 else 0.0
        filled = width * done // max(total, 1)
        line = (
            f"  [{'#' * filled}{'.' * (width - filled)}] {done}/{total} texts"
            f", {rate:.0f}/s, about {left:.0f} s left"
        )
        if self.interactive:
            return f"\r{line}" + ("\n" if done >= total else "")
        return f"{line}\n" if done >= total else ""


_reporter: Reporter | None = None


def report_to(reporter: Reporter | None) -> None:
    """Where the `progress` logger sends its lines (None: nowhere)."""
    global _reporter
    _reporter = reporter


def stderr_reporter() -> Reporter:
    def write(text: str) -> None:
        sys.stderr.write(text)
        sys.stderr.flush()

    return Reporter(write, sys.stderr.isatty())


class _ProgressLogger(logging.Logger):
    """A logger that reports records itself instead of through handlers. (With a
    `logging.Handler` attached, DuckDB's bindings outlived interpreter shutdown and nanobind
    printed a leak report at every exit.)"""

    def handle(self, record: logging.LogRecord) -> None:
        reporter = _reporter
        if reporter is None:
            return
        meta = getattr(record, "dagster_meta", None) or {}
        event = getattr(record, "dagster_event", None)
        if event is not None:
            if event.event_type_value == "STEP_START" and event.step_key:
                reporter.step(event.step_key)
            return
        reporter.message(str(meta.get("orig_message") or record.getMessage()))


@dg.logger(
    None, description="Build progress on stderr for `lexkb build` (stages, files, embedding)."
)
def progress_logger(init_context: dg.InitLoggerContext) -> logging.Logger:
    del init_context
    return _ProgressLogger("lexkb.progress", logging.DEBUG)
