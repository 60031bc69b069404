"""lexkb stays offline: a search that embeds writes nothing for onnxruntime's telemetry.

onnxruntime's official builds write a device id and queue events under
~/.cache/Microsoft/DeveloperTools/.onnxruntime/ as soon as they load, unless
ORT_DISABLE_TELEMETRY is set first (lexkb.core.offline sets it before every import lexkb makes). Each search here runs
in a fresh interpreter whose HOME is a new empty folder, as a user's shell would start it, and
without the variable in its environment (this test process has it: lexkb set it here too).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CORPUS, REPO

QUESTION = "how long must a firm keep its records"


def _fresh_env(home: Path) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("ORT_DISABLE_TELEMETRY", "XDG_CACHE_HOME")
    }
    env.update(HOME=str(home), PYTHONPATH=str(REPO))
    return env


def _written(home: Path) -> list[str]:
    return sorted(str(p.relative_to(home)) for p in home.rglob("*"))


def test_a_cli_search_that_embeds_writes_nothing_under_home(built_root: Path, tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "lexkb.cli",
            "search",
            QUESTION,
            "--index",
            str(built_root),
            "--json",
        ],
        env=_fresh_env(home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["mode"] == "hybrid"  # the question was embedded
    assert _written(home) == []


SCAN_SEARCH = """
import sys
from lexkb import Index, dense_scan
dense_scan.MIN_VECTORS = 0  # the int8 scan's own onnxruntime session too
index = Index.open(sys.argv[1])
assert index.dense.int8_scan() is not None
print(index.search(sys.argv[2], k=3).mode)
"""


def test_a_library_search_through_the_int8_scan_writes_nothing_under_home(
    built_root: Path, tmp_path: Path
):
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", SCAN_SEARCH, str(built_root), QUESTION],
        env=_fresh_env(home),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "hybrid"
    assert _written(home) == []


@pytest.mark.build
def test_a_cli_build_writes_nothing_under_home(tmp_path: Path):
    """A build loads onnxruntime early, in a thread while its files parse (assets.warmup),
    and only then embeds: that first load must come through lexkb.core.offline too. At 651449e
    the warm-up imported the runtime itself, and every `lexkb build` wrote a device id and an
    event queue under ~/.cache/Microsoft/ (issue 57)."""
    home = tmp_path / "home"
    home.mkdir()
    out = tmp_path / "index"
    done = subprocess.run(
        [sys.executable, "-m", "lexkb.cli", "build", str(CORPUS), "--out", str(out), "--json"],
        env={**_fresh_env(home), "LEXKB_EMBEDDER": "local"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert _written(home) == []
