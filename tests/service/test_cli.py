"""The `lexkb` command as a user runs it (real subprocesses, real snapshot)."""

import json
import subprocess

from tests.conftest import CORPUS, REPO

LEXKB = str(REPO / ".venv" / "bin" / "lexkb")


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([LEXKB, *args], capture_output=True, text=True, check=check, cwd=REPO)


def test_build_prints_version_and_json(tmp_path):
    sources = tmp_path / "src"
    sources.mkdir()
    for name in ("data-handling-regulation.md", "client-assets-faq.jsonl"):
        (sources / name).write_bytes((CORPUS / name).read_bytes())
    out = run("build", str(sources), "--out", str(tmp_path / "root"), "--json")
    report = json.loads(out.stdout)
    assert report["published_new"] and report["chunks"] > 10
    assert (tmp_path / "root" / "CURRENT").read_text().strip() == report["version"]


def test_build_of_missing_path_is_a_clear_error(tmp_path):
    out = run("build", str(tmp_path / "nowhere"), "--out", str(tmp_path / "root"), check=False)
    assert out.returncode == 2 and "does not exist" in out.stderr


def test_search_prints_cited_results(built_root):
    out = run(
        "search",
        "independent of the people who produce or maintain the records being reconciled",
        "--index",
        str(built_root),
        "--k",
        "2",
    )
    assert "[LRB, rule 4.3.2]" in out.stdout.splitlines()[0]


def test_search_json_and_document_filter(built_root):
    out = run("search", "records", "--index", str(built_root), "--json", "--document", "LKB-FAQ")
    payload = json.loads(out.stdout)
    assert payload["hits"] and {h["document_key"] for h in payload["hits"]} == {"LKB-FAQ"}
    assert all("citation" in h for h in payload["hits"])


def test_get_and_documents(built_root):
    out = run("get", "Article 6(1)", "--index", str(built_root), "--json")
    found = json.loads(out.stdout)
    assert found["match"] == "exact" and found["asked"] == "Article 6(1)"
    assert found["hit"]["ref"] == "Article 6(1)" and found["next"]["ref"] == "Article 6(2)"
    assert found["section"]["ref"] == "Article 6"
    missing = run("get", "Article 77", "--index", str(built_root), check=False)
    assert missing.returncode == 1 and "not found" in missing.stderr
    docs = json.loads(run("documents", "--index", str(built_root), "--json").stdout)
    assert len(docs) == 5


def test_search_batch_writes_one_line_per_query(built_root, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        json.dumps({"qid": "a", "query": "client account bank"})
        + "\n"
        + json.dumps({"qid": "b", "query": "zzzz qqqq"})
        + "\n"
    )
    out_file = tmp_path / "run.jsonl"
    run(
        "search-batch",
        "--index",
        str(built_root),
        "--queries",
        str(queries),
        "--k",
        "3",
        "--mode",
        "keyword",
        "--out",
        str(out_file),
    )
    lines = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert [line["qid"] for line in lines] == ["a", "b"]
    assert len(lines[0]["hits"]) == 3 and lines[1]["hits"] == []
    assert set(lines[0]["hits"][0]) == {
        "chunk_id", "document_key", "ref", "citation", "score", "relevance", "answers", "text"
    }  # fmt: skip


def test_search_batch_rejects_bad_lines(built_root, tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"query": "no id"}\n')
    out = run(
        "search-batch",
        "--index",
        str(built_root),
        "--queries",
        str(queries),
        "--out",
        str(tmp_path / "r.jsonl"),
        check=False,
    )
    assert out.returncode == 2 and "line 1" in out.stderr


def test_missing_index_is_a_clear_error(tmp_path):
    out = run("search", "x", "--index", str(tmp_path), check=False)
    assert out.returncode == 2 and "CURRENT" in out.stderr
