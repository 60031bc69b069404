"""Every argument bounded and checked: clear errors, never a stall, a traceback or a silent clamp."""

from __future__ import annotations

import json
import math

import pytest

from lexkb import limits
from lexkb.cli.main import main


@pytest.mark.parametrize(
    "reference",
    [
        "a " * 1000 + "(1)" * 300,  # was 61 s: quadratic splits and point stripping
        "a " * 16000,  # was 35 s and 636 MB
        "x" * 301,
    ],
)
def test_overlong_references_are_refused_with_the_limit(index, reference):
    with pytest.raises(limits.QueryError, match="the limit is 300"):
        index.get(reference)


def test_long_but_allowed_references_resolve_quickly(index):
    # Within the limit, a lookup stays linear: 300 characters of nonsense find nothing.
    assert index.resolve("a " * 100 + "(1)" * 30) == []
    # Deeply nested points that the text does not hold: the nearest unit, marked as such.
    deep = index.get("Article 5(1)(e)(i)(x)(y)")
    assert deep.match == "enclosing" and deep.hit.ref == "Article 5(1)"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda ix: ix.search("q" * 2001), "the limit is 2,000"),
        (lambda ix: ix.search(""), "query is empty"),
        (lambda ix: ix.search("client money", k=2.5), "whole number"),
        (lambda ix: ix.search("client money", k=math.nan), "whole number"),
        (lambda ix: ix.search("client money", k=-1), "from 1 to 1000"),
        (lambda ix: ix.search("client money", k=True), "whole number"),
        (lambda ix: ix.search("client money", expand=True, decay=5), "decay must be in"),
        (lambda ix: ix.search("\ud800 lone surrogate"), "not valid Unicode"),
        (lambda ix: ix.hop("LSA 230 8", decay=math.nan), "decay must be in"),
        (lambda ix: ix.hop("LSA 230 8", decay=0), "decay must be in"),
        (lambda ix: ix.hop("LSA 230 8", max_hops=0), "max_hops must be from 1"),
        (lambda ix: ix.hop("LSA 230 8", max_hops=11), "max_hops must be from 1 to 10"),
        (lambda ix: ix.get(None), "reference must be text"),
        (lambda ix: ix.search("x", filters={"deprecated": "false"}), "true or false"),
        (lambda ix: ix.search("x", filters={"document": 5}), "takes text"),
        (lambda ix: ix.search("x", filters={"period": ["today"]}), "unknown period"),
        (
            lambda ix: ix.search("x", filters={"period": "today", "start": "2026-01-01"}),
            "conflicting filters",
        ),  # fmt: skip
        (lambda ix: ix.search("x", filters={"chunk_level": "chapter"}), "unknown chunk_level"),
        (lambda ix: ix.search("x", filters="document=LSA"), "must be a mapping"),
    ],
)
def test_bad_arguments_are_clear_errors(index, call, message):
    with pytest.raises(ValueError, match=message):
        call(index)


def test_hop_json_never_prints_nan(built_root, capsys):
    code = main(["hop", "LSA 230 8", "--decay", "nan", "--index", str(built_root), "--json"])
    assert code == 2 and "decay must be in" in capsys.readouterr().err
    assert main(["hop", "LSA 230 8", "--index", str(built_root), "--json"]) == 0
    assert "NaN" not in capsys.readouterr().out


def test_a_bad_line_in_a_batch_costs_only_itself(built_root, tmp_path, capsys):
    queries = tmp_path / "q.jsonl"
    lines = [
        {"qid": "a", "query": "client money reconciliation"},
        {"qid": "b", "query": "\ud800"},
        {"qid": "c", "query": "audit documentation retention"},
    ]
    queries.write_text("\n".join(json.dumps(q) for q in lines), encoding="utf-8")
    out = tmp_path / "run.jsonl"
    code = main(["search-batch", "--queries", str(queries), "--out", str(out), "--index",
                 str(built_root), "--mode", "keyword"])  # fmt: skip
    assert code == 1 and "1 of 3 queries failed" in capsys.readouterr().err
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["qid"] for r in rows] == ["a", "b", "c"]
    assert rows[0]["hits"] and rows[2]["hits"] and "not valid Unicode" in rows[1]["error"]


def test_terminal_escapes_in_text_never_reach_the_terminal():
    from lexkb.core.text.terminal import safe

    assert safe("title\x1b]0;owned\x07 \x1b[2J text") == "title\\x1b]0;owned\\x07 \\x1b[2J text"
    assert safe("Article 6(1)\n") == "Article 6(1)\n"
