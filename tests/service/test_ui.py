"""The Dagster UI as a person opens it: the real webserver on the shipped instance settings, its
pages rendered by headless Chromium (Debian's `chromium`; skipped where it is not installed).

The control test starts the same webserver on an instance with default settings and finds the
newsletter dialog, so the check that it is absent can fail."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO

CHROMIUM = shutil.which("chromium")
DIALOG = "Join the Dagster community"
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _webserver(home: Path) -> Iterator[str]:
    port = _free_port()
    env = {**os.environ, "DAGSTER_HOME": str(home)}
    process = subprocess.Popen(
        [str(REPO / ".venv/bin/dagster-webserver"), "-w", "workspace.yaml"]
        + ["-h", "127.0.0.1", "-p", str(port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/server_info", timeout=2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the Dagster webserver did not start") from None
                time.sleep(0.5)
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def shipped_ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("dagster_home")
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    yield from _webserver(home)


def render(url: str, tmp_path: Path) -> str:
    """The page's DOM after its scripts ran, with the flags a closed network needs; the window
    is tall because the catalog renders only the rows in view."""
    done = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic"]
        + ["--no-first-run", "--disable-background-networking", "--disable-component-update"]
        + ["--disable-sync", f"--user-data-dir={tmp_path / 'chromium'}"]
        + ["--window-size=1600,5000", "--virtual-time-budget=20000", "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def test_asset_catalog_shows_every_asset_without_the_newsletter_dialog(shipped_ui, tmp_path):
    from pipelines.definitions import defs

    page = render(f"{shipped_ui}/assets", tmp_path)
    assert DIALOG not in page
    names = {key.path[-1] for key in defs.resolve_asset_graph().get_all_asset_keys()}
    missing = sorted(name for name in names if f">{name}<" not in page)
    assert not missing, f"asset catalog does not show {missing}"


def test_asset_checks_page_lists_the_publish_gates(shipped_ui, tmp_path):
    page = render(f"{shipped_ui}/assets/search_tables?view=checks", tmp_path)
    assert DIALOG not in page
    for check in ("chunks_are_sound", "sections_are_sound", "documents_are_sound"):
        assert f">{check}<" in page


def test_default_instance_settings_would_show_the_dialog(tmp_path_factory, tmp_path):
    home = tmp_path_factory.mktemp("default_home")
    for url in _webserver(home):
        assert DIALOG in render(f"{url}/assets", tmp_path)
