"""Running the dbt project through dbt's own programmatic runner, in a warm worker when the
build started one.

dbt's first run in a process costs about 3 s more than its later ones (it builds the JSON
schemas it validates the project and profile with, renders them, loads the DuckDB adapter);
`lexkb build` starts `worker` with the build, whose warm-up pays most of that with a `dbt ls`
on the other core while the build's first steps run (transforms.publishing.warm_worker). The results come
back as plain records. Without a started worker dbt runs in the calling process.

dbt needs only the staged tables and edges, and takes about 3 s whatever their size; the steps
after the edges (embeddings, topics, clauses, definitions) do not feed it. So the build starts
dbt in the worker as soon as its inputs are staged (`start_early`, from a hook in
pipelines.dbt), and the dbt step collects that run when its inputs are unchanged since.
Nothing here imports Dagster, so the worker does not either.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import io
import os
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from transforms.publishing.dbt_sources import (
    MEMORY_LIMIT,
    SOURCE_TABLES,
    load_source_files,
    load_sources,
)
from transforms.publishing.warm_worker import WarmWorker, leave_quickly

PROJECT_DIR = Path(__file__).resolve().parents[2] / "dbt_project"
PROFILES_DIR = PROJECT_DIR.parent
# What `dbt parse` leaves beside the manifest: the whole parsed project (pipelines.dbt).
PARSED_PROJECT = PROJECT_DIR / "target" / "partial_parse.msgpack"


class _DbtCoreHidden(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: object, target: object = None) -> None:
        if name == "dbt" or name.startswith("dbt."):
            raise ModuleNotFoundError(f"dbt-core is imported where dbt runs, not here: {name}")


@contextmanager
def dbt_core_hidden() -> Iterator[None]:
    """Import dagster-dbt as it is imported without dbt-core installed (for dbt Cloud and the
    Fusion engine): it then defines the same assets and checks from the manifest (asserted by
    tests/pipeline/test_pipeline.py) without importing dbt-core's own modules, about 3.5 s of every build's
    start that only the process running dbt needs. Where dbt-core is imported already, nothing is
    hidden (dagster-dbt would import the rest of it)."""
    if "dbt" in sys.modules:
        yield
        return
    hidden = _DbtCoreHidden()
    sys.meta_path.insert(0, hidden)
    try:
        yield
    finally:
        sys.meta_path.remove(hidden)


@dataclass(frozen=True)
class NodeResult:
    """One model or test as dbt ran it."""

    name: str
    resource_type: str  # "model", "test", ...
    status: str  # "success", "pass", "fail", "error", "skipped", ...
    seconds: float
    failures: int

    @property
    def passed(self) -> bool:
        return self.status in ("success", "pass")


@dataclass(frozen=True)
class DbtOutcome:
    success: bool
    results: list[NodeResult]
    error: str | None


def _parsed_project():
    """The project as `dbt parse` left it, so a build runs dbt without parsing the project
    again (about 7 s of a cold sample build). Read fresh for each run, since dbt writes compiled
    SQL into the nodes as it runs."""
    from dbt.contracts.graph.manifest import Manifest

    return Manifest.from_msgpack(PARSED_PROJECT.read_bytes())


@contextmanager
def _environment(**values: str) -> Iterator[None]:
    """`values` in the environment for one dbt call, the variables' earlier values put back
    after it."""
    saved = {name: os.environ.pop(name, None) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _invoke(args: list[str], target: Path) -> DbtOutcome:
    """dbt in this process; its log lines (few, with --quiet) are kept off stdout, which
    `lexkb build --json` keeps for its report."""
    from dbt.cli.main import dbtRunner

    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    command = [
        *args,
        "--project-dir",
        str(PROJECT_DIR),
        "--profiles-dir",
        str(PROFILES_DIR),
        "--target-path",
        str(target),
        "--log-path",
        str(target / "logs"),
        "--quiet",
        # The results come back in memory; writing manifest.json and run_results.json as well
        # cost 0.6 s a build.
        "--no-write-json",
    ]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            result = dbtRunner(manifest=_parsed_project()).invoke(command)
    finally:
        _release_database()
    results = [
        NodeResult(
            name=r.node.name,
            resource_type=str(r.node.resource_type).rsplit(".", 1)[-1].lower(),
            status=str(r.status).rsplit(".", 1)[-1].lower(),
            seconds=round(float(r.execution_time or 0), 3),
            failures=int(r.failures or 0),
        )
        for r in getattr(result.result, "results", None) or []
    ]
    error = f"{type(result.exception).__name__}: {result.exception}" if result.exception else None
    return DbtOutcome(bool(result.success), results, error)


def _release_database() -> None:
    """dbt-duckdb keeps its DuckDB connection for the life of the process; a build in another
    process (or a reader of models.duckdb) could not open the file while it lives. Close it."""
    from dbt.adapters.duckdb.connections import DuckDBConnectionManager

    environment = DuckDBConnectionManager._ENV
    if environment is not None:
        environment.close()
    DuckDBConnectionManager.close_all_connections()


def _build(tables: str, database: str, target: str) -> DbtOutcome:
    load_sources(Path(tables), Path(database))
    with _environment(LEXKB_DBT_DATABASE=database):
        return _invoke(["build"], Path(target))


def _build_files(files: dict[str, list[str]], database: str, target: str) -> DbtOutcome:
    load_source_files(
        {name: [Path(f) for f in paths] for name, paths in files.items()}, Path(database)
    )
    with _environment(LEXKB_DBT_DATABASE=database, LEXKB_DBT_MEMORY_LIMIT=MEMORY_LIMIT):
        return _invoke(["build"], Path(target))


def build_files(files: dict[str, list[Path]], database: Path, target: Path) -> DbtOutcome:
    """`build` on sources given as Parquet files per table (a partitioned build's parts),
    which DuckDB reads itself (transforms.publishing.dbt_sources.load_source_files); the models run within
    the same memory limit. (Without one, DuckDB keeps what it reads of the models' database up
    to 80% of the machine's memory: dbt's models on 1.7 M chunks held 2.2 GB.)"""
    paths = {name: [str(f) for f in found] for name, found in files.items()}
    return worker.run(_build_files, paths, str(database), str(target))


def _inputs(tables: Path, database: Path, target: Path) -> tuple:
    """What a run was started on: its paths, and the size and modification time of each table
    it loads."""
    stats = [(tables / f"{name}.parquet").stat() for name in SOURCE_TABLES]
    return (str(database), str(target), *((s.st_size, s.st_mtime_ns) for s in stats))


# The run `start_early` started, with the inputs it was started on.
_early: tuple[tuple, Future] | None = None


def start_early(tables: Path, database: Path, target: Path) -> None:
    """Start `build(tables, database, target)` in the worker and return at once; nothing
    without a started worker. A run started before and never collected is dropped."""
    global _early
    if worker.started():
        _early = (
            _inputs(tables, database, target),
            worker.submit(_build, *map(str, (tables, database, target))),
        )


def build(tables: Path, database: Path, target: Path) -> DbtOutcome:
    """`dbt build` of the project on the Parquet tables in `tables`, loaded into the models'
    database `database` (a file named models.duckdb, as the manifest's relations name it:
    pipelines.dbt), its run artefacts under `target`: in the worker when one was started. A run
    `start_early` started on the same, unchanged, inputs is waited for and its outcome returned;
    any other is waited for (it holds the database) and run again."""
    global _early
    early, _early = _early, None
    if early is not None:
        started_on, future = early
        try:
            outcome = future.result()
        except Exception:  # noqa: BLE001 - run again below, where its error is reported
            outcome = None
        if outcome is not None and started_on == _inputs(tables, database, target):
            return outcome
    return worker.run(_build, str(tables), str(database), str(target))


def _warm_up() -> None:
    """List the project's models once, against no database, into a throwaway folder. (A build
    on empty tables in a scratch database warmed no better: the first real build still took
    1 s more than later ones.) A warm-up that fails (no parsed project yet in a fresh clone:
    the build's process parses it) leaves the first build to pay the cost instead."""
    with (
        contextlib.suppress(Exception),
        tempfile.TemporaryDirectory(prefix="lexkb-dbt-") as scratch,
    ):
        _invoke(["ls", "--resource-type", "model"], Path(scratch))
    leave_quickly()


worker = WarmWorker(_warm_up)
