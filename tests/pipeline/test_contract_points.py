"""Contract clauses set as the NDA family lays them out: a clause's first line as a block of its
own (a hanging indent), points "a)" under a numbered clause, and unnumbered headings over groups
of clauses that the agreement cites as "clause 2"; and, when the reference data is present, the
NDA of the real-documents set against its truth."""

from __future__ import annotations

import json

import polars as pl

from tests.conftest import shared_file
from transforms.reading.elements import document_elements
from transforms.reading.source_files import discover
from transforms.structure import structure_document
from transforms.structure.builder import Builder


def _units(blocks: list[tuple[str, str]]) -> dict[str, str]:
    """ref -> text of the units built from (category, text) blocks, one block each, page 1."""
    builder = Builder("d", "contract", paged=True)
    for block, (category, text) in enumerate(blocks, start=1):
        for line in text.split("\n"):
            builder.feed(line, category, 1, block)
    builder.close_unit()
    builder.number_headings()
    return {unit.ref: " ".join(unit.lines) for unit in builder.units}


HANGING = [
    ("Title", "Non-Disclosure Agreement"),
    ("Title", "Obligations of Confidentiality"),
    ("Text", "1.1 Each PARTY may provide Confidential Information to the other"),
    ("Text", "PARTY. All Confidential Information disclosed is to be\nprotected hereby:"),
    ("Text", "a) if in writing, when labelled as confidential; or"),
    ("Text", "b) if oral, when identified as confidential."),
    ("Text", "1.2 The PARTIES will not disclose Confidential Information unless:"),
    ("Text", "a) in accordance with this Agreement;"),
    ("Title", "Return of Confidential Information"),
    ("Text", "Upon termination the Receiving PARTY shall return the information."),
    ("Text", "Copies kept in back-ups shall not be accessed."),
    ("Title", "Miscellaneous"),
    ("Text", "3.1 This Agreement shall have a term of one (1) year."),
]


def test_a_clause_whose_first_line_stands_alone_is_one_unit():
    units = _units(HANGING)
    assert units["Section 1.1"].endswith("is to be protected hereby:")
    assert "Section 1.1 ¶ 2" not in units


def test_points_written_a_paren_are_units_of_their_clause():
    units = _units(HANGING)
    assert units["Section 1.1(a)"].startswith("a) if in writing")
    assert units["Section 1.1(b)"].startswith("b) if oral")
    assert units["Section 1.2(a)"].startswith("a) in accordance")
    assert "Section 1.2(b)" not in units


def test_unnumbered_headings_confirmed_by_their_clauses_are_numbered_in_order():
    units = _units(HANGING)
    assert units["Section 2"].startswith("Upon termination")
    assert units["Section 2 ¶ 2"].startswith("Copies kept")


def test_headings_are_not_numbered_when_the_clauses_disagree():
    # The second heading holds clause 3.1: counting headings would call it "Section 2".
    blocks = [b for b in HANGING if "Return" not in b[1] and "Upon" not in b[1]]
    blocks = [b for b in blocks if "Copies" not in b[1]]
    units = _units(blocks)
    assert "Section 1" not in units and "Section 2" not in units
    assert "Section 3.1" in units


def test_nda_units_match_its_truth():
    path = shared_file("realdocs", "nda.pdf")
    truth = json.loads(shared_file("realdocs", "nda.pdf.truth.json").read_text())
    source = discover([path])[0]
    _, sections, chunks = structure_document(source, document_elements(source))
    paragraphs = chunks.filter(pl.col("chunk_level") == "paragraph")
    text = {
        ref: " ".join(content.split())
        for ref, content in paragraphs.select("ref", "content").iter_rows()
    }
    labels = set(sections["section_number"].drop_nulls())
    for unit in truth["units"]:
        ref = unit["ref"].replace("clause", "Section")
        if unit.get("heading"):
            assert ref in labels, ref
            continue
        assert ref in text, ref
        assert unit["text"][:40] in text[ref], ref
    for ref in truth["absent"]:
        ref = ref.replace("clause", "Section")
        assert ref not in text and ref not in labels, ref


def test_points_labelled_a_bracket_in_one_block_are_units_of_their_own():
    """A text conversion keeps a list's lines in one layout paragraph: after a lead-in (":")
    or an item closing "; and", each "e)" line opens the point "Section 4.2(e)"."""
    units = _units(
        [
            ("Title", "Supply Agreement"),
            (
                "Text",
                "4.2 The Supplier shall:\nd) notify the Customer of any delay;\n"
                "e) keep accurate records of all shipments; and\n"
                "f) comply with the Customer's site rules.",
            ),
        ]
    )
    assert units["Section 4.2"] == "4.2 The Supplier shall:"
    assert units["Section 4.2(e)"] == "e) keep accurate records of all shipments; and"
    assert units["Section 4.2(f)"] == "f) comply with the Customer's site rules."


def test_a_bracket_label_in_running_text_opens_no_point():
    units = _units(
        [
            ("Title", "Supply Agreement"),
            ("Text", "4.2 The Supplier shall keep the records listed in clause 3.1\na) and b)"),
        ]
    )
    assert set(units) == {"Section 4.2"}
