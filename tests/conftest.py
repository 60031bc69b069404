"""Shared fixtures: one real build of the sample corpus through the Dagster jobs per session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evaluation_data.realdocs import SIX

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "examples" / "corpus"
SHARED = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def built_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from pipelines.build import run_build

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
    from transforms.elements import document_elements
    from transforms.source_files import discover
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
