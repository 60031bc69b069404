"""Fuzzing the surfaces that take user text: the reference parser, lookup, filters, search and the
CLI. Seeded and bounded (a few hundred examples each); none may take over a second, raise
anything but the documented errors, or print malformed JSON."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lexkb.cli.main import main
from lexkb.core.text.citations import CitationParser
from lexkb.filters import FILTER_KEYS

FUZZ = settings(
    max_examples=200,
    deadline=1000,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
# Text shaped like what users type around references, plus anything at all.
LEGAL = st.sampled_from(
    ["Article", "Art.", "Rule", "Section", "§", "paragraph", "point", "of", "and", "to", "the",
     "LSA 230", "LRB", "GDPR", "(", ")", "(a)", "(1)", "(iv)", "6", "4.3.1", "A8", "-", ",", " ",
     "\n", "\u200b", "\ud800", "\x1b[2J", "’", "Regulation (EU) 2016/679"]
)  # fmt: skip
TEXT = st.one_of(
    st.text(max_size=300),
    st.lists(LEGAL, max_size=40).map("".join),
    st.lists(LEGAL, max_size=40).map(" ".join),
)


@pytest.fixture(scope="module")
def warm(index):
    index.search("warm up the query embedder", k=1)  # the model loads once, outside the clock
    return index


@FUZZ
@given(TEXT)
def test_reference_parser(text):
    parsed = CitationParser(["LSA 230", "Lexkb Rulebook", "LRB", "GDPR"]).parse(text)
    for citation in parsed.citations:
        assert 0 <= citation.start <= citation.end <= len(text)


@FUZZ
@given(st.one_of(TEXT, st.none(), st.integers(), st.binary(max_size=20)))
def test_lookup(warm, identifier):
    with contextlib.suppress(ValueError):  # the documented error; anything else fails
        warm.get(identifier)
        warm.resolve(identifier)


VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=30),
    st.lists(st.text(max_size=10), max_size=4), st.sampled_from(["today", "last_7_days",
    "2026-01-01", "paragraph", "section", "LSA 230", "standard", "records"]),
)  # fmt: skip


@FUZZ
@given(
    st.dictionaries(
        st.one_of(st.sampled_from(FILTER_KEYS), st.text(max_size=8)), VALUES, max_size=4
    )
)
def test_filters(warm, filters):
    with contextlib.suppress(ValueError):  # the documented error; anything else fails
        warm.search("client money", k=3, mode="keyword", filters=filters)


@FUZZ
@given(
    TEXT,
    st.one_of(st.integers(-5, 2000), st.floats(), st.none(), st.booleans()),
    st.one_of(st.sampled_from(["hybrid", "keyword", "vector"]), st.text(max_size=8), st.none()),
    st.booleans(),
    st.one_of(st.floats(), st.integers(-2, 3)),
)
def test_search_arguments(warm, query, k, mode, expand, decay):
    try:
        results = warm.search(query, k=k, mode=mode, expand=expand, decay=decay)
    except (ValueError, TypeError) as exc:
        assert not isinstance(exc, TypeError) or k is None  # k=None is not a documented value
        return
    assert len(results) <= k
    assert all(hit.score is not None and hit.score == hit.score for hit in results)


COMMANDS = st.one_of(
    st.tuples(st.just("search"), TEXT, st.sampled_from([[], ["--k", "3"], ["--k", "0"],
              ["--k", "x"], ["--mode", "keyword"], ["--type", "standard"], ["--expand"],
              ["--period", "yesterday"], ["--start", "2026-13-01"]])),
    st.tuples(st.just("get"), TEXT, st.just([])),
    st.tuples(st.just("hop"), TEXT, st.sampled_from([[], ["--decay", "nan"], ["--decay", "1"],
              ["--max-hops", "0"], ["--k", "2"]])),
    st.tuples(st.just("documents"), st.just(""), st.just([])),
    st.tuples(st.just("snapshots"), st.sampled_from(["list", "verify", "diff", "rollback"]),
              st.lists(st.sampled_from(["CURRENT", "previous", "../x", "2026", "zz"]),
                       max_size=2)),
)  # fmt: skip


@FUZZ
@given(COMMANDS, st.booleans())
def test_cli(warm, built_root, command, as_json):
    name, arg, options = command
    argv = [name] + ([arg] if arg else []) + list(options)
    argv += ["--index", str(built_root)] + (["--json"] if as_json else [])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own usage errors
            code = exc.code
    assert code in (0, 1, 2), (argv, err.getvalue())
    assert "Traceback" not in err.getvalue()
    if as_json and code == 0:
        json.loads(out.getvalue())
