"""Documents named as people cite them, and a reference never answered from a document it
cannot mean (issue 59, items 1-3), on an index built from documents written here.

Two editions of one US Code title (both "99 U.S.C.", "Title 99"), an EU regulation cited by
its number, a UK Act whose short title holds a place in parentheses, and a contract.
"""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from lexkb import Index
from tests.pipeline.test_legal_xml import CLML_DOC, FORMEX_DOC, USLM_DOC

# Module fixtures that build: the tests taking them are in the build tier (tests/conftest.py).
BUILDING_FIXTURES = {"named"}

# The title's note says where another section's note is: an apparatus line, citing a section.
_NOTED = USLM_DOC.replace(
    "<p>2001—Subsec. (b) amended.</p>",
    "<p>Amendment effective, see section 5A of this title, set out as a note under section 5A.</p>",
)
# As legislation.gov.uk prints an Act: its Royal Assent under the long title.
_NI_ACT = CLML_DOC.replace("Test Act 2001", "Test (Northern Ireland) Act 2001").replace(
    "<Primary><Body>",
    "<Primary><PrimaryPrelims><LongTitle>An Act to test.</LongTitle><DateOfEnactment>"
    "<DateText>[8th April 2001]</DateText></DateOfEnactment></PrimaryPrelims><Body>",
)
# A contract that calls its own units sections, named by its parties.
_MSA = """MASTER SERVICES AGREEMENT

This Master Services Agreement (the "Agreement") is entered into as of March 3, 2023 by and
between Acme Corporation, a Delaware corporation ("Client"), and Widget Labs Limited ("Supplier").

1. Services

1.1 Supplier shall provide the services described in Section 2.1 with reasonable skill and care.

1.2 Client shall pay the fees set out in the order form within thirty days of invoice.

2. Term

2.1 This Agreement begins on the Effective Date and continues for one year.

2.2 Either party may terminate this Agreement on thirty days' notice under Section 2.1.

2.3 This Agreement shall be governed by and construed in accordance with the laws of the State
of New York.
"""


@pytest.fixture(scope="module")
def named(tmp_path_factory: pytest.TempPathFactory) -> Index:
    from pipelines.in_process import run_build

    corpus = tmp_path_factory.mktemp("named") / "corpus"
    corpus.mkdir()
    for name, text in [
        ("usc99.xml", _NOTED),
        # A later edition: one subsection amended (an identical file is one document).
        ("usc99-2024.xml", _NOTED.replace("Only the author", "Only the author or heir")),
        ("reg.xml", FORMEX_DOC),
        ("act.xml", _NI_ACT),
        ("msa.txt", _MSA),
    ]:
        (corpus / name).write_text(text, encoding="utf-8")
    root = corpus.parent / "index"
    assert run_build([corpus], root, embedder="none").documents == 5
    return Index.open(root)


@pytest.mark.parametrize("asked", ["99 U.S.C. § 5(a)", "Title 99 § 5(a)", "Title 99, section 5(a)"])
def test_a_name_two_documents_share_finds_the_unit_in_each(named: Index, asked: str) -> None:
    found = named.get(asked)
    assert found.match == "ambiguous"
    assert len({hit.document_key for hit in found.alternatives}) == 2
    assert {hit.ref for hit in found.alternatives} == {"§ 5(a)"}
    # The two are told apart by their keys, where their citations read alike.
    assert "[usc99]" in found.reason and "[usc99-2024]" in found.reason


@pytest.mark.parametrize(
    "asked",
    [
        "2099/1 Article 2(1)",
        "Regulation 2099/1 Article 2(1)",
        "Regulation (EU) 2099/1 Article 2(1)",
    ],
)
def test_an_eu_act_answers_to_its_number(named: Index, asked: str) -> None:
    found = named.get(asked)
    assert (found.match, found.hit.ref) == ("exact", "Article 2(1)")


def test_a_number_of_no_document_held_is_not_found(named: Index) -> None:
    found = named.get("2016/679 Article 2(1)")
    assert found.match == "not_found"
    assert "2016/679" in found.reason


def test_a_uk_act_answers_without_its_place(named: Index) -> None:
    found = named.get("Test Act 2001 section 7(1)")
    assert (found.match, found.hit.ref) == ("exact", "section 7(1)")
    assert named.get("Test Act 1999 section 7(1)").match == "not_found"


@pytest.mark.parametrize(
    ("asked", "own"),
    [("clause 7(1)", "section 7(1)"), ("clause 5(a)", "§ 5(a)"), ("clause 3", "Article 3")],
)
def test_clause_is_no_unit_of_an_act_a_code_or_a_regulation(
    named: Index, asked: str, own: str
) -> None:
    """A clause is a contract's unit: where the contract has none of that number, it is found
    nowhere, never an Act's section, a Code's section or a regulation's article."""
    found = named.get(asked)
    assert found.match == "not_found"
    assert found.hit is None and not found.alternatives
    # The same numbers under their own words are found.
    assert named.get(own).match in ("exact", "ambiguous")


def test_notes_are_apparatus_not_citations(named: Index) -> None:
    """A note that cites a section is no edge of the graph, and is cited as a note."""
    chunks = named.tables.chunks
    notes = chunks.filter(pl.col("chunk_level") == "note")
    noted = notes.filter(pl.col("content").str.contains("section 5A"))
    assert noted.height == 2  # the same note in each edition
    edges = pl.read_parquet(named.snapshot.table_path("edges"))
    assert not edges["source_chunk_id"].is_in(notes["chunk_id"].implode()).any()
    # Searchable when asked for.
    asked = {"chunk_level": "note"}
    hits = named.search("amendment effective set out", mode="keyword", k=20, filters=asked).hits
    cited = [hit.citation for hit in hits if hit.chunk_level == "note"]
    assert cited and all(c.endswith(" note") for c in cited)
    assert any(c.endswith("§ 5 note") for c in cited)


@pytest.mark.parametrize(
    "asked",
    [
        "clause 2.1",
        "Acme clause 2.1",
        "Acme MSA clause 2.1",
        "the Acme agreement, clause 2.1",
        "Widget Section 2.1",
        "Acme Corporation section 2.1",
    ],
)
def test_a_contract_answers_to_its_parties_and_to_clause(named: Index, asked: str) -> None:
    found = named.get(asked)
    assert (found.match, found.hit.document_key, found.hit.ref) == ("exact", "msa", "Section 2.1")


def test_a_party_the_index_does_not_hold_names_no_contract(named: Index) -> None:
    found = named.get("Globex clause 2.1")
    assert found.match == "not_found"
    assert "Globex" in found.reason


def test_an_act_is_dated_by_its_royal_assent_and_a_date_filter_names_the_undated(
    named: Index,
) -> None:
    documents = named.tables.documents
    dated = dict(documents.select("document_key", "published").rows())
    assert dated["act"] == date(2001, 4, 8)
    assert dated["msa"] == date(2023, 3, 3)
    found = named.search("rights", mode="keyword", filters={"end": "2030-01-01"})
    (warning,) = [w for w in found.warnings if "state no date" in w]
    assert "usc99" in warning and "reg" in warning and "msa" not in warning
    # Filtered to a dated document, nothing undated is worth a word.
    kept = named.search("fees", mode="keyword", filters={"end": "2030-01-01", "document": "msa"})
    assert kept.hits and not [w for w in kept.warnings if "state no date" in w]


def test_contracts_are_found_by_the_law_that_governs_them(named: Index) -> None:
    laws = dict(named.tables.documents.select("document_key", "governing_law").rows())
    assert laws["msa"] == "New York" and laws["act"] is None
    for place in ("New York", "new york", ["York", "new"]):
        found = named.search("fees", mode="keyword", filters={"governing_law": place})
        assert found.hits and {h.document_key for h in found.hits} == {"msa"}
    # A place no contract names is a mistake said as one, with the places that are named.
    with pytest.raises(ValueError, match="places named: New York"):
        named.search("fees", mode="keyword", filters={"governing_law": "Delaware"})


def test_which_law_governs_is_answered_with_its_clause_then_the_place(named: Index) -> None:
    from lexkb.answers import extract

    for question in ("Which law governs this agreement?", "What is the governing law?"):
        found = extract(named, question, document="msa")
        clause, place = found.answers[:2]
        assert (place.kind, place.text, place.ref) == ("law", "New York", "Section 2.3")
        # The clause's own sentence first, holding the place it names, and not given twice.
        assert (clause.kind, clause.ref, clause.chunk_id) == (
            "sentence",
            "Section 2.3",
            place.chunk_id,
        )
        assert clause.start <= place.start and place.end <= clause.end and "governed" in clause.text
        assert [(a.chunk_id, a.start) for a in found.answers].count(
            (clause.chunk_id, clause.start)
        ) == 1
        assert found.reason.startswith("the sentence of the clause choosing the governing law")
    # A question that only mentions law is no question of which law governs.
    mentions = extract(named, "Must the supplier comply with applicable law?", document="msa")
    assert all(a.kind != "law" for a in mentions.answers)


def test_the_documents_listing_gives_a_contracts_head(named: Index) -> None:
    from lexkb.cli.query import contract_head

    heads = {d["document_key"]: contract_head(d) for d in named.documents()}
    assert heads["msa"] == (
        "parties: Acme Corporation; Widget Labs Limited · made 2023-03-03 · New York law"
    )
    assert heads["act"] is None and heads["reg"] is None
