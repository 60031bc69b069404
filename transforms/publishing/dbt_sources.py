"""The dbt project's inputs and outputs, moved between Parquet and DuckDB without SQL text.

The tables a build stages are read with polars and registered with DuckDB as Arrow tables, then
copied into the schema `lexkb_source` of the models' database; dbt's source points at that
schema. The `standards` model is read back as Arrow and written to Parquet by polars. (Not
pyarrow's own reader and writer: they import pandas, 1.2 s a build otherwise never spends.) No path
is ever part of a SQL string, so a root such as "/tmp/d')); COPY ..." is just a folder name.

Run dbt on a build by hand:

    .venv/bin/python -m transforms.publishing.dbt_sources ROOT          # loads ROOT/work/tables
    LEXKB_DBT_DATABASE=ROOT/work/models.duckdb .venv/bin/dbt build --project-dir dbt_project
"""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb
import polars as pl

SOURCE_SCHEMA = "lexkb_source"
SOURCE_TABLES = ("documents", "sections", "chunks", "edges")
# Identifiers are these constants, never input; DuckDB takes the data as a registered relation.
_COPY = {name: f"CREATE OR REPLACE TABLE {SOURCE_SCHEMA}.{name} AS SELECT * FROM incoming"
         for name in SOURCE_TABLES}  # fmt: skip


def load_sources(tables: Path, database: Path) -> None:
    """Copy the staged Parquet tables into `database`, schema lexkb_source."""
    with duckdb.connect(str(database)) as con:
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {SOURCE_SCHEMA}")
        for name in SOURCE_TABLES:
            con.register("incoming", pl.read_parquet(tables / f"{name}.parquet").to_arrow())
            try:
                con.execute(_COPY[name])
            finally:
                con.unregister("incoming")


# DuckDB's memory while loading a partitioned build's files and while dbt's models run on them
# (transforms.publishing.dbt_runner.build_files): it streams them and spills past it. DuckDB fills what it
# is allowed whatever the corpus: on 1.7 M chunks (stand-ins for 100x ObliQA's) the load peaked
# at 1.10 GB resident under 1 GB and 0.68 GB under this, the models at 1.24 and 0.75 GB, the
# two 1-2 s slower of about 33 s.
MEMORY_LIMIT = "512MB"
_COPY_FILES = {name: f"CREATE OR REPLACE TABLE {SOURCE_SCHEMA}.{name} AS SELECT * FROM read_parquet(?)"
               for name in SOURCE_TABLES}  # fmt: skip


def load_source_files(files: dict[str, list[Path]], database: Path) -> None:
    """Copy each source table from its Parquet files (a partitioned build's parts) into
    `database`, schema lexkb_source, with DuckDB reading them itself, within MEMORY_LIMIT: the
    chunks of every part are never in this process's memory at once. The paths are a bound
    parameter, never SQL text."""
    with duckdb.connect(str(database)) as con:
        con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {SOURCE_SCHEMA}")
        for name in SOURCE_TABLES:
            con.execute(_COPY_FILES[name], [[str(path) for path in files[name]]])


def export_standards(database: Path, tables: Path) -> None:
    """Write the `standards` model to tables/standards.parquet."""
    with duckdb.connect(str(database), read_only=True) as con:
        table = con.sql("SELECT * FROM main.standards ORDER BY document_key").to_arrow_table()
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)  # a table's frame, never a Series
    frame.write_parquet(tables / "standards.parquet")


if __name__ == "__main__":
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "var/index")
    load_sources(root / "work" / "tables", root / "work" / "models.duckdb")
    print(f"loaded {root / 'work' / 'tables'} into {root / 'work' / 'models.duckdb'}")
