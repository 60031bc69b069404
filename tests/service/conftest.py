"""Fixtures the service tests share: a real PostgreSQL server, started once per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.postgres import binaries, postgres_server


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    if binaries() is None:
        pytest.skip("Debian's postgresql is not installed")
    with postgres_server() as url:
        yield url
