"""The dbt project as Dagster assets: each model an asset, each dbt test an asset check.

dagster-dbt's `@dbt_assets` defines the assets and checks from dbt's manifest; the build runs
dbt through dbt's own programmatic runner (transforms.publishing.dbt_runner: in a warm worker when the build
started one, else in this process) and reports each model and test as a Dagster event. dbt
reads the tables the build stages in ROOT/work/tables, loaded into its database first (its
`lexkb` source, mapped to the `search_tables` and `citation_edges` assets; see
transforms.publishing.dbt_sources), and `standards.parquet` is written back beside them, so the catalog it
computes is published with the snapshot. A failing dbt test fails the step, and
`published_snapshot`, which depends on `standards`, is not materialized.
"""

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import dagster as dg

from assets import tags
from assets.resources import REPO_ROOT, LexkbSettings
from transforms.publishing import dbt_runner
from transforms.publishing.dbt_sources import export_standards

with dbt_runner.dbt_core_hidden():
    from dagster_dbt import (
        DagsterDbtTranslator,
        DagsterDbtTranslatorSettings,
        DbtProject,
        dbt_assets,
    )

DBT_PROJECT = DbtProject(project_dir=dbt_runner.PROJECT_DIR, profiles_dir=dbt_runner.PROFILES_DIR)
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
                # relations name the database every build uses (see `dbt_runner._parsed_project`).
                "LEXKB_DBT_DATABASE": str(Path(project.project_dir) / "target" / DATABASE_FILE),
            },
            cwd=REPO_ROOT,
        )
    return manifest


# Three dbt sources (documents, sections, chunks) come from one asset, `search_tables`.
TRANSLATOR = DagsterDbtTranslator(
    settings=DagsterDbtTranslatorSettings(enable_duplicate_source_asset_keys=True)
)


@dbt_assets(
    manifest=_ensure_manifest(DBT_PROJECT),
    project=DBT_PROJECT,
    dagster_dbt_translator=TRANSLATOR,
    # Collected after every step it does not depend on, which its early run overlaps.
    op_tags={tags.PRIORITY: "-1"},
)
def dbt_models(context: dg.AssetExecutionContext, settings: LexkbSettings) -> Iterator:
    tables, database, target = _paths(settings)
    outcome = dbt_runner.build(tables, database, target)
    yield from dagster_events(context, outcome.results)
    if not outcome.success:
        failed = [f"{r.name}: {r.status}" for r in outcome.results if not r.passed]
        raise dg.Failure(f"dbt build failed: {'; '.join(failed) or outcome.error}")
    export_standards(database, tables)


def _paths(settings: LexkbSettings) -> tuple[Path, Path, Path]:
    """The staged tables dbt reads, its database and its run artefacts (beside the database, not
    in the source tree)."""
    work = settings.work.path
    return settings.tables, work / DATABASE_FILE, work / "dbt-target"


# dbt reads `search_tables` and `citation_edges` (its sources), and edges come last.
LAST_INPUT = "citation_edges"


@dg.success_hook(required_resource_keys={"settings"})
def dbt_starts_early(context: dg.HookContext) -> None:
    """Once dbt's last input is staged, start its run in the worker (transforms.publishing.dbt_runner):
    it overlaps the steps dbt does not depend on, and `dbt_models` collects it."""
    if context.op.name == LAST_INPUT:
        dbt_runner.start_early(*_paths(context.resources.settings))


def dagster_events(
    context: dg.AssetExecutionContext, results: list[dbt_runner.NodeResult]
) -> Iterator:
    """A materialization per model and a check result per test, keyed as dagster-dbt's
    translator keys them (a model's asset key ends with its name; a test is a check named
    after it)."""
    models = {key.path[-1]: key for key in context.selected_asset_keys}
    checks = {key.name: key for key in context.selected_asset_check_keys}
    for result in results:
        timing = {"execution_seconds": result.seconds}
        if result.resource_type == "model" and result.name in models and result.passed:
            yield dg.MaterializeResult(
                asset_key=models[result.name], metadata={**timing, "status": result.status}
            )
        elif result.resource_type == "test" and result.name in checks:
            check = checks[result.name]
            yield dg.AssetCheckResult(
                asset_key=check.asset_key,
                check_name=check.name,
                passed=result.passed,
                severity=dg.AssetCheckSeverity.ERROR,
                metadata={**timing, "failures": result.failures, "status": result.status},
            )
