"""The CLI around `lexkb serve` (issue 49, item 13), as an operator runs it: a store that cannot
be opened, or a port in use, is one line and exit 2 (before: a traceback and exit 1, or "lexkb
serve: http://..." as if serving, uvicorn's error and exit 3); `keys list` on a mistyped path
makes nothing (before: the folders and an empty database); `serve keys` takes --store before
its action, and `serve`'s usage shows `keys` as optional."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import pytest

from tests.support.mcp_process import LEXKB, environment, free_port
from tests.support.serve_process import add_key


def lexkb(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [LEXKB, *args], capture_output=True, text=True, timeout=timeout, env=environment()
    )


def one_line_error(done: subprocess.CompletedProcess, words: str) -> None:
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("lexkb: error: ") and words in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("store", "words"),
    [
        ("not-a-database.db", "is not a SQLite database"),
        ("postgresql://lexkb@127.0.0.1:{port}/lexkb", "the PostgreSQL store cannot be opened"),
        ("postgresql://lexkb@127.0.0.1/lexkb?nonsense=1", "invalid URI query parameter"),
        ("postgresql://[::1/lexkb", "the PostgreSQL store cannot be opened"),
    ],
)
def test_a_store_that_cannot_be_opened_is_one_line(store, words, built_root, tmp_path):
    pytest.importorskip("psycopg")
    (tmp_path / "not-a-database.db").write_text("these are notes, not a database\n")
    target = store.format(port=free_port())  # a port no server listens on
    target = str(tmp_path / target) if "://" not in target else target
    one_line_error(lexkb("serve", "keys", "list", "--store", target), words)
    one_line_error(lexkb("serve", "--index", str(built_root), "--store", target), words)


def test_a_port_in_use_is_said_before_anything_claims_to_serve(built_root, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = lexkb(
            "serve", "--index", str(built_root), "--store", str(tmp_path / "s.db"),
            "--port", str(port),
        )  # fmt: skip
    one_line_error(done, f"cannot listen on 127.0.0.1:{port}: Address already in use")
    assert "lexkb serve: http://" not in done.stderr


def test_keys_on_a_mistyped_store_make_nothing(tmp_path: Path):
    typo = tmp_path / "srv" / "lexbk" / "serve.db"
    for action in (["list"], ["revoke", "ann"]):
        one_line_error(lexkb("serve", "keys", *action, "--store", str(typo)), "no store at")
    assert not (tmp_path / "srv").exists()
    secret = add_key(typo, "ann")  # adding a key is how a store is started: that one makes it
    assert secret.startswith("lk_") and typo.is_file()


def test_keys_take_the_store_before_their_action(tmp_path: Path):
    store = tmp_path / "serve.db"
    add_key(store, "ann")
    for args in (
        ["serve", "keys", "--store", str(store), "list"],
        ["serve", "--store", str(store), "keys", "list"],
        ["serve", "keys", "list", "--store", str(store)],
    ):
        done = lexkb(*args)
        assert done.returncode == 0 and done.stdout.split("\t")[0] == "ann", (args, done.stderr)
    missing = lexkb("serve", "keys", "--store", str(store))  # before: "invalid choice"
    assert missing.returncode == 2 and "invalid choice" not in missing.stderr
    assert "required: {add,list,revoke}" in missing.stderr
    usage = lexkb("serve", "--help").stdout
    assert "[keys ...]" in usage and "\n                   keys ...\n" not in usage
