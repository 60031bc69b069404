"""Every command's --json against its documented schema (docs/schemas/), and the CLI details a
user lives in: help, version, errors, closed pipes, export, batches."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from lexkb import defaults
from lexkb.cli.main import main
from tests.conftest import REPO

SCHEMAS = REPO / "docs" / "schemas"


@pytest.fixture(scope="module")
def registry() -> Registry:
    resources = []
    for path in SCHEMAS.glob("*.json"):
        schema = json.loads(path.read_text(encoding="utf-8"))
        resources.append((schema["$id"], Resource.from_contents(schema)))
        resources.append((path.name, Resource.from_contents(schema)))
    return Registry().with_resources(resources)


def _validate(registry: Registry, name: str, document: object, definition: str | None = None):
    schema = json.loads((SCHEMAS / f"{name}.json").read_text(encoding="utf-8"))
    if definition:
        schema = {"$ref": f"{schema['$id']}#/$defs/{definition}"}
    Draft202012Validator(schema, registry=registry).validate(document)


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("argv", "schema", "definition"),
    [
        (["search", "client money reconciliation", "--k", "3"], "search", None),
        (["search", "client money", "--expand", "--mode", "keyword"], "search", None),
        (["get", "Article 5(1)(e)"], "get", None),
        (["get", "Article 5(3)"], "get", None),
        (["get", "Rule 9.9.9"], "get", None),
        (["hop", "LSA 230 paragraph 8", "--max-hops", "2"], "hop", None),
        (["documents"], "documents", None),
        (["export", "LRB"], "export", None),
        (["snapshots", "list"], "snapshots", "list"),
        (["snapshots", "verify"], "snapshots", "verify"),
        (["snapshots", "diff", "CURRENT", "CURRENT"], "snapshots", "diff"),
        (["context", "Rule 4.3.1", "LSA 230 8", "--max-tokens", "600"], "context", None),
        (
            [
                "verify-entities",
                "seven years",
                "6 years",
                "--sources",
                "Records Retention Act § 103(b)",
            ],
            "verify-entities",
            None,
        ),
        (
            ["verify-citations", "--cite", "Rule 4.3.1", "A firm must reconcile client money"],
            "verify-citations",
            None,
        ),
        (["verify-relations", "LSA 230 8", "LSA 230 A6"], "verify-relations", None),
        (
            ["contradictions", "Rule 4.3.1", "--claim", "A firm must not reconcile client money"],
            "contradictions",
            None,
        ),
        (["ask", "How long must client money reconciliation records be kept?"], "ask", None),
        (["ask", "Should we switch banks?"], "ask", None),
        (["evidence", "retention of records"], "evidence", None),
        (
            ["extract", "How long are records kept?", "--document", "Records Retention Act"],
            "extract",
            None,
        ),  # fmt: skip
        (
            [
                "extract",
                "How long are records kept?",
                "--document",
                "Records Retention Act",
                "--clause-type",
                "governing law",
            ],
            "extract",
            None,
        ),  # fmt: skip
        (
            ["classify", "Records Retention Act", "--type", "retention: how long records are kept"],
            "classify",
            None,
        ),  # fmt: skip
        (["check-question", "What will the regulator require next year?"], "check-question", None),
    ],
)
def test_every_command_prints_json_of_its_schema(built_root, registry, argv, schema, definition):
    code, out, err = _run(*argv, "--index", str(built_root), "--json")
    assert code in (0, 1), err
    _validate(registry, schema, json.loads(out), definition)


def test_web_search_without_a_key_warns_and_finds_nothing(registry, monkeypatch):
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)
    code, out, _ = _run("web-search", "client money rules", "--json")
    assert code == 0
    _validate(registry, "web-search", json.loads(out))
    assert json.loads(out)["results"] == []


def test_verifiers_exit_1_when_the_check_fails(built_root):
    index = ["--index", str(built_root)]
    code, out, _ = _run(
        "verify-entities", "five years", "--sources", "Records Retention Act § 103(b)", *index
    )
    assert code == 1 and "near miss: 'five years' (period)" in out and "seven years" in out
    code, out, _ = _run("verify-relations", "LSA 230 A6", "DHR Article 5", "--type", "cited-by",
                        *index)  # fmt: skip
    assert code == 1 and out.startswith("wrong direction")


def test_prune_and_rollback_json(built_root, tmp_path, registry):
    import shutil

    root = tmp_path / "root"
    shutil.copytree(built_root / "snapshots", root / "snapshots")
    shutil.copy(built_root / "CURRENT", root / "CURRENT")
    version = (root / "CURRENT").read_text().strip()
    code, out, _ = _run("snapshots", "prune", "--keep", "1", "--index", str(root), "--json")
    _validate(registry, "snapshots", json.loads(out), "prune")
    assert json.loads(out)["kept"] == {version: "CURRENT"}
    code, out, _ = _run("snapshots", "rollback", version[:12], "--index", str(root), "--json")
    assert code == 0
    _validate(registry, "snapshots", json.loads(out), "rollback")


def test_search_batch_lines_follow_their_schema(built_root, tmp_path, registry):
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        "\n".join(
            json.dumps(q)
            for q in [
                {"qid": 1, "query": "client account bank"},
                {"qid": 2, "query": "retention of records"},
            ]
        ),
        encoding="utf-8",
    )
    out = tmp_path / "run.jsonl"
    code, _, _ = _run(
        "search-batch", "--queries", str(queries), "--out", str(out), "--index", str(built_root),
        "--mode", "keyword", "--type", "rulebook",
    )  # fmt: skip
    assert code == 0
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        _validate(registry, "search-batch", line)
        assert line["mode"] == "keyword"
        assert all(hit["document_key"] == "lrb-chapter-4-client-assets" for hit in line["hits"])
    assert lines[0]["hits"][0]["text"] and lines[0]["hits"][0]["citation"].startswith("LRB, rule")


def test_build_json_follows_its_schema(registry, tmp_path):
    from tests.conftest import CORPUS

    code, out, _ = _run("build", str(CORPUS), "--out", str(tmp_path / "r"), "--json",
                        "--embedder", "none")  # fmt: skip
    assert code == 0
    _validate(registry, "build", json.loads(out))
    code, out, _ = _run("build", str(tmp_path / "nothing-here"), "--out", str(tmp_path / "r2"),
                        "--json")  # fmt: skip
    assert code == 2  # a missing source path is one line of error, not a traceback


def test_errors_a_user_meets(built_root):
    index = ["--index", str(built_root)]
    code, _, err = _run("search", "", *index)
    assert code == 2 and "query is empty" in err
    code, out, err = _run("search", "zzqx wvvy", "--mode", "vector", *index)
    assert code == 0 and out.strip() == "no results" and "none of the query's words" in err
    code, _, err = _run("search", "client money", "--type", "nosuch", *index)
    assert code == 2 and "unknown document_type 'nosuch'; known: act, faq" in err
    code, _, err = _run("search", "client money", "--tag", "nosuch", *index)
    assert code == 2 and "unknown tag 'nosuch'" in err
    code, out, _ = _run("search", "reconcile", "--section", "4.3", "--mode", "keyword", *index)
    assert code == 0 and "4.3.1" in out and "4.2" not in out.split("\n")[0]
    code, _, err = _run("hop", "LSA 230 8", "--decay", "1.5", *index)
    assert code == 2 and "decay must be in (0, 1]" in err


def test_text_output_full_expanded_and_quality(built_root):
    index = ["--index", str(built_root)]
    code, out, _ = _run("search", "exempt transaction settles within one business day",
                        "--expand", "--k", "4", *index)  # fmt: skip
    assert "(joined through a citation from" in out
    code, full, _ = _run("search", "kept in a form which permits identification", "--full",
                         "--k", "1", "--mode", "keyword", *index)  # fmt: skip
    assert "(f) protected" in full  # the whole paragraph, not an excerpt
    code, short, _ = _run("search", "records", "-k", "2", "--mode", "keyword", *index)
    assert code == 0 and re.findall(r"^\d+\. \[", short, re.M) == ["1. [", "2. ["]
    code, out, _ = _run("documents", *index)
    assert "extraction quality" in out


def test_help_version_and_closed_pipe(built_root):
    from lexkb import __version__

    with pytest.raises(SystemExit), contextlib.redirect_stdout(io.StringIO()) as out:
        main(["--version"])
    assert out.getvalue().strip() == f"lexkb {__version__}"
    with pytest.raises(SystemExit), contextlib.redirect_stdout(io.StringIO()) as out:
        main(["hop", "--help"])
    text = out.getvalue()
    shown = (f"(default: {defaults.DECAY})", f"(default: {defaults.HOP_MAX_HOPS})", "LEXKB_ROOT")
    assert all(part in text for part in shown)
    # `lexkb ... | head -1` ends quietly: no traceback from the closed pipe.
    command = (
        f"{REPO}/.venv/bin/lexkb search 'client money' --k 10 --full --mode keyword "
        f"--index {built_root} | head -1"
    )
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True)
    assert done.stdout.startswith("1. [") and "Traceback" not in done.stderr


def test_export_markdown_keeps_refs_headings_and_pages(built_root, tmp_path):
    target = tmp_path / "lsa.md"
    code, _, _ = _run("export", "LSA 230", "--out", str(target), "--index", str(built_root))
    assert code == 0
    text = target.read_text(encoding="utf-8")
    assert text.startswith("# LSA 230 Audit Documentation")
    assert "## Application and Other Explanatory Material" in text
    assert "\n[A8] A8. The retention period" in text
    assert "<!-- page 2 -->" in text


def test_progress_reports_stages_files_and_an_honest_rate():
    from assets.progress import Reporter

    lines: list[str] = []
    reporter = Reporter(lines.append, interactive=False)
    reporter.step("document_elements")
    reporter.message("parsed [1/2] a.pdf: 10 elements in 0.1s")
    reporter.step("chunk_embeddings")
    reporter.embedding_started -= 2.0  # two seconds into embedding
    reporter.message("embedded 100/100 texts")
    assert lines[0] == "parsing\n" and lines[1] == "  [1/2] a.pdf: 10 elements in 0.1s\n"
    assert lines[2] == "embedding\n"
    rate = int(lines[3].split(", ")[1].split("/s")[0])
    assert 40 <= rate <= 60 and "100/100 texts" in lines[3]
