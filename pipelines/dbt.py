"""The dbt project as Dagster assets: each model an asset, each dbt test an asset check.

dagster-dbt's `@dbt_assets` defines the assets and checks from dbt's manifest; the build runs
dbt in this process through dbt's own programmatic runner (`run_dbt`) and reports each model and
test as a Dagster event. dbt reads the tables the build stages in ROOT/work/tables, loaded into its database first (its
`lexkb` source, mapped to the `search_tables` and `citation_edges` assets; see
pipelines.dbt_sources), and `standards.parquet` is written back beside them, so the catalog it
computes is published with the snapshot. A failing dbt test fails the step, and
`published_snapshot`, which depends on `standards`, is not materialized.
"""

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
from dagster_dbt import DagsterDbtTranslator, DagsterDbtTranslatorSettings, DbtProject, dbt_assets

from assets.index import TABLE_DIR
from pipelines.dbt_sources import export_standards, load_sources
from pipelines.resources import REPO_ROOT, LexkbSettings
from transforms.workdir import WorkDir

DBT_PROJECT = DbtProject(project_dir=REPO_ROOT / "dbt_project", profiles_dir=REPO_ROOT)
# The dbt installed beside this Python, whether or not its bin directory is on PATH.
DBT_EXECUTABLE = str(Path(sys.executable).parent / "dbt")
DATABASE_FILE = "models.duckdb"


def _ensure_manifest(project: DbtProject) -> Path:
    """dagster-dbt reads the models from dbt's manifest; parse the project when the manifest is
    missing or older than a model (a fresh clone has none)."""
    manifest = Path(project.manifest_path)
    sources = [p for p in Path(project.project_dir).rglob("*") if p.suffix in {".sql", ".yml"}]
    newest = max((p.stat().st_mtime for p in sources if "target" not in p.parts), default=0)
    if not manifest.is_file() or manifest.stat().st_mtime < newest:
        subprocess.run(
            [
                DBT_EXECUTABLE,
                "parse",
                "--quiet",
                "--project-dir",
                str(project.project_dir),
                "--profiles-dir",
                str(project.profiles_dir),
            ],
            check=True,
            env={
                **os.environ,
                "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
                # Parsed as a build runs it: a file named models.duckdb, so the manifest's
                # relations name the database every build uses (see `_parsed_project`).
                "LEXKB_DBT_DATABASE": str(Path(project.project_dir) / "target" / DATABASE_FILE),
            },
            cwd=REPO_ROOT,
        )
    return manifest


def _parsed_project():
    """The project as `dbt parse` left it beside the manifest the assets are defined from (its
    partial-parse file holds the whole parsed project), so a build runs dbt without parsing the
    project again: about 7 s of a cold sample build. Read fresh for each build, since dbt
    writes compiled SQL into the nodes as it runs."""
    from dbt.contracts.graph.manifest import Manifest

    parsed = Path(DBT_PROJECT.manifest_path).with_name("partial_parse.msgpack")
    return Manifest.from_msgpack(parsed.read_bytes())


@contextmanager
def _environment(**values: str) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# Three dbt sources (documents, sections, chunks) come from one asset, `search_tables`.
TRANSLATOR = DagsterDbtTranslator(
    settings=DagsterDbtTranslatorSettings(enable_duplicate_source_asset_keys=True)
)


@dbt_assets(
    manifest=_ensure_manifest(DBT_PROJECT), project=DBT_PROJECT, dagster_dbt_translator=TRANSLATOR
)
def dbt_models(context: dg.AssetExecutionContext, lexkb: LexkbSettings) -> Iterator:
    work = WorkDir(lexkb.root_path)
    tables = work.path / TABLE_DIR
    database = work.path / DATABASE_FILE
    load_sources(tables, database)
    with _environment(LEXKB_DBT_DATABASE=str(database)):
        # dbt's run artifacts go beside the models' database, not into the source tree.
        outcome = run_dbt(["build"], work.path / "dbt-target")
    yield from dagster_events(context, outcome.results)
    if not outcome.success:
        failed = [f"{r.node.name}: {r.status}" for r in outcome.results if not _passed(r)]
        raise dg.Failure(f"dbt build failed: {'; '.join(failed) or outcome.error}")
    export_standards(database, tables)


@dataclass(frozen=True)
class DbtOutcome:
    success: bool
    results: list
    error: str | None


def run_dbt(args: list[str], target: Path) -> DbtOutcome:
    """dbt in this process through its programmatic runner: the adapter and the parsed project
    stay loaded between builds, where a `dbt` subprocess would start Python and dbt each time
    (about 8 s of a 5-file build)."""
    from dbt.cli.main import dbtRunner

    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    command = [
        *args,
        "--project-dir",
        str(DBT_PROJECT.project_dir),
        "--profiles-dir",
        str(DBT_PROJECT.profiles_dir),
        "--target-path",
        str(target),
        "--log-path",
        str(target / "logs"),
        "--quiet",
        # The results come back in memory (`dagster_events`); writing manifest.json and
        # run_results.json as well cost 0.6 s a build.
        "--no-write-json",
    ]
    try:
        result = dbtRunner(manifest=_parsed_project()).invoke(command)
    finally:
        _release_database()
    results = list(getattr(result.result, "results", None) or [])
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


def _passed(result) -> bool:
    return str(result.status).rsplit(".", 1)[-1].lower() in ("success", "pass")


def dagster_events(context: dg.AssetExecutionContext, results: list) -> Iterator:
    """A materialization per model and a check result per test, keyed as dagster-dbt's
    translator keys them (a model's asset key ends with its name; a test is a check named
    after it)."""
    models = {key.path[-1]: key for key in context.selected_asset_keys}
    checks = {key.name: key for key in context.selected_asset_check_keys}
    for result in results:
        node = result.node
        status = str(result.status).rsplit(".", 1)[-1].lower()
        timing = {"execution_seconds": round(float(result.execution_time or 0), 3)}
        if node.resource_type == "model" and node.name in models and _passed(result):
            yield dg.MaterializeResult(
                asset_key=models[node.name], metadata={**timing, "status": status}
            )
        elif node.resource_type == "test" and node.name in checks:
            check = checks[node.name]
            yield dg.AssetCheckResult(
                asset_key=check.asset_key,
                check_name=check.name,
                passed=_passed(result),
                severity=dg.AssetCheckSeverity.ERROR,
                metadata={**timing, "failures": int(result.failures or 0), "status": status},
            )
