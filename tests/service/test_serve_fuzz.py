"""Property-based requests against `lexkb serve` from its own OpenAPI document (schemathesis):
whatever a client sends, no route fails with a server error, and every reply has a status,
content type, headers and body that the document declares. A fixed seed keeps a run
repeatable; keys are required, so the key path is exercised too."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import REPO
from tests.support.serve_process import add_key, call, start

CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
    ]
)


def test_generated_requests_get_declared_replies(built_root: Path, tmp_path: Path):
    store = tmp_path / "fuzz.db"
    key = add_key(store, "fuzz", admin=True)
    server = start(built_root, store, "--require-keys", "--asks-per-hour", "100000")
    try:
        spec = call(server, "GET", "/api/v1/openapi.json", key=key).body
        operations = sum(len(methods) for methods in spec["paths"].values())
        done = subprocess.run(
            [str(REPO / ".venv/bin/schemathesis"), "run", f"{server.url}/api/v1/openapi.json",
             "--checks", CHECKS, "--max-examples", "15", "--seed", "7", "--no-color",
             "-H", f"Authorization: Bearer {key}"],
            capture_output=True, text=True, timeout=600, cwd=tmp_path,  # its report folder
        )  # fmt: skip
    finally:
        server.stop()
    assert done.returncode == 0, done.stdout[-4000:]
    # every documented operation was exercised, none skipped
    assert operations >= 27 and f"{operations} selected / {operations} total" in done.stdout
