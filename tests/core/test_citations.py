"""Reading citations out of text, and resolving them to chunks on real documents."""

from __future__ import annotations

import polars as pl
import pytest

from lexkb.core.text.citations import CitationParser
from transforms.edges.resolve import build_edges
from transforms.reading import metadata


def _read(text: str, names: tuple[str, ...] = ("GEN", "PRU", "FSMR", "COBS")) -> list[tuple]:
    return [
        (c.address, c.document, c.relative, c.outside)
        for c in CitationParser(names).parse(text).citations
    ]


def test_lists_carry_the_document_named_before_them():
    found = _read("comply with GEN 3.3.31 and 3.3.32 and PRU 6.8. See also Rule 9.1.1(3)(c).")
    assert found == [
        (("3", "3", "31"), "GEN", False, False),
        (("3", "3", "32"), "GEN", False, False),
        (("6", "8"), "PRU", False, False),
        (("9", "1", "1", "3", "c"), None, False, False),
    ]


def test_a_trailing_document_names_only_the_last_kind_of_unit():
    found = _read("imposed by Rules 8.8.5, 8.8.9 and Part 10 of the FSMR; or")
    assert [(a, d) for a, d, _, _ in found] == [
        (("8", "8", "5"), None),
        (("8", "8", "9"), None),
        (("part10",), "FSMR"),
    ]


def test_ranges_expand_and_keep_the_whole_range_as_their_text():
    parser = CitationParser()
    citations = parser.parse("Articles 13 to 15, Rules 3.2.1-3.2.3 and points (a) to (c)").citations
    assert [c.address for c in citations] == [
        ("article13",),
        ("article14",),
        ("article15",),
        ("3", "2", "1"),
        ("3", "2", "2"),
        ("3", "2", "3"),
        ("a",),
        ("b",),
        ("c",),
    ]
    assert citations[1].text == "Articles 13 to 15"


def test_containers_build_the_address_and_relative_units_are_flagged():
    found = _read("referred to in points (c) and (e) of paragraph 1 and point (a) of Article 9(2)")
    assert found == [
        (("1", "c"), None, True, False),
        (("1", "e"), None, True, False),
        (("article9", "2", "a"), None, False, False),
    ]


def test_acts_outside_the_index_and_unknown_named_acts():
    found = _read(
        "Directive 95/46/EC is repealed; Chapter 2 of Part 1 of the Insolvency Regulations "
        "applies; see Federal Law No. (7) of 2014"
    )
    assert [(d, o) for _, d, _, o in found] == [
        ("Directive 95/46/EC", True),
        ("Insolvency Regulations", True),
        ("Federal Law No. (7) of 2014", True),
    ]


def test_other_us_laws_are_outside_a_title_of_the_code():
    names = ("17 U.S.C.", "Title 17", "usc17")
    assert _read("as provided in section 1001 of title 18, the", names) == [
        (("1001",), "title 18", False, True)
    ]
    assert _read("Section 706 of title 5, United States Code", names) == [
        (("706",), "title 5, United States Code", False, True)
    ]
    assert _read("see 15 U.S.C. 1127 and 17 U.S.C. 512(c)(1)", names) == [
        ((), "15 U.S.C.", False, True),
        (("512", "c", "1"), "17 U.S.C.", False, False),
    ]
    assert _read("Public Law 106–113 amended section 106", names)[0][1:] == (
        "Public Law 106–113",
        False,
        True,
    )
    # the index's own title is its own, however it is written
    assert _read("under section 512(c) of title 17", names) == [(("512", "c"), None, False, False)]


def test_plain_numbers_are_not_references():
    citations = CitationParser().parse("within 20 days, 5% of USD100,000, on 23.11.1995").citations
    # Only the dotted number is a candidate, and as a bare one: the resolver keeps it only when
    # a paragraph has exactly that number (test_bare_numbers_need_an_exact_match...).
    assert [(c.address, c.bare) for c in citations] == [(("23", "11", "1995"), True)]


def _one_document(paragraphs: list[tuple[str, str]]) -> tuple[pl.DataFrame, pl.DataFrame]:
    chunks = pl.DataFrame(
        {
            "chunk_id": [f"c{i}" for i in range(len(paragraphs))],
            "document_id": ["d"] * len(paragraphs),
            "chunk_level": ["paragraph"] * len(paragraphs),
            "ref": [ref for ref, _ in paragraphs],
            "content": [text for _, text in paragraphs],
        }
    )
    documents = metadata.apply(
        pl.DataFrame(
            {"document_id": ["d"], "document_key": ["rulebook"], "source_name": ["r.md"]},
        ).with_columns(pl.lit("Rulebook").alias("title")),
        metadata.Catalog(),
    )
    return chunks, documents


def test_bare_numbers_need_an_exact_match_and_named_units_fall_back_to_their_parent():
    chunks, documents = _one_document(
        [
            ("18.5", "Segregation"),
            ("18.5.1", "A firm must segregate client money."),
            ("18.5.2", "Reconcile at 1.5 times the rate, see 18.5.1 and Rule 18.5.7(b)."),
        ]
    )
    edges = build_edges(chunks, documents)
    rows = edges.select("source_chunk_id", "target_chunk_id", "reference_text", "match").rows()
    assert ("c2", "c1", "18.5.1", "exact") in rows
    assert ("c2", "c0", "Rule 18.5.7(b)", "enclosing") in rows
    assert all(text != "1.5" for _, _, text, _ in rows)


def test_unknown_units_are_kept_with_their_text():
    chunks, documents = _one_document(
        [("1.1", "See Rule 9.9.9 and Article 4 of Directive 95/46/EC.")]
    )
    edges = build_edges(chunks, documents)
    assert sorted(edges.select("reference_text", "reference_type").rows()) == [
        ("Article 4", "outside"),
        ("Rule 9.9.9", "unresolved"),
    ]
    assert edges["target_chunk_id"].is_null().all()


GDPR_INTERNAL = {
    # Article 6: the first subparagraph's own point (f), paragraph 1's points from 2 and 3.
    "Article 6(1)": {"Article 6(1)"},
    "Article 6(2)": {"Article 6(1)"},
    "Article 6(3)": {"Article 6(1)"},
    "Article 6(4)": {"Article 23(1)", "Article 9", "Article 10"},
    "Article 9(2)": {"Article 9(1)", "Article 9(3)", "Article 89(1)"},
    "Article 9(3)": {"Article 9(1)", "Article 9(2)"},
    "Article 13(1)": {"Article 6(1)", "Article 46", "Article 47", "Article 49(1)"},
    "Article 13(2)": {
        "Article 13(1)",
        "Article 6(1)",
        "Article 9(2)",
        "Article 22(1)",
        "Article 22(4)",
    },
    "Article 13(3)": {"Article 13(2)"},
    "Article 13(4)": {"Article 13(1)", "Article 13(2)", "Article 13(3)"},
    "Article 17(1)": {
        "Article 6(1)",
        "Article 9(2)",
        "Article 21(1)",
        "Article 21(2)",
        "Article 8(1)",
    },
    "Article 17(2)": {"Article 17(1)"},
    "Article 17(3)": {
        "Article 17(1)",
        "Article 17(2)",
        "Article 9(2)",
        "Article 9(3)",
        "Article 89(1)",
    },
    "Article 83(1)": {"Article 83(4)", "Article 83(5)", "Article 83(6)"},
    "Article 83(2)": {"Article 58(2)", "Article 25", "Article 32", "Article 40", "Article 42"},
    "Article 83(4)": {
        "Article 83(2)",
        "Article 8",
        "Article 11",
        "Article 42",
        "Article 43",
        "Article 41(4)",
    }
    | {f"Article {n}" for n in range(25, 40)},
    "Article 83(5)": {
        "Article 83(2)",
        "Article 5",
        "Article 6",
        "Article 7",
        "Article 9",
        "Article 58(1)",
        "Article 58(2)",
    }
    | {f"Article {n}" for n in [*range(12, 23), *range(44, 50)]},
    "Article 83(6)": {"Article 58(2)", "Article 83(2)"},
    "Article 83(7)": {"Article 58(2)"},
}


def test_gdpr_pdf_internal_references_of_articles_6_9_13_17_83(gdpr_pdf_tables):
    documents, _, chunks = gdpr_pdf_tables
    documents = metadata.apply(documents, metadata.Catalog())
    edges = build_edges(chunks, documents)
    ref = dict(zip(chunks["chunk_id"], chunks["ref"], strict=True))
    found: dict[str, set[str]] = {}
    for source, target in (
        edges.filter(pl.col("reference_type") == "internal")
        .select("source_chunk_id", "target_chunk_id")
        .rows()
    ):
        found.setdefault(ref[source], set()).add(ref[target])
    cited = {source: found.get(source, set()) for source in GDPR_INTERNAL}
    assert cited == GDPR_INTERNAL
    # Paragraphs that cite nothing inside the Regulation get no internal edge.
    assert not found.get("Article 83(3)")


@pytest.mark.parametrize(
    ("source", "target", "reference_type"),
    [
        ("data-handling-regulation:Article 2", "lrb-chapter-4-client-assets:4.1.1", "external"),
        (
            "data-handling-regulation:Article 5(2)",
            "data-handling-regulation:Article 5(1)",
            "internal",
        ),
        ("lrb-chapter-4-client-assets:4.4.2", "lsa-230-audit-documentation:8", "external"),
        ("lsa-230-audit-documentation:8", "lrb-chapter-4-client-assets:4.3.3", "external"),
        ("LKB-FAQ:Q1", "lrb-chapter-4-client-assets:4.3.1", "external"),
        ("records-retention-act:§ 104", "data-handling-regulation:Article 6", "external"),
    ],
)
def test_sample_corpus_edges(built_root, source, target, reference_type):
    from lexkb.core.store.snapshot import load

    snapshot = load(built_root)
    chunks = pl.read_parquet(snapshot.table_path("chunks"))
    name = dict(zip(chunks["chunk_id"], chunks["document_key"] + ":" + chunks["ref"], strict=True))
    edges = pl.read_parquet(snapshot.table_path("edges"))
    pairs = {
        (name[s], name.get(t), kind)
        for s, t, kind in edges.select(
            "source_chunk_id", "target_chunk_id", "reference_type"
        ).rows()
    }
    assert (source, target, reference_type) in pairs


def test_sample_catalog_fills_document_names(index):
    documents = {d["document_key"]: d for d in index.documents()}
    assert documents["lrb-chapter-4-client-assets"]["short_name"] == "LRB"
    assert "Lexkb Rulebook" in documents["lrb-chapter-4-client-assets"]["aliases"]
    assert documents["LKB-FAQ"]["refers_to"] == ["lrb-chapter-4-client-assets"]
    assert "catalog" not in documents


def _two_documents(refers_to: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    rows = [
        ("g0", "note", "3.1", "Records of client money must be reconciled under Rule 3.1.1."),
        ("g1", "note", "3.2", "Firms should keep reconciliation notes."),
        ("r0", "book", "3.1.1", "A firm must reconcile client money daily."),
        ("r1", "book", "3.1.2", "A firm must report differences."),
    ]
    chunks = pl.DataFrame(
        {
            "chunk_id": [r[0] for r in rows],
            "document_id": [r[1] for r in rows],
            "chunk_level": ["paragraph"] * len(rows),
            "ref": [r[2] for r in rows],
            "content": [r[3] for r in rows],
        }
    )
    documents = metadata.apply(
        pl.DataFrame(
            {
                "document_id": ["note", "book"],
                "document_key": ["gn-7", "rulebook"],
                "source_name": ["gn-7.html", "rulebook.txt"],
                "title": ["Guidance Note GN-7", "Lexkb Rulebook"],
            }
        ),
        metadata.Catalog(documents={"gn-7": metadata.DocumentMetadata(refers_to=tuple(refers_to))}),
    )
    return chunks, documents


def test_an_unqualified_rule_goes_to_the_document_that_has_it_not_a_neighbour():
    # The note has no 3.1.1; its own 3.1 is another numbering scheme, not an enclosing unit.
    chunks, documents = _two_documents(refers_to=["rulebook"])
    edges = build_edges(chunks, documents)
    assert edges.select("source_chunk_id", "target_chunk_id", "match").rows() == [
        ("g0", "r0", "exact")
    ]
    chunks, documents = _two_documents(refers_to=[])
    edges = build_edges(chunks, documents)
    assert edges.select("target_chunk_id", "reference_type").rows() == [(None, "unresolved")]
