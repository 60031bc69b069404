"""Contract lines as text conversions and PDFs leave them: clauses run together on one line
(the line breaks lost), labels that go on with the sentence before them, and clause headings
in capitals run on into their clause's text."""

from __future__ import annotations

import polars as pl
import pytest

from transforms.reading.elements import document_elements
from transforms.reading.source_files import discover
from transforms.structure import structure_document

PREAMBLE = (
    'SUPPLY AGREEMENT\n\nThis Supply Agreement (the "Agreement") is made by and between Northwind '
    'Ltd. ("Supplier") and Contoso plc ("Customer").\n\n'
)
# A page of an SEC filing's text: every clause on one line, a table of contents before them.
FLATTENED = PREAMBLE + (
    "TABLE OF CONTENTS 1. Definitions 2. Supply 3. Term and Termination 4. Miscellaneous\n\n"
    "1. DEFINITIONS 1.1 Product means the goods in Schedule A. 1.2 Territory means Canada. "
    "2. SUPPLY 2.1 Supplier shall supply the Products. The prices are set out in Section 2.2 "
    "The Customer pays them as invoiced. 2.2 Prices. Supplier may raise prices once a year. "
    "2.5 million units are the yearly cap. 3. TERM AND TERMINATION 3.1 This Agreement runs for "
    "three years. Its experts are: 1. Dr Lily Tomas 2. Dr Bernd Friedlander 3. Mr Markus "
    "Eistert 4. Dr Ed Smith. ARTICLE IV MISCELLANEOUS 4.1 Notices. Notices are given in writing.\n"
)
RUN_ON = PREAMBLE + (
    "19.1 Either Party may terminate this Agreement, without cause, by giving two\n"
    "(2) years written notice, except as set out in Section 6.3(a)\n"
    "(ii) of this Agreement or pursuant\n"
    "Section 13.3 or 13.4, which shall then apply.\n\n"
    "19.2 LIMITATION OF LIABILITY. EXCEPT IN CONNECTION WITH A BREACH BY EITHER\n"
    "PARTY OF ARTICLE 7, NEITHER PARTY WILL BE LIABLE FOR ANY INDIRECT DAMAGES.\n"
)


def _structured(tmp_path, text: str) -> tuple[pl.DataFrame, dict[str, str]]:
    path = tmp_path / "supply-agreement.txt"
    path.write_text(text, encoding="utf-8")
    source = discover([path])[0]
    _, sections, chunks = structure_document(source, document_elements(source))
    rows = chunks.filter(pl.col("chunk_level") == "paragraph").select("ref", "content").rows()
    return sections, dict(rows)


@pytest.fixture()
def flattened(tmp_path) -> dict[str, str]:
    return _structured(tmp_path, FLATTENED)[1]


@pytest.fixture()
def flattened_sections(tmp_path) -> pl.DataFrame:
    return _structured(tmp_path, FLATTENED)[0]


def test_clauses_run_together_on_one_line_are_one_unit_each(flattened):
    assert flattened["Section 1.1"] == "1.1 Product means the goods in Schedule A."
    assert flattened["Section 1.2"] == "1.2 Territory means Canada."
    assert flattened["Section 3.1"].startswith("3.1 This Agreement runs for three years.")
    assert flattened["Section 4.1"] == "4.1 Notices. Notices are given in writing."


def test_a_number_that_does_not_continue_the_clauses_stays_in_its_clause(flattened):
    # "Section 2.2 The Customer" cites (after "in"); "2.5 million" is no clause after 2.2; "4."
    # would follow 3.1, but goes on with the list "1. Dr Lily Tomas 2. ...".
    assert "The prices are set out in Section 2.2 The Customer pays" in flattened["Section 2.1"]
    assert flattened["Section 2.2"].endswith("2.5 million units are the yearly cap.")
    assert flattened["Section 3.1"].endswith("3. Mr Markus Eistert 4. Dr Ed Smith.")
    assert "Section 2.5" not in flattened and "Section 4" not in flattened


def test_a_table_of_contents_on_one_line_is_not_cut_into_clauses(flattened, flattened_sections):
    numbers = [n for n in flattened_sections["section_number"].to_list() if n]
    assert numbers == ["Section 1", "Section 2", "Section 3", "Article IV"]
    texts = [*flattened.values(), *(t or "" for t in flattened_sections["title"].to_list())]
    assert [text for text in texts if "1. Definitions 2. Supply 3. Term" in text]


def test_labels_that_go_on_with_the_sentence_before_them_open_no_unit(tmp_path):
    _, units = _structured(tmp_path, RUN_ON)
    clause = " ".join(units["Section 19.1"].split())
    assert "by giving two (2) years written notice" in clause
    assert "Section 6.3(a) (ii) of this Agreement or pursuant Section 13.3 or 13.4" in clause
    assert not any(ref.startswith(("Section 13.3", "Section 19.1(")) for ref in units)


def test_a_heading_in_capitals_runs_on_into_its_clause(tmp_path):
    sections, units = _structured(tmp_path, RUN_ON)
    assert units["Section 19.2"].startswith("19.2 LIMITATION OF LIABILITY. EXCEPT IN CONNECTION")
    assert "NEITHER PARTY WILL BE LIABLE" in units["Section 19.2"]
    assert not any("EXCEPT" in (title or "") for title in sections["title"].to_list())


# Clauses 1-3 set as headings over their text, the rest with their headings run into it.
HEADED_THEN_RUN_IN = PREAMBLE + (
    "Section 1 Definitions\n\nProduct means the goods in Schedule A.\n\n"
    "Section 3 Ownership Of Work\n\nAll Deliverables belong to Customer upon payment.\n\n"
    "3.1 Customer may register the Deliverables in its own name.\n\n"
    "4. Confidentiality. Each party keeps the other's information secret.\n\n"
    "13. Miscellaneous.\n\n(h) Governing Law. This Agreement is governed by the laws of Ontario.\n"
)


def test_a_run_in_clause_is_not_filed_under_the_heading_of_the_clause_before(tmp_path):
    path = tmp_path / "services-agreement.txt"
    path.write_text(HEADED_THEN_RUN_IN, encoding="utf-8")
    source = discover([path])[0]
    _, _, chunks = structure_document(source, document_elements(source))
    paths = dict(
        chunks.filter(pl.col("chunk_level") == "paragraph").select("ref", "section_path").rows()
    )
    assert paths["Section 3.1"] == ["Section 3 Ownership Of Work"]
    assert paths["Section 4"] == []
    assert paths["Section 13(h)"] == []
