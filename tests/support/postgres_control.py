"""Stopping, starting and restarting the PostgreSQL server of tests.support.postgres under a
running service, as an operator's `pg_ctl` does (a restart for an upgrade, a failover): the
tests of the store's reconnecting and benchmarks/faults.py's recovery time use it."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from tests.support.postgres import binaries


def _as_owner(command: list[str]) -> list[str]:
    """As the `postgres` user when run as root (pg_ctl refuses root), else as this user."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def data_directory(url: str) -> Path:
    """The data folder of the server at `url`, as the server itself reports it."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        row = connection.execute("SHOW data_directory").fetchone()
    assert row is not None
    return Path(row[0])


def pg_ctl(data: Path, action: str, *extra: str) -> None:
    """`pg_ctl ACTION` on `data`, waiting for it to finish; the server's output goes to the log
    beside the data folder (a server started with this process's pipes would hold them)."""
    folder = binaries()
    assert folder is not None, "PostgreSQL is not installed"
    command = [f"{folder}/pg_ctl", "-D", str(data), "-m", "fast", "-w", *extra, action]
    if action in ("start", "restart"):
        command[-1:-1] = ["-l", str(data.parent / "log")]
    subprocess.run(_as_owner(command), check=True, capture_output=True, timeout=60)


def server_options(data: Path) -> str:
    """The options the server was started with (postmaster.opts: port, socket folder,
    addresses), for starting it again as it was; `pg_ctl restart` reads them itself."""
    words = shlex.split((data / "postmaster.opts").read_text())[1:]
    kept, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word == "-D":
            skip = True
        else:
            kept.append(word)
    return shlex.join(kept)


def restart(url: str) -> None:
    pg_ctl(data_directory(url), "restart")
