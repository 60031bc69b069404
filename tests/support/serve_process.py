"""`lexkb serve` as its own process on 127.0.0.1, and a small HTTP client for its API, for the
tests that talk to it over real HTTP."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.support.mcp_process import LEXKB, environment, free_port

# An answer as the store keeps it, for the store's tests.
ANSWER = {
    "question": "How long must records be kept?",
    "answer": "Seven years. [1]",
    "mode": "DIRECT",
    "confidence": 0.8,
    "sources": [{"number": 1, "citation": "Records Retention Act, § 103(b)"}],
    "snapshot_version": "v1",
}


@dataclass
class Served:
    process: subprocess.Popen
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


@dataclass(frozen=True)
class Reply:
    status: int
    headers: dict[str, str]
    body: object

    @property
    def error(self) -> str:
        assert isinstance(self.body, dict), self.body
        return self.body["error"]


def start(root: Path, store: str | Path, *flags: str, wait: float = 120.0, **env: str) -> Served:
    """`lexkb serve --index ROOT --store STORE FLAGS` on a free port, once /healthz answers."""
    port = free_port()
    process = subprocess.Popen(
        [LEXKB, "serve", "--index", str(root), "--store", str(store), "--port", str(port), *flags],
        env=environment(**env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    served = Served(process, port)
    deadline = time.monotonic() + wait
    while True:
        try:
            if call(served, "GET", "/healthz").status == 200:
                return served
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            served.stop()
            raise RuntimeError(
                f"lexkb serve did not start: {process.stderr.read().decode()[-2000:]}"
            )
        time.sleep(0.3)


def call(
    served: Served,
    method: str,
    path: str,
    body: object = None,
    key: str | None = None,
    raw: bytes | None = None,
    **headers: str,
) -> Reply:
    """One request; the body is sent as JSON (or `raw` bytes), the reply read as JSON when it
    says it is."""
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=120)
    sent = {k.replace("_", "-"): v for k, v in headers.items()}
    if key is not None:
        sent["Authorization"] = f"Bearer {key}"
    data = raw if raw is not None else None if body is None else json.dumps(body).encode()
    if data is not None:
        sent.setdefault("Content-Type", "application/json")
    try:
        connection.request(method, path, body=data, headers=sent)
        response = connection.getresponse()
        content = response.read()
        kind = response.getheader("content-type") or ""
        parsed = json.loads(content) if "json" in kind and content else content.decode()
        return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, parsed)
    finally:
        connection.close()


def add_key(store: str | Path, name: str, admin: bool = False) -> str:
    """A new API key, made by the CLI as an operator makes it."""
    done = subprocess.run(
        [
            LEXKB,
            "serve",
            "keys",
            "add",
            name,
            "--store",
            str(store),
            *(["--admin"] if admin else []),
        ],
        capture_output=True,
        text=True,
        check=True,
        env=environment(),
    )
    return done.stdout.strip()
