"""The query-only install, as a service that loads snapshots installs it: the wheel alone in a
fresh virtual environment, with none of the build's libraries, then search, get, MCP and
`lexkb serve` against the shared snapshot, and `lexkb build` saying in one line what to install.

The wheel's dependencies come from uv's cache, which the README's set-up filled; without a
cache they come from the package index, as a service's install would."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
import zipfile
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import REPO
from tests.support.mcp_process import environment, free_port
from tests.support.query_install import build_wheel, fresh_venv, install
from tests.support.serve_process import Served, call

# Module fixtures that build: the tests taking them are in the build tier (tests/conftest.py).
BUILDING_FIXTURES = {"query_venv"}

BUILD_ONLY = ("dagster", "dbt", "great_expectations", "unstructured", "scipy")


@pytest.fixture(scope="module")
def query_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv holding lexkb's wheel and what it depends on, nothing more."""
    work = tmp_path_factory.mktemp("query_install")
    wheel = build_wheel(work / "dist")
    venv = fresh_venv(work / "venv")
    if subprocess.run(install(venv, wheel, "--offline"), capture_output=True).returncode:
        subprocess.run(install(venv, wheel), check=True, capture_output=True)
    return venv


def _site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def _lexkb(venv: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(venv / "bin" / "lexkb"), *args],
        capture_output=True,
        text=True,
        env=environment(),
        timeout=300,
    )


def test_no_build_library_and_no_generic_package_is_installed(query_venv: Path):
    site = _site_packages(query_venv)
    installed = {path.name for path in site.iterdir()}
    for name in ("transforms", "assets", "pipelines", *BUILD_ONLY):
        assert name not in installed, name
    wheel_top = {
        name.split("/")[0]
        for wheel in (query_venv.parent / "dist").glob("*.whl")
        for name in zipfile.ZipFile(wheel).namelist()
    }
    assert wheel_top == {"lexkb", "lexkb-0.1.0.dist-info"}


def test_search_and_get_answer_from_a_snapshot(query_venv: Path, built_root: Path):
    found = _lexkb(
        query_venv, "search", "client money reconciliation records", "--index", str(built_root),
        "--k", "2", "--json",
    )  # fmt: skip
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    hits = hits["hits"] if isinstance(hits, dict) else hits
    assert len(hits) == 2 and all(hit["citation"] for hit in hits)
    got = _lexkb(query_venv, "get", "Rule 4.3.1", "--index", str(built_root), "--json")
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["match"] == "exact"


def test_build_says_in_one_line_what_to_install(query_venv: Path, tmp_path: Path):
    done = _lexkb(query_venv, "build", str(REPO / "examples" / "corpus"), "--out", str(tmp_path))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "lexkb[build]" in lines[0].replace("'.[build]'", "lexkb[build]")
    assert not any(tmp_path.iterdir())


def test_mcp_over_stdio_answers(query_venv: Path, built_root: Path):
    server = StdioServerParameters(
        command=str(query_venv / "bin" / "lexkb"),
        args=["mcp", "--index", str(built_root)],
        env=environment(),
    )

    async def search() -> dict:
        async with Client(server) as client:
            result = await client.call_tool("search", {"query": "client money", "limit": 1})
            assert not result.is_error, result.content[0].text
            return result.structured_content

    found = asyncio.run(search())
    assert found["hits"] and found["hits"][0]["citation"]


def test_serve_answers_search_over_http(query_venv: Path, built_root: Path, tmp_path: Path):
    port = free_port()
    process = subprocess.Popen(
        [
            str(query_venv / "bin" / "lexkb"), "serve", "--index", str(built_root),
            "--store", str(tmp_path / "store.db"), "--port", str(port),
        ],
        env=environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    served = Served(process, port)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if call(served, "GET", "/healthz").status == 200:
                    break
            except OSError:
                pass
            assert process.poll() is None, process.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "lexkb serve did not start"
            time.sleep(0.3)
        reply = call(served, "POST", "/api/v1/search", {"query": "client money", "limit": 2})
        assert reply.status == 200, reply.body
        assert reply.body["hits"][0]["citation"]
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
