"""Lookups never confirm what they did not find: every answer says how it matched and why."""

from __future__ import annotations

import json

import pytest

from lexkb.cli.main import main

# Module fixtures that build: the tests taking them are in the build tier (tests/conftest.py).
BUILDING_FIXTURES = {"two_rulebooks"}


@pytest.mark.parametrize(
    ("asked", "match", "found_ref"),
    [
        # Article 5 has no paragraph 3: offered as nearest, never as the answer.
        ("Article 5(3)", "enclosing", "Article 5"),
        # Rule 4.3.1 has no point (a); Rule 4.3.7 does not exist at all.
        ("4.3.1(a)", "enclosing", "4.3.1"),
        ("Rule 4.3.7", "enclosing", "4.3"),
        # A point that is in the paragraph's text.
        ("Article 5(1)(e)", "contains", "Article 5(1)"),
        ("point (e) of Article 5(1)", "contains", "Article 5(1)"),
        # The forms the citation parser reads in running text.
        ("Rule 4.3.1 of the Lexkb Rulebook", "exact", "4.3.1"),
        ("Article 6(2) DHR", "exact", "Article 6(2)"),
        ("LSA 230, para. A8", "exact", "A8"),
        ("R 4.3.1", "exact", "4.3.1"),
        ("Art. 5 (1)", "exact", "Article 5(1)"),
    ],
)
def test_every_lookup_says_how_it_matched(index, asked, match, found_ref):
    found = index.get(asked)
    assert (found.match, found.hit.ref) == (match, found_ref), found.reason
    assert found.asked == asked and found.found == (match in ("exact", "contains"))


def test_enclosing_says_the_unit_does_not_exist(index):
    found = index.get("Article 5(3)")
    assert found.reason == "Article 5(3) does not exist; nearest: DHR, Article 5"
    assert index.resolve("Article 5(3)") == []  # resolve lists only what exists


def test_not_found_says_why_with_the_closest(index):
    unknown = index.get("Rule 4.3.1 of the Foo Rulebook")
    assert unknown.match == "not_found" and unknown.hit is None
    assert unknown.reason == "no document called 'Foo Rulebook' in this index"
    assert "Lexkb Rulebook" in unknown.closest
    missing = index.get("LSA 230 paragraph 99")
    assert missing.reason.startswith("LSA 230 has no unit") and missing.closest
    assert index.get("GDPR Article 5").reason == "no document called 'GDPR' in this index"


def test_a_title_code_names_its_document(tmp_path):
    from lexkb.core.text.refs import document_names

    names = document_names("gn-7", "Guidance Note GN-7: Reconciliation", None)
    assert "GN-7" in names


def test_cli_exit_codes_follow_the_match(built_root, capsys):
    assert main(["get", "Article 5(1)(e)", "--index", str(built_root)]) == 0
    assert "contains: (e) is a point inside DHR, Article 5(1)" in capsys.readouterr().out
    assert main(["get", "Article 5(3)", "--index", str(built_root)]) == 1
    err = capsys.readouterr().err
    assert "Article 5(3) does not exist; nearest: DHR, Article 5" in err
    assert main(["get", "Article 5(3)", "--accept-enclosing", "--index", str(built_root)]) == 0
    capsys.readouterr()
    assert main(["get", "Article 5(3)", "--json", "--index", str(built_root)]) == 1
    shown = json.loads(capsys.readouterr().out)
    assert (shown["asked"], shown["match"], shown["found_ref"]) == (
        "Article 5(3)",
        "enclosing",
        "Article 5",
    )


@pytest.fixture(scope="module")
def two_rulebooks(tmp_path_factory):
    """Two documents that both number a paragraph 7, one citing the other's."""
    from lexkb import Index
    from pipelines.in_process import run_build

    folder = tmp_path_factory.mktemp("two")
    rows = [
        {"DocumentID": "alpha", "PassageID": "7", "Passage": "Alpha firms keep ledgers."},
        {"DocumentID": "alpha", "PassageID": "8", "Passage": "Alpha firms reconcile, see 7."},
        {"DocumentID": "beta", "PassageID": "7", "Passage": "Beta firms file returns."},
    ]
    (folder / "rules.jsonl").write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    run_build([folder], folder / "root", embedder="none")
    return Index.open(folder / "root")


def test_an_ambiguous_reference_lists_every_document(two_rulebooks):
    assert {h.document_key for h in two_rulebooks.resolve("7")} == {"alpha", "beta"}
    found = two_rulebooks.get("7")
    # Neither is chosen: each document's unit is a candidate to pick.
    assert found.match == "ambiguous" and found.hit is None and not found.found
    assert {h.document_key for h in found.alternatives} == {"alpha", "beta"}
    assert two_rulebooks.get("beta 7").hit.text == "Beta firms file returns."


def test_hop_refuses_an_ambiguous_start(two_rulebooks):
    with pytest.raises(ValueError, match="ambiguous: it names 2 paragraphs"):
        two_rulebooks.hop("7")


def test_a_point_written_e_bracket_is_found_inside_its_clause():
    from lexkb.lookup import _holds_points

    text = "4.2 The Supplier shall: a) deliver the goods; e) keep records; and f) comply."
    assert _holds_points(text, ["e"]) and _holds_points(text, ["f"])
    assert not _holds_points(text, ["g"])
    assert not _holds_points("as listed in Schedule a) above", ["a"])
