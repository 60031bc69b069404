"""The installs of lexkb's wheel, built from the repository, in a fresh virtual environment: the
query library alone, or with the service's extra. Shared by their test
(tests/test_query_install.py) and their benchmark (benchmarks/query_install.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
UV = REPO / ".venv" / "bin" / "uv"


def build_wheel(dist: Path) -> Path:
    """lexkb's wheel, written into `dist`."""
    subprocess.run([str(UV), "build", "--wheel", "-o", str(dist), str(REPO)], check=True,
                   capture_output=True)  # fmt: skip
    return next(dist.glob("lexkb-*.whl"))


def fresh_venv(path: Path) -> Path:
    """An empty virtual environment of this Python at `path`."""
    subprocess.run([str(UV), "venv", "-q", "--python", sys.executable, str(path)], check=True)
    return path


def install(venv: Path, requirement: str | Path, *flags: str) -> list[str]:
    """The command that installs `requirement` (a wheel's path, followed by `[serve]` for the
    service) and what it depends on into `venv`."""
    return [str(UV), "pip", "install", "-q", *flags, "--python", str(venv / "bin" / "python"),
            str(requirement)]  # fmt: skip
