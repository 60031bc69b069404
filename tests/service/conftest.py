"""Fixtures the service tests share: a real PostgreSQL server, started once per module, and a
store on SQLite and on that server (each test that takes `store` runs on both)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lexkb.serve.store import Store
from tests.support.postgres import binaries, postgres_server


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    if binaries() is None:
        pytest.skip("Debian's postgresql is not installed")
    with postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    return request.getfixturevalue("postgres_url")


@pytest.fixture()
def store(target: str) -> Iterator[Store]:
    opened = Store(target)
    yield opened
    if opened.postgres:  # one server serves every test: leave it empty for the next
        for table in ("feedback", "answers", "conversations", "api_keys"):
            opened._rows(f"DELETE FROM {table}")
    opened.close()
