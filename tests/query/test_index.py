"""The query module on a real snapshot: search, filters, reference lookup, documents, integrity."""

import json
import shutil

import polars as pl
import pytest

from lexkb import Index, SnapshotError


def test_keyword_search_ranks_the_rule_first_with_a_citation(index):
    results = index.search(
        "reconcile records of safe custody assets with custodian statements", k=5, mode="keyword"
    )
    assert results.mode == "keyword" and len(results) == 5
    top = results[0]
    assert top.ref == "4.3.1"
    assert top.citation == "LRB, rule 4.3.1"  # the short name, and the unit as a rule
    assert top.section_path == ["4 CLIENT ASSETS", "4.3 Reconciliation"]
    scores = [h.score for h in results]
    assert scores == sorted(scores, reverse=True)


def test_reference_text_is_searchable(index):
    hits = index.search("6(1)(a)", k=3)
    assert all("6(1)(a)" not in h.text for h in hits)  # the corpus has no such reference
    hits = index.search("Rule 4.3.1", k=10)
    assert any("4.3.1" in h.text for h in hits[:3])


def test_pdf_hits_carry_pages(index):
    hit = index.search("retention period audit engagements five years", k=1)[0]
    assert (hit.ref, hit.page) == ("A8", 2)
    # A numbered paragraph is cited by its number, as the standard's own family cites it.
    assert hit.citation == "LSA 230, paragraph A8"


def test_document_filter(index):
    query = "client money records"
    unfiltered = {h.document_key for h in index.search(query, k=20)}
    assert len(unfiltered) > 1
    only = index.search(query, k=20, filters={"document": "records-retention-act"})
    assert only.hits and {h.document_key for h in only} == {"records-retention-act"}
    two = index.search(query, k=20, filters={"document": ["LKB-FAQ", "records-retention-act"]})
    assert {h.document_key for h in two} <= {"LKB-FAQ", "records-retention-act"}


def test_section_filter_and_combination(index):
    hits = index.search("records", k=20, filters={"section": "4 client assets > 4.4"})
    assert hits.hits and all(h.ref.startswith("4.4.") for h in hits)
    assert {h.chunk_level for h in hits} == {"paragraph"}
    sections = index.search(
        "records", k=20, filters={"section": "4 client assets > 4.4", "chunk_level": "section"}
    )
    assert [h.ref for h in sections] == ["4.4"]
    assert "4.4.1" in sections[0].text and "4.4.2" in sections[0].text
    none = index.search(
        "records",
        k=20,
        filters={"section": "4 client assets > 4.4", "document": "records-retention-act"},
    )
    assert len(none) == 0


def test_bad_filters_and_modes_are_clear_errors(index):
    with pytest.raises(ValueError, match="unknown filter"):
        index.search("x", filters={"colour": "red"})
    with pytest.raises(ValueError, match="no document called"):
        index.search("x", filters={"document": "nope"})
    with pytest.raises(ValueError, match="unknown search mode"):
        index.search("x", mode="telepathy")


@pytest.mark.parametrize(
    ("identifier", "document_key", "ref"),
    [
        ("Article 5(1)", "data-handling-regulation", "Article 5(1)"),
        ("art. 5 (1)", "data-handling-regulation", "Article 5(1)"),
        ("Data Handling Regulation Article 6(2)", "data-handling-regulation", "Article 6(2)"),
        ("Rule 4.3.1", "lrb-chapter-4-client-assets", "4.3.1"),
        ("LSA 230 A8", "lsa-230-audit-documentation", "A8"),
        ("230.A2", "lsa-230-audit-documentation", "A2"),
        ("§ 103(b)", "records-retention-act", "§ 103(b)"),
        ("LKB-FAQ Q2", "LKB-FAQ", "Q2"),
    ],
)
def test_get_by_reference(index, identifier, document_key, ref):
    found = index.get(identifier)
    assert found is not None, identifier
    assert (found.hit.document_key, found.hit.ref) == (document_key, ref)


def test_get_point_returns_paragraph_with_section_and_neighbours(index):
    found = index.get("Article 5(1)(e)")
    assert found.hit.ref == "Article 5(1)" and "(e) kept in a form" in found.hit.text
    assert found.section.chunk_level == "section" and found.section.ref == "Article 5"
    assert found.section.text.startswith("Article 5 Principles of data handling")
    assert "2. The firm shall be able to demonstrate" in found.section.text
    assert found.previous.ref == "Article 2"
    assert found.next.ref == "Article 5(2)"
    last = index.get("§ 104")
    assert last.next is None or last.next.document_key == last.hit.document_key


def test_bare_article_resolves_to_its_section(index):
    found = index.get("Article 6")
    assert found.hit.chunk_level == "section"
    assert [line[:2] for line in found.hit.text.splitlines()[1:]] == ["1.", "2.", "3."]


def test_get_by_chunk_id_and_unknown(index):
    hit = index.search("client account", k=1)[0]
    assert index.get(hit.chunk_id).hit.chunk_id == hit.chunk_id
    missing = index.get("Article 99(9)")
    assert missing.match == "not_found" and not missing.found and missing.hit is None
    assert missing.reason == "no document has a unit 'Article 99(9)'"


def test_documents_listing(index):
    docs = {d["document_key"]: d for d in index.documents()}
    assert docs["lsa-230-audit-documentation"]["format"] == "pdf"
    assert docs["lsa-230-audit-documentation"]["page_count"] == 2
    chunks = pl.read_parquet(index.snapshot.table_path("chunks"))
    paragraphs = chunks.filter(pl.col("chunk_level") == "paragraph").height
    assert sum(d["chunk_count"] for d in docs.values()) == paragraphs < len(index)


def test_size_mismatch_is_refused_on_open(built_root, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(built_root, copy)
    snapshot = next((copy / "snapshots").iterdir())
    with (snapshot / "chunks.parquet").open("ab") as handle:
        handle.write(b"x")
    with pytest.raises(SnapshotError, match="bytes"):
        Index.open(copy)


def test_changed_bytes_are_caught_by_verify(built_root, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(built_root, copy)
    snapshot = next((copy / "snapshots").iterdir())
    data = bytearray((snapshot / "index.duckdb").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (snapshot / "index.duckdb").write_bytes(bytes(data))
    Index.open(copy)  # sizes still match: the fast path cannot see it
    with pytest.raises(SnapshotError, match="SHA-256"):
        Index.open(copy, verify=True)


def test_other_tokenizer_version_is_refused(built_root, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(built_root, copy)
    snapshot = next((copy / "snapshots").iterdir())
    manifest = json.loads((snapshot / "manifest.json").read_text())
    manifest["bm25"]["tokenizer"] = "something-else"
    (snapshot / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(SnapshotError, match="tokenized with"):
        Index.open(copy)


def test_query_module_imports_neither_dagster_nor_unstructured():
    import subprocess
    import sys

    code = "import sys, lexkb, lexkb.cli.main; print(sorted(m for m in sys.modules if m.split('.')[0] in ('dagster', 'unstructured', 'transforms', 'pipelines')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
