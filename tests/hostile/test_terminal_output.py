"""No escape sequence from a document or a web result reaches the terminal through the CLI.

A document holds a terminal title change (OSC ... BEL), a screen clear and colours, as a hostile
source file could; a stand-in for the Brave Search API on 127.0.0.1 returns them in a title and
a snippet. Every command that prints document or web text as plain text must show them as
visible codes (lexkb.core.text.terminal.safe), as `search` and `get` do. JSON output escapes
them itself, and files written with --out hold the text as it is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lexkb.cli.main import main
from tests.support.http_fake import JSONHandler, LocalServer

# Module fixtures that build: the tests taking them are in the build tier (tests/conftest.py).
BUILDING_FIXTURES = {"root"}

TITLE = "\x1b]0;owned\x07"
CLEAR = "\x1b[2J"
RED = "\x1b[31m"
RULES = (
    f"# Records {RED}Rules\n\n## Rule 1\n\n"
    f"1.1 A firm must keep client records for six years.{TITLE}{CLEAR} Records must be kept "
    "securely.\n\n"
    f"1.2 A firm must not keep client records for seven years {RED}without\x1b[0m approval "
    "under Rule 1.1.\n"
)
RAW = ("\x1b", "\x07", "\x9b")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from pipelines.in_process import run_build

    sources = tmp_path_factory.mktemp("hostile-text")
    (sources / "rules.md").write_text(RULES, encoding="utf-8")
    target = sources.parent / f"{sources.name}-root"
    run_build([sources], target, embedder="none")
    return target


def _printed(capsys, *argv: str) -> str:
    main(list(argv))
    captured = capsys.readouterr()
    return captured.out + captured.err


COLOUR = "\\x1b[31m"  # how `safe` shows the title's colour code


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (["ask", "how long must a firm keep client records"], COLOUR),
        (["extract", "for how many years must a firm keep client records"], COLOUR),
        (["export", "rules"], "\\x1b]0;owned\\x07\\x1b[2J"),
        (["verify-citations", "--cite", "1.1", "A firm must keep client records"], "\\x07"),
        (["contradictions", "1.1", "--claim", "A firm must keep records for ten years"], "\\x07"),
        (["hop", "1.1"], COLOUR),
        (["context", "1.1", "1.2"], "seven years"),
    ],
    ids=["ask", "extract", "export", "verify-citations", "contradictions", "hop", "context"],
)
def test_document_text_is_shown_not_obeyed(root, argv, shown, capsys, monkeypatch):
    monkeypatch.delenv("LEXKB_LLM_URL", raising=False)
    printed = _printed(capsys, *argv, "--index", str(root))
    assert shown in printed  # the document's text was printed, its codes made visible
    assert not any(code in printed for code in RAW), printed


def test_json_and_files_keep_the_text_as_it_is(root, tmp_path, capsys):
    printed = _printed(capsys, "export", "rules", "--json", "--index", str(root))
    assert "\\u001b]0;owned\\u0007" in printed and "\x1b" not in printed
    out = tmp_path / "rules.md"
    assert main(["export", "rules", "--out", str(out), "--index", str(root)]) == 0
    assert TITLE in out.read_text(encoding="utf-8")


class _Brave(JSONHandler):
    def do_GET(self) -> None:
        self._send(
            200,
            {
                "web": {
                    "results": [
                        {
                            "title": f"Client money {TITLE}rules",
                            "url": "https://www.fsra.example/cass",
                            "description": f"Reconcile client money daily.{CLEAR}\x9b31m",
                        }
                    ]
                }
            },
        )


def test_web_results_are_shown_not_obeyed(capsys, monkeypatch):
    server = LocalServer(_Brave)
    try:
        monkeypatch.setenv("BRAVE_API_KEY", "brave-test-key")
        monkeypatch.setenv("BRAVE_SEARCH_URL", f"{server.root}/res/v1/web/search")
        printed = _printed(capsys, "web-search", "client money")
    finally:
        server.close()
    assert "Client money" in printed and "\\x1b]0;owned\\x07" in printed
    assert not any(code in printed for code in RAW), printed
