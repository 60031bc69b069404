"""Shared fixtures: one real build of the sample corpus through the Dagster jobs per session; and
the tiers (docs/testing.md), marked here from the fixtures each test takes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evaluation_data.realdocs import SIX

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "examples" / "corpus"
SHARED = REPO.parent / "shared" / "data"

# The tiers (docs/testing.md): unmarked tests are the fast one. A test is in another tier when it
# takes one of these fixtures, directly or through the fixtures it takes: they build the sample
# corpus or run the pipeline on real documents, start Chromium, or start PostgreSQL.
TIER_FIXTURES = {
    "build": frozenset({"built_root", "realdocs_built", "gdpr_pdf_tables"}),
    "browser": frozenset({"browser"}),
    "database": frozenset({"postgres_url"}),
}
# A test module names its own fixtures that build in BUILDING_FIXTURES; a module whose every test
# builds says `pytestmark = pytest.mark.build`, a single test `@pytest.mark.build`. tests/service
# is being reworked by other work: its tiers are named here until its files say them themselves.
SERVICE_TIERS = {
    "tests/service/test_ui.py": "browser",  # the Dagster UI, rendered by Chromium
    "tests/service/test_cli.py::test_build_prints_version_and_json": "build",
    "tests/service/test_cli_json.py::test_build_json_follows_its_schema": "build",
    "tests/service/test_serve_realdocs.py::test_the_clause_type_filter_finds_a_contracts_governing_law": "build",
}


def _tiers(item: pytest.Item) -> set[str]:
    """The tiers `item` is in by the fixtures it takes and by SERVICE_TIERS."""
    taken = set(getattr(item, "fixturenames", ()))
    found = {tier for tier, fixtures in TIER_FIXTURES.items() if taken & fixtures}
    module = getattr(item, "module", None)
    if taken & set(getattr(module, "BUILDING_FIXTURES", ())):
        found.add("build")
    # tests/service/conftest.py's `store` runs each test on SQLite and on a PostgreSQL server
    # it asks for by name, out of the fixture closure's sight.
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("target") == "postgresql":
        found.add("database")
    path, _, name = item.nodeid.partition("::")
    for named in (path, f"{path}::{name.partition('[')[0]}"):
        if named in SERVICE_TIERS:
            found.add(SERVICE_TIERS[named])
    return found


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with its tiers before `-m` selects: a rule rather than hundreds of marks
    by hand, so that a new test taking `index` is in the build tier without saying so."""
    for item in items:
        for tier in _tiers(item):
            item.add_marker(tier)


@pytest.fixture(scope="session")
def built_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from pipelines.in_process import run_build

    root = tmp_path_factory.mktemp("index")
    run_build([CORPUS], root)
    return root


@pytest.fixture(scope="session")
def index(built_root: Path):
    from lexkb import Index

    return Index.open(built_root)


@pytest.fixture()
def corpus_copy(tmp_path: Path) -> Path:
    target = tmp_path / "corpus"
    shutil.copytree(CORPUS, target)
    return target


def shared_file(*parts: str) -> Path:
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"reference data not present: {path}")
    return path


@pytest.fixture(scope="session")
def gdpr_pdf_tables():
    """The GDPR PDF through elements and structure, once per session (about ten seconds)."""
    from transforms.reading.elements import document_elements
    from transforms.reading.source_files import discover
    from transforms.structure import structure_document

    source = discover([shared_file("gdpr", "gdpr-en.pdf")])[0]
    return structure_document(source, document_elements(source))


# The six documents of ../shared/data/realdocs, one per family, built into one index.
REALDOCS = SIX


@pytest.fixture(scope="session")
def realdocs_built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """The six real documents built together by `lexkb build --json` without an embedder (about
    a minute), once per session: the index root and the build's report."""
    import json
    import subprocess

    sources = [str(shared_file("realdocs", name)) for name in REALDOCS]
    root = tmp_path_factory.mktemp("realdocs") / "root"
    lexkb = str(REPO / ".venv" / "bin" / "lexkb")
    done = subprocess.run(
        [lexkb, "build", *sources, "--out", str(root), "--embedder", "none", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return root, json.loads(done.stdout)
