"""The two installs of the wheel, each in a fresh virtual environment with none of the build's
libraries: the query library alone (`pip install lexkb`), as a program that only opens snapshots
installs it, runs search, get and ask from the CLI and from Python, holds none of the service's
libraries, and `lexkb serve`, `lexkb mcp` and `lexkb build` say in one line what to install;
with the extra `serve` (`pip install 'lexkb[serve]'`), MCP and `lexkb serve` answer against the
shared snapshot.

The wheel's dependencies come from uv's cache, which the README's set-up filled; without a
cache they come from the package index, as a service's install would."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sysconfig
import time
import zipfile
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import REPO
from tests.support.mcp_process import environment, free_port
from tests.support.query_install import UV, build_wheel, fresh_venv, install
from tests.support.serve_process import Served, call

# Module fixtures that build: the tests taking them are in the build tier (tests/conftest.py).
BUILDING_FIXTURES = {"wheel", "library_venv", "service_venv"}

BUILD_ONLY = ("transforms", "assets", "pipelines", "dagster", "dbt", "great_expectations",
              "unstructured", "scipy", "duckdb")  # fmt: skip
# The service's libraries, by the names they are imported by: the extra `serve` and what only
# it brings (Starlette with FastAPI).
SERVICE_ONLY = ("fastapi", "starlette", "mcp", "uvicorn", "prometheus_client", "httptools",
                "pypdfium2")  # fmt: skip
SERVICE = ("lexkb_service", *SERVICE_ONLY)  # what a program using the library must not load
QUESTION = "How long must client money records be kept?"

# Search, get and ask through the Python API, and what of the service that loaded.
PYTHON_QUERIES = f"""
import json, sys
from lexkb import Index
from lexkb.answers.ask import ask

index = Index.open(sys.argv[1])
hits = index.search("client money reconciliation records", k=2)
found = index.get("Rule 4.3.1")
answer = ask(index, {QUESTION!r})
print(json.dumps({{
    "citations": [hit.citation for hit in hits],
    "match": str(found.match),
    "sources": [source.citation for source in answer.sources],
    "service": sorted(m for m in sys.modules if m.split(".")[0] in {SERVICE!r}),
}}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("dist"))


def _installed(venv: Path, requirement: str) -> Path:
    """`venv`, fresh, holding `requirement` and what it depends on: from uv's cache when it has
    them all, else from the package index."""
    fresh_venv(venv)
    if subprocess.run(install(venv, requirement, "--offline"), capture_output=True).returncode:
        subprocess.run(install(venv, requirement), check=True, capture_output=True)
    return venv


@pytest.fixture(scope="module")
def library_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel without its extra: the query library and its dependencies, nothing more."""
    return _installed(tmp_path_factory.mktemp("library") / "venv", str(wheel))


@pytest.fixture(scope="module")
def service_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel with the extra `serve`, as the Dockerfile installs it."""
    return _installed(tmp_path_factory.mktemp("service") / "venv", f"{wheel}[serve]")


def _run(venv: Path, *command: str) -> subprocess.CompletedProcess:
    """`command` run in `venv`'s folder, so that the repository's packages are not on its path
    (`python -c` puts the current folder first)."""
    return subprocess.run(
        list(command), capture_output=True, text=True, env=environment(), cwd=venv, timeout=300
    )


def _lexkb(venv: Path, *args: str) -> subprocess.CompletedProcess:
    return _run(venv, str(venv / "bin" / "lexkb"), *args)


def _importable(venv: Path, names: tuple[str, ...]) -> list[str]:
    """Which of the top-level modules `names` the venv's Python can import."""
    code = (
        "import importlib.util, json\n"
        f"print(json.dumps([n for n in {names!r} if importlib.util.find_spec(n)]))"
    )
    done = _run(venv, str(venv / "bin" / "python"), "-c", code)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_wheel_carries_the_library_and_the_service(wheel: Path):
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert tops == {"lexkb", "lexkb_service", "lexkb-0.1.0.dist-info"}
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "lexkb_service/serve/static/index.html" in names
    assert "lexkb/schemas/search.json" in names
    # The keyword ranking kernel, compiled for this Python and platform (hatch_build.py).
    assert _compiled(names) == [f"lexkb/_rank_kernel{sysconfig.get_config_var('EXT_SUFFIX')}"]
    assert not wheel.name.endswith("-py3-none-any.whl")


def _compiled(names: set[str]) -> list[str]:
    """The kernel's compiled module among a wheel's files (not its stub)."""
    return [n for n in names if n.startswith("lexkb/_rank_kernel.") and Path(n).suffix == ".so"]


def test_without_a_compiler_the_wheel_ranks_with_numpy(tmp_path: Path):
    """Where no C compiler runs, the wheel is still built, for any platform, without the
    kernel; the build says why, and lexkb.keyword_ranking then ranks with numpy (the same
    results: tests/query/test_keyword_ranking.py)."""
    built = subprocess.run(
        [str(UV), "build", "--wheel", "-o", str(tmp_path), str(REPO)],
        capture_output=True, text=True, env={**os.environ, "CC": "false"},
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    assert "the keyword ranking kernel was not compiled" in built.stderr
    wheel = next(tmp_path.glob("lexkb-*.whl"))
    assert wheel.name.endswith("-py3-none-any.whl")
    assert _compiled(set(zipfile.ZipFile(wheel).namelist())) == []


def test_the_library_installs_without_the_service_or_the_build(library_venv: Path):
    assert _importable(library_venv, ("lexkb", "lexkb_service", "pydantic")) == [
        "lexkb", "lexkb_service", "pydantic",
    ]  # fmt: skip
    assert _importable(library_venv, SERVICE_ONLY + BUILD_ONLY) == []
    kernel = "import lexkb.keyword_ranking as k; print(k._rank_kernel is not None)"
    assert _run(library_venv, str(library_venv / "bin" / "python"), "-c", kernel).stdout == "True\n"


def test_search_get_and_ask_from_the_cli(library_venv: Path, built_root: Path):
    root = str(built_root)
    found = _lexkb(library_venv, "search", "client money reconciliation records", "--index",
                   root, "--k", "2", "--json")  # fmt: skip
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)
    hits = hits["hits"] if isinstance(hits, dict) else hits
    assert len(hits) == 2 and all(hit["citation"] for hit in hits)
    got = _lexkb(library_venv, "get", "Rule 4.3.1", "--index", root, "--json")
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["match"] == "exact"
    asked = _lexkb(library_venv, "ask", QUESTION, "--index", root, "--json")
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["sources"] and answer["sources"][0]["citation"]


def test_search_get_and_ask_from_python(library_venv: Path, built_root: Path):
    python = str(library_venv / "bin" / "python")
    done = _run(library_venv, python, "-c", PYTHON_QUERIES, str(built_root))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(result["citations"]) == 2 and all(result["citations"])
    assert result["match"] == "exact"
    assert result["sources"] and all(result["sources"])
    assert result["service"] == []


def test_the_service_commands_say_in_one_line_what_to_install(library_venv: Path, built_root: Path):
    listed = _lexkb(library_venv, "--help")
    assert listed.returncode == 0
    for command in ("serve", "mcp"):
        assert f"    {command} " in listed.stdout  # listed all the same
        done = _lexkb(library_venv, command, "--index", str(built_root))
        assert done.returncode == 2, (command, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "pip install 'lexkb[serve]'" in lines[0], done.stderr


def test_build_says_in_one_line_what_to_install(library_venv: Path, tmp_path: Path):
    done = _lexkb(library_venv, "build", str(REPO / "examples" / "corpus"), "--out", str(tmp_path))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "lexkb[build]" in lines[0].replace("'.[build]'", "lexkb[build]")
    assert not any(tmp_path.iterdir())


def test_the_extra_installs_the_service_and_no_build(service_venv: Path):
    assert _importable(service_venv, SERVICE_ONLY) == list(SERVICE_ONLY)
    assert _importable(service_venv, BUILD_ONLY) == []


def test_mcp_over_stdio_answers(service_venv: Path, built_root: Path):
    server = StdioServerParameters(
        command=str(service_venv / "bin" / "lexkb"),
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


def test_serve_answers_search_over_http(service_venv: Path, built_root: Path, tmp_path: Path):
    port = free_port()
    process = subprocess.Popen(
        [
            str(service_venv / "bin" / "lexkb"), "serve", "--index", str(built_root),
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
