"""A real PostgreSQL server for a test session: Debian's binaries (the `postgresql` package,
which .ci/run installs), a fresh cluster in a temporary folder, on a free port of 127.0.0.1,
stopped at the end. As root the server runs as the `postgres` user, which initdb requires."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tests.support.mcp_process import free_port


def binaries() -> str | None:
    """The folder of initdb and pg_ctl, or None where PostgreSQL is not installed."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    return os.path.dirname(initdb) if initdb else None


def _as_owner(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


@contextmanager
def postgres_server() -> Iterator[str]:
    """A URL of a new, empty database on a server started here."""
    folder = binaries()
    if folder is None:
        raise RuntimeError("PostgreSQL is not installed")
    work = tempfile.mkdtemp(prefix="lexkb-pg-")
    os.chmod(work, 0o755)
    if os.geteuid() == 0:
        shutil.chown(work, "postgres", "postgres")
    data = os.path.join(work, "data")
    port = free_port()
    subprocess.run(
        _as_owner([f"{folder}/initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8"]),
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {work} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(
        _as_owner(
            [f"{folder}/pg_ctl", "-D", data, "-o", options, "-w", "-l", f"{work}/log", "start"]
        ),
        check=True,
        capture_output=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            ready = subprocess.run(
                [f"{folder}/pg_isready", "-h", "127.0.0.1", "-p", str(port)], capture_output=True
            )
            if ready.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        subprocess.run(
            [f"{folder}/psql", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-c",
             "CREATE DATABASE lexkb"],
            check=True, capture_output=True,
        )  # fmt: skip
        yield f"postgresql://postgres@127.0.0.1:{port}/lexkb"
    finally:
        subprocess.run(
            _as_owner([f"{folder}/pg_ctl", "-D", data, "-m", "fast", "-w", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(work, ignore_errors=True)
