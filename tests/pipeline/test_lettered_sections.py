"""Lettered subsections set in the text of a policy or manual ("a. Required Customer
Information" under "5. Customer Identification"), cited "Section 5(a)"; and, when the reference
data is present, the AML policy of the real-documents set against its truth."""

from __future__ import annotations

import json

import polars as pl

from tests.conftest import shared_file
from transforms.reading.elements import document_elements
from transforms.reading.source_files import discover
from transforms.structure import structure_document
from transforms.structure.builder import Builder


def _units(lines: list[str]) -> dict[str, str]:
    """ref -> text of the units of a plain document, one block a line."""
    builder = Builder("d", "plain", paged=False)
    for block, text in enumerate(lines, start=1):
        builder.feed(text, "Text", None, block)
    builder.close_unit()
    return {unit.ref: " ".join(unit.lines) for unit in builder.units}


POLICY = [
    "Compliance Procedures",
    "5. The firm verifies every customer as set out below.",
    "a. Required Customer Information",
    "We will collect the name and address of each customer.",
    "b. Verifying Information",
    "We will verify identity through documents.",
    "d. Out of Sequence",
    "6. Accounts are monitored.",
    "b. Not After An A",
]


def test_lettered_headings_are_subsections_of_their_number():
    units = _units(POLICY)
    assert units["5(a)"].startswith("a. Required Customer Information We will collect")
    assert units["5(b)"].startswith("b. Verifying Information")


def test_a_letter_out_of_sequence_is_text():
    units = _units(POLICY)
    assert "5(d)" not in units and "d. Out of Sequence" in units["5(b)"]
    assert "6(b)" not in units and "5(b)" in units


def test_a_numbered_list_inside_a_section_is_its_text():
    units = _units(
        [
            "1. Company Position",
            "It is the policy of the Company to prevent money laundering.",
            "Key components of the policy include:",
            "1. Compliance Officer Designation",
            "2. Training and Education",
            "3. Know Your Customer",
            "2. Compliance Officer Designation and Duties",
            "The firm designates a compliance officer.",
            "3. Monitoring",
            "Accounts are monitored.",
        ]
    )
    # the list "1." to "3." stays in section 1; "2." after it continues the sections
    assert set(units) == {"1", "2", "3"}
    assert "2. Training and Education 3. Know Your Customer" in units["1"]
    assert units["2"] == "The firm designates a compliance officer."


def test_aml_policy_subsections_match_their_truth():
    path = shared_file("realdocs", "Compto AML Policy.docx")
    truth = json.loads(shared_file("realdocs", "Compto AML Policy.docx.truth.json").read_text())
    source = discover([path])[0]
    _, _, chunks = structure_document(source, document_elements(source))
    paragraphs = chunks.filter(pl.col("chunk_level") == "paragraph")
    text = {r: " ".join(c.split()) for r, c in paragraphs.select("ref", "content").iter_rows()}
    lettered = [u for u in truth["units"] if "(" in u["ref"]]
    found = [u for u in lettered if u["ref"].removeprefix("Section ") in text]
    # 26 of 27: "d. Summons or Subpoena ...; Termination of ... Relationships." reads as a
    # sentence, not a heading.
    assert len(found) >= 26
    for unit in found:
        assert unit["text"][:40] in text[unit["ref"].removeprefix("Section ")], unit["ref"]
    for ref in truth["absent"]:
        assert ref.removeprefix("Section ") not in text, ref
    # its title and owner come from its document-control table, not the company's name line
    documents = structure_document(source, document_elements(source))[0]
    assert documents.select("title", "author").row(0) == (truth["title"], "David Trost")
    # the "Key components" list numbered 1 to 4 inside section 1 opens no section of its own
    assert text["2"].startswith("The firm designates")
    assert not any(ref.startswith("2 [") for ref in text)
