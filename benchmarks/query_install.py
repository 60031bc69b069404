"""The wheel's installs against the whole project environment, in one run (issues 50, 60).

    .venv/bin/python benchmarks/query_install.py [--work benchmarks/out/query_install]
        [--index var/index] [--runs 5]

Three fresh virtual environments, each installed from uv's cache (so the time is the install's,
not the download's): the wheel alone (`lexkb`, the query library: what a program that opens
snapshots installs), the wheel with its extra `serve` (`lexkb[serve]`, what a service installs)
and the repository's whole environment (`uv sync --frozen`: the query module, the service, the
build, the dev tools). For each: install time, size on disk, `python -c "import lexkb"` and
`lexkb search ... --index INDEX` wall time (median of --runs, each a fresh process).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from tests.support.query_install import REPO, UV, build_wheel, fresh_venv, install

QUESTION = "how long must client money reconciliation records be kept"


def timed(command: list[str], **env: str) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env={**os.environ, **env})
    return time.perf_counter() - started


def size(path: Path) -> int:
    done = subprocess.run(["du", "-sb", str(path)], check=True, capture_output=True, text=True)
    return int(done.stdout.split()[0])


def library(work: Path) -> tuple[Path, float]:
    wheel = build_wheel(work / "dist")
    venv = fresh_venv(work / "library")
    return venv, timed(install(venv, wheel, "--offline", "--compile-bytecode"))


def service(work: Path) -> tuple[Path, float]:
    wheel = next((work / "dist").glob("lexkb-*.whl"))
    venv = fresh_venv(work / "service")
    return venv, timed(install(venv, f"{wheel}[serve]", "--offline", "--compile-bytecode"))


def whole(work: Path) -> tuple[Path, float]:
    venv = work / "whole"
    seconds = timed(
        [str(UV), "sync", "--frozen", "--compile-bytecode", "-q", "--project", str(REPO)],
        UV_PROJECT_ENVIRONMENT=str(venv),
    )
    return venv, seconds


def median_run(command: list[str], runs: int) -> float:
    return statistics.median(timed(command) for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks" / "out" / "query_install")
    parser.add_argument("--index", type=Path, default=REPO / "var" / "index")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if args.work.exists():
        shutil.rmtree(args.work)
    args.work.mkdir(parents=True)
    rows = []
    installs = (
        ("query library (the wheel alone)", library),
        ("with the service (`lexkb[serve]`)", service),
        ("whole environment", whole),
    )
    for name, installed in installs:
        venv, seconds = installed(args.work)
        python, lexkb = str(venv / "bin" / "python"), str(venv / "bin" / "lexkb")
        imported = median_run([python, "-c", "import lexkb.index"], args.runs)
        searched = median_run([lexkb, "search", QUESTION, "--index", str(args.index), "--k", "5"],
                              args.runs)  # fmt: skip
        rows.append((name, seconds, size(venv), imported, searched))
    print("| install | install time (from uv's cache) | size on disk | `import lexkb.index` "
          "| `lexkb search` (fresh process) |")  # fmt: skip
    print("|---|---|---|---|---|")
    for name, seconds, bytes_, imported, searched in rows:
        print(f"| {name} | {seconds:.1f} s | {bytes_ / 2**20:,.0f} MiB | {imported:.2f} s "
              f"| {searched:.2f} s |")  # fmt: skip


if __name__ == "__main__":
    main()
