"""The dbt project as Dagster assets: each model an asset, each dbt test an asset check.

dbt reads the tables the build stages in ROOT/work/tables, loaded into its database first (its
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
from pathlib import Path

import dagster as dg
from dagster_dbt import (
    DagsterDbtTranslator,
    DagsterDbtTranslatorSettings,
    DbtCliResource,
    DbtProject,
    dbt_assets,
)

from assets.index import TABLE_DIR
from pipelines.dbt_sources import export_standards, load_sources
from pipelines.resources import REPO_ROOT, LexkbSettings
from transforms.workdir import WorkDir

DBT_PROJECT = DbtProject(project_dir=REPO_ROOT / "dbt_project", profiles_dir=REPO_ROOT)
# The dbt installed beside this Python, whether or not its bin directory is on PATH.
DBT_EXECUTABLE = str(Path(sys.executable).parent / "dbt")


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
            env={**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"},
            cwd=REPO_ROOT,
        )
    return manifest


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
def dbt_models(
    context: dg.AssetExecutionContext, dbt: DbtCliResource, lexkb: LexkbSettings
) -> Iterator:
    work = WorkDir(lexkb.root)
    tables = work.path / TABLE_DIR
    database = work.path / "models.duckdb"
    load_sources(tables, database)
    with _environment(LEXKB_DBT_DATABASE=str(database)):
        # dbt's run artifacts go beside the models' database, not into the source tree.
        invocation = dbt.cli(["build"], context=context, target_path=work.path / "dbt-target")
        yield from invocation.stream()
    if invocation.is_successful():
        export_standards(database, tables)


dbt_resource = DbtCliResource(project_dir=DBT_PROJECT, dbt_executable=DBT_EXECUTABLE)
