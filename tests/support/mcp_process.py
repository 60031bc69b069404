"""`lexkb mcp --http` as its own process, for the tests and benchmarks that talk to it over
real HTTP on 127.0.0.1, started in a session of its own so that stopping it stops its threads'
children too."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LEXKB = str(REPO / ".venv" / "bin" / "lexkb")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def environment(**extra: str) -> dict[str, str]:
    """This process's environment without the operator's MCP, LLM and Brave settings, plus
    `extra`: what a server under test sees is only what the caller sets."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("LEXKB_MCP_", "LEXKB_LLM"))}
    keep.pop("BRAVE_API_KEY", None)
    return {**keep, **extra}


def start(root: Path, listen: str, *flags: str, wait: float = 60.0, **env: str) -> subprocess.Popen:
    """`lexkb mcp --index ROOT --http LISTEN FLAGS`, returned once it accepts connections on
    127.0.0.1; an error with the end of its stderr when it exits or does not start in `wait`."""
    port = int(listen.rpartition(":")[2])
    server = subprocess.Popen(
        [LEXKB, "mcp", "--index", str(root), "--http", listen, *flags],
        env=environment(**env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + wait
    while True:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return server
        if server.poll() is not None or time.monotonic() > deadline:
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=30)
            raise RuntimeError(f"server did not start: {server.stderr.read().decode()[-2000:]}")
        time.sleep(0.1)


def stop(server: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL if a worker thread still waits on a hung endpoint 15 s later."""
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=30)
    if server.stderr is not None:
        server.stderr.close()
