"""Fixtures the service tests share: a real PostgreSQL server, started once per module, and a
store on SQLite and on that server (each test that takes `store` runs on both); for the page's
tests, headless Chromium (Debian's `chromium`, driven by Playwright) and a folder for screenshots
($LEXKB_SCREENSHOTS when set: docs/screenshots is made that way)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from lexkb_service.serve.store import Store
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


CHROMIUM = shutil.which("chromium")
# What a closed network needs (tests/service/test_ui.py).
FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ.get("LEXKB_SCREENSHOTS") or tmp_path_factory.mktemp("shots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture()
def page(browser):
    """A desk-sized page; `errors` collects what the console reports as errors (a failed
    request among them) and uncaught exceptions, `crashes` the uncaught exceptions alone."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    opened = context.new_page()
    errors: list[str] = []
    crashes: list[str] = []
    opened.on("pageerror", lambda error: (errors.append(str(error)), crashes.append(str(error))))
    opened.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    opened.errors = errors
    opened.crashes = crashes
    yield opened
    context.close()
