"""The citation graph through the query module and the CLI, on the built sample corpus."""

from __future__ import annotations

import json

import pytest

from lexkb.cli.main import main


def test_get_lists_what_a_paragraph_cites_and_what_cites_it(index):
    lookup = index.get("LRB Rule 4.3.1")
    cited_by = {f"{h.document_key}:{h.ref}" for h in lookup.cited_by}
    assert cited_by == {
        "LKB-FAQ:Q1",
        "lrb-chapter-4-client-assets:4.3.2",
        "lsa-230-audit-documentation:8",
    }
    citing = index.get("LRB 4.1.2")
    assert [h.ref for h in citing.cites] == ["4.2.1", "4.2.2", "4.2.3", "4.3"]
    outside = index.get("LSA 230 A6")
    assert {item["reference_text"] for item in outside.unresolved} == {"Chapter 4"}


def test_hop_walks_both_directions_with_decaying_scores_and_paths(index):
    reached = index.hop("LSA 230 paragraph 8", max_hops=2, decay=0.7)
    by_ref = {f"{r.hit.document_key}:{r.hit.ref}": r for r in reached}
    direct = by_ref["lrb-chapter-4-client-assets:4.3.1"]
    assert direct.hops == 1 and direct.score == pytest.approx(0.7)
    assert direct.path[0].direction == "cites"
    # 8 ends "(Ref: Para. A6)" and A6 cites "paragraph 8": both directions, one step either way.
    assert by_ref["lsa-230-audit-documentation:A6"].hops == 1
    found = index.get("LSA 230 paragraph 8")
    assert "A6" in {h.ref for h in found.cites} and "A6" in {h.ref for h in found.cited_by}
    two = by_ref["LKB-FAQ:Q1"]  # 8 cites 4.3.1, which the FAQ's Q1 cites
    assert two.hops == 2 and two.score == pytest.approx(0.49)
    assert [s.ref for s in two.path] == ["4.3.1", "Q1"]
    assert [r.score for r in reached] == sorted((r.score for r in reached), reverse=True)
    assert all(r.hops <= 2 for r in reached)
    assert "lsa-230-audit-documentation:8" not in by_ref  # never the start itself


def test_hop_limits(index):
    start = index.resolve("LSA 230 8")[0].chunk_id
    one = index.hop(start, max_hops=1)
    assert one and all(r.hops == 1 for r in one)
    assert len(index.hop(start, max_hops=3, k=2)) == 2
    # With min_score above decay², nothing two hops away survives: only the direct neighbours.
    pruned = index.hop(start, max_hops=3, decay=0.7, min_score=0.6)
    assert [r.hit.chunk_id for r in pruned] == [r.hit.chunk_id for r in one]
    with pytest.raises(KeyError):
        index.hop("no such paragraph 99.99")


def test_expand_brings_in_the_paragraphs_the_best_hit_cites(index):
    query = "exempt transaction settles within one business day"
    plain = index.search(query, k=4)
    expanded = index.search(query, k=4, expand=True)
    assert plain[0].ref == expanded[0].ref == "4.1.2"
    assert "4.2.1" not in [h.ref for h in plain]
    added = [h for h in expanded if h.expanded_from is not None]
    assert {h.ref for h in added} >= {"4.2.1"}
    assert all(h.expanded_from == plain[0].chunk_id for h in added)
    assert all(h.score == pytest.approx(plain[0].score * 0.7) for h in added)


def test_expand_respects_filters(index):
    query = "exempt transaction settles within one business day"
    # LSA 230 says nothing about exempt transactions, so only a low floor lists its best
    # guesses (relevance about 0.15; a floor of 0.2 returns nothing); expansion must still stay
    # inside the filter.
    hits = index.search(query, k=4, expand=True, filters={"document": "LSA 230"}, min_relevance=0.0)
    assert {h.document_key for h in hits} == {"lsa-230-audit-documentation"}
    assert index.search(query, k=4, filters={"document": "LSA 230"}, min_relevance=0.2).hits == []


def test_cli_hop_and_get(built_root, capsys):
    assert main(["hop", "LSA 230 8", "--index", str(built_root), "--max-hops", "1"]) == 0
    out = capsys.readouterr().out
    assert "4.3.1" in out and "via → 4.3.1" in out
    assert main(["hop", "LSA 230 8", "--index", str(built_root), "--json"]) == 0
    items = json.loads(capsys.readouterr().out)
    assert items[0]["path"][0]["direction"] in {"cites", "cited-by"}
    assert main(["get", "LRB 4.3.1", "--index", str(built_root)]) == 0
    assert "cited by:" in capsys.readouterr().out
    assert main(["hop", "nothing 99.9", "--index", str(built_root)]) == 1
