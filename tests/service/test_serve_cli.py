"""The CLI around `lexkb serve` (issue 49, item 13), as an operator runs it: a store that cannot
be opened, or a port in use, is one line and exit 2 (before: a traceback and exit 1, or "lexkb
serve: http://..." as if serving, uvicorn's error and exit 3); `keys list` on a mistyped path
makes nothing (before: the folders and an empty database); `serve keys` takes --store before
its action, and `serve`'s usage shows `keys` as optional.

Issue 60, item 8: a port in use stops `serve` before any store is made or migrated (before: the
store was made first, and without --store a var/serve.db in the working directory); the default
store lies beside the index root, never in the working directory; a --store file that is no
database is refused and left as it was (before: made 0600, then refused)."""

from __future__ import annotations

import dataclasses
import os
import re
import socket
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.support.mcp_process import LEXKB, environment, free_port
from tests.support.serve_process import add_key


def lexkb(*args: str, timeout: float = 120, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = environment()
    env.pop("LEXKB_SERVE_STORE", None)  # the store is the one each test names, or the default
    return subprocess.run(
        [LEXKB, *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd
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


def test_a_port_in_use_stops_serve_before_any_store_is_made(tmp_path: Path):
    work = tmp_path / "work"  # where the operator runs it from
    work.mkdir()
    index = tmp_path / "index"  # never opened: the port is taken first
    store = tmp_path / "named.db"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        named = lexkb(
            "serve", "--index", str(index), "--store", str(store), "--port", port, cwd=work
        )
        default = lexkb("serve", "--index", str(index), "--port", port, cwd=work)
    for done in (named, default):
        one_line_error(done, f"cannot listen on 127.0.0.1:{port}: Address already in use")
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == ["work"]


def test_the_default_store_lies_beside_the_index_root(tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    index = tmp_path / "srv" / "index"
    done = lexkb("serve", "--index", str(index), "keys", "add", "ann", cwd=work)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "srv" / "serve.db").is_file() and list(work.iterdir()) == []
    listed = lexkb("serve", "keys", "list", "--index", str(index), cwd=work)
    assert listed.stdout.split("\t")[0] == "ann", listed.stderr
    remote = lexkb("serve", "keys", "list", "--index", "s3://bucket/index", cwd=work)
    one_line_error(remote, "name the store with --store or $LEXKB_SERVE_STORE")
    assert list(work.iterdir()) == []


def test_a_store_file_that_is_no_database_is_refused_as_it_was(tmp_path: Path):
    notes = tmp_path / "notes.db"
    notes.write_text("these are notes, not a database\n")
    notes.chmod(0o644)
    for args in (["serve", "keys", "list"], ["serve", "keys", "add", "ann"]):
        one_line_error(lexkb(*args, "--store", str(notes)), "is not a SQLite database")
    assert notes.stat().st_mode & 0o777 == 0o644
    assert notes.read_text() == "these are notes, not a database\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]


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


# A limit in docs/serving.md's list and the default it states: "- `NAME` (DEFAULT)", or
# "... and `NAME` (DEFAULT)" where one line names two.
LISTED = re.compile(r"(?:^- |\band )`(LEXKB_\w+|--[a-z-]+)` \(([^)]*)\)", re.MULTILINE)


def amount(said: str) -> float | None:
    """The number a stated default gives ("64 KiB", "10 s", "1,000", "16, or ..."); None for
    words ("half the cores")."""
    found = re.match(r"([\d,]+)(?: (KiB|MiB|s)\b)?", said)
    if found is None:
        return None
    return int(found[1].replace(",", "")) * {"KiB": 1024, "MiB": 1 << 20}.get(found[2] or "", 1)


def test_the_documented_limits_are_the_codes_defaults():
    """Each default is stated once in prose, in docs/serving.md's list (issue 60, item 4: the
    sessions' 100 was repeated in four places): the list names every HTTP setting and each
    option, and says what the code does."""
    from lexkb.cli.main import build_parser
    from lexkb_service.mcp.admission import PER_KEY_UNITS
    from lexkb_service.mcp.http import HttpSettings
    from lexkb_service.mcp.pools import COSTLY_CALLS

    text = (REPO / "docs" / "serving.md").read_text(encoding="utf-8")
    limits = text[text.index("**What each limit is**") : text.index("**What operators watch**")]
    listed = dict(LISTED.findall(limits))
    settings = HttpSettings()
    served = build_parser("serve").parse_args(["serve"])
    code = {
        f"LEXKB_MCP_{f.name.upper()}": getattr(settings, f.name)
        for f in dataclasses.fields(settings)
    }
    code |= {
        "--asks-per-hour": served.asks_per_hour,
        "--cost-per-key": PER_KEY_UNITS,
        "--sessions-per-key": served.sessions_per_key,
        "--conversations-per-key": served.conversations_per_key,
    }
    assert code.keys() <= listed.keys(), sorted(code.keys() - listed.keys())
    assert {name: amount(listed[name]) for name in code} == code
    assert listed["LEXKB_MCP_COSTLY_CALLS"] == "half the cores, at least 1"
    assert max(1, (os.cpu_count() or 2) // 2) == COSTLY_CALLS
    # Elsewhere the prose names the setting, not its number.
    n = settings.max_sessions
    entry = f"- `LEXKB_MCP_MAX_SESSIONS` ({n})"
    repeated = re.compile(rf"\b{n} (?:MCP )?sessions\b|MAX_SESSIONS\W+(?:default )?{n}\b")
    for path in [REPO / "README.md", *(REPO / "docs").glob("*.md")]:
        prose = path.read_text(encoding="utf-8").replace(entry, "- ", 1)
        said = repeated.search(" ".join(prose.split()))
        assert said is None, (path.name, said and said[0])
