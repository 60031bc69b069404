"""EU acts as the Official Journal prints them, in both layouts (until September 2023: DMA, CSRD;
act by act since October 2023: the AI Act): a heading opens a unit only where the layout sets
one, notes and annexes never answer as recitals or articles, and a unit that is not there is
not confirmed. The shared acts are read through elements and structure (seconds each); the DMA
is also built once and asked through `Index.get`."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.conftest import shared_file
from transforms.reading.elements import document_elements
from transforms.reading.source_files import discover
from transforms.structure import structure_document
from transforms.structure.builder import Builder
from transforms.structure.document import document_profile
from transforms.structure.numbering.regulation import article_heading

# Module fixtures that build: the tests taking them are in the build tier (tests/conftest.py).
BUILDING_FIXTURES = {"dma", "ai_act"}

DMA = ("realdocs", "eu", "CELEX_32022R1925_EN_TXT.pdf")
CSRD = ("realdocs", "eu", "CELEX_32022L2464_EN_TXT.pdf")
AI_ACT = ("realdocs", "eu", "OJ_L_202401689_EN_TXT.pdf")


def _tables(*parts: str) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    source = discover([shared_file(*parts)])[0]
    return structure_document(source, document_elements(source))


def _paragraphs(chunks: pl.DataFrame) -> dict[str, str]:
    rows = chunks.filter(pl.col("chunk_level") == "paragraph")
    return dict(zip(rows["ref"].to_list(), rows["content"].to_list(), strict=True))


@pytest.fixture(scope="module")
def dma() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    return _tables(*DMA)


@pytest.fixture(scope="module")
def ai_act() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    return _tables(*AI_ACT)


# the rules, on their own ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        "Article 2, point (2), or",
        "Article 19;",
        "Article 28a;’;",
        "Article 3 of Directive 2013/34/EU",
    ],
)
def test_a_citation_wrapped_to_a_line_start_is_no_article_heading(line):
    assert article_heading(line) is None


@pytest.mark.parametrize(
    ("line", "number"),
    [
        ("Article 6", "6"),
        ("Article 6 Lawfulness of processing", "6"),
        ("Article 5 – Definitions", "5"),
    ],
)
def test_an_article_heading_is_its_number_alone_or_with_its_title(line, number):
    match = article_heading(line)
    assert match is not None and match.group(1) == number


def test_an_enacted_act_that_cites_an_agreement_is_still_an_act():
    """A regulation's recitals may name "the Paris Agreement" under "Whereas:", which once
    made a whole act read as a contract (recitals "(3)", articles under "Annex IV")."""
    lines = [
        "REGULATION (EU) 2023/956 OF THE EUROPEAN PARLIAMENT AND OF THE COUNCIL",
        "of 10 May 2023",
        "establishing a carbon border adjustment mechanism",
        "Whereas:",
        "(1) The Paris Agreement, adopted on 12 December 2015 under the United Nations ...",
        "(2) This Agreement entered into force on 4 November 2016.",
        "HAVE ADOPTED THIS REGULATION:",
        "Article 1",
        "Subject matter",
        "Article 2",
        "Scope",
    ]
    assert document_profile(lines) == "eu"
    # The same lines without the enacting formula are no act lexkb can be sure of.
    assert document_profile([line for line in lines if "ADOPTED" not in line]) == "contract"


def _feed(lines: list[tuple[str, str]]) -> Builder:
    builder = Builder("doc", "eu", paged=True)
    for block, (text, category) in enumerate(lines):
        builder.feed(text, category, 1, block)
    builder.close_unit()
    return builder


def test_an_annex_numbers_its_own_points_after_the_last_article():
    builder = _feed(
        [
            ("Article 113", "Title"),
            ("Entry into force and application", "Title"),
            ("This Regulation shall enter into force on the twentieth day.", "Text"),
            ("Done at Brussels, 13 June 2024.", "Text"),
            ("ANNEX III", "Title"),
            ("High-risk AI systems referred to in Article 6(2)", "Title"),
            ("1. Biometrics, in so far as their use is permitted:", "Text"),
            ("(a) remote biometric identification systems.", "Text"),
            (
                "2. Critical infrastructure: AI systems intended to be used as safety components.",
                "Text",
            ),
            ("ANNEX IV", "Title"),
            ("Technical documentation", "Title"),
            ("Section A. List of Union harmonisation legislation", "Title"),
            ("1. Directive 2006/42/EC on machinery;", "Text"),
        ]
    )
    refs = [unit.ref for unit in builder.units]
    assert refs == [
        "Article 113",
        "Annex III, point 1",
        "Annex III, point 2",
        "Annex IV, Section A, point 1",
    ]
    assert "(a) remote biometric" in "\n".join(builder.units[1].lines)


def test_a_sentence_that_asks_for_a_reference_takes_the_next_line_as_it():
    """ "... pursuant to" / "Article 81." (the AI Act, p. 99) ends a point; it opens no article."""
    builder = _feed(
        [
            ("Article 69", "Title"),
            ("Access to the pool of experts", "Title"),
            ("3. The tasks shall include:", "Text"),
            ("(d) supporting the AI Office in the Union safeguard procedure pursuant to", "Text"),
            ("Article 81.", "Text"),
            ("4. The experts shall perform their tasks with impartiality.", "Text"),
        ]
    )
    assert [unit.ref for unit in builder.units] == ["Article 69(3)", "Article 69(4)"]
    assert builder.units[0].lines[-1].endswith("pursuant to Article 81.")


# the shared acts --------------------------------------------------------------------------------
def test_dma_definitions_stay_article_2_and_its_annex_is_no_article(dma):
    _, sections, chunks = dma
    paragraphs = _paragraphs(chunks)
    labels = sections["section_number"].to_list()
    assert labels.count("Article 2") == 1  # "Article 2, point (2), or" on p. 58 opens none
    assert "(4) ‘digital sector’ means" in paragraphs["Article 2"]
    assert "Article 2(4)" not in paragraphs
    assert "Article 41(4)" in paragraphs and "Article 41(5)" in paragraphs
    assert not any(ref.startswith("Article 54(") for ref in paragraphs)
    assert paragraphs["Annex, Section A, point 2"].startswith("2. Article 2, points (20) and (21)")


def test_ai_act_notes_are_no_recitals_and_its_page_feet_are_furniture(ai_act):
    _, sections, chunks = ai_act
    paragraphs = _paragraphs(chunks)
    assert paragraphs["Recital 4"].startswith("(4) AI is a fast evolving family")
    assert paragraphs["Recital 11"].startswith("(11) This Regulation should be without prejudice")
    notes = chunks.filter(pl.col("chunk_level") == "note")["content"].to_list()
    assert any(note.startswith("(4) Position of the European Parliament") for note in notes)
    feet = [t for t in paragraphs.values() if t.lstrip("0123456789/ ").startswith("ELI:")]
    assert feet == []
    assert not any(t.startswith(("EN OJ L", "OJ L, 12.7.2024")) for t in paragraphs.values())
    titles = dict(zip(sections["section_number"], sections["title"], strict=True))
    # two titles set over the full width, wrapped into a line of their own
    assert titles["Article 59"].endswith("in the AI regulatory sandbox")
    assert titles["Article 111"].endswith("already placed on the marked")
    assert paragraphs["Article 81(1)"].startswith("1. Where, within three months")
    assert paragraphs["Annex III, point 1"].startswith("1. Biometrics")
    # the preamble is one sentence over its lines, "Whereas:" no unit of its own
    preamble = [t for t in paragraphs.values() if "Having regard to the proposal" in t]
    assert len(preamble) == 1 and preamble[0].rstrip().endswith("Whereas:")
    assert "THE EUROPEAN PARLIAMENT AND THE COUNCIL OF THE EUROPEAN UNION," in preamble[0]


@pytest.mark.build
def test_csrd_amending_points_are_the_directives_own(tmp_path: Path):
    """The CSRD's Article 1 holds points (1)-(17), each quoting text into Directive 2013/34/EU;
    the quoted text's own "(18)" and notes are no units of the CSRD."""
    from lexkb import Index
    from pipelines.in_process import run_build

    root = tmp_path / "index"
    run_build([shared_file(*CSRD)], root, embedder="none")
    index = Index.open(root)
    key = index.documents()[0]["document_key"]
    found = index.get(f"{key} Article 1(9)")
    assert found.match == "contains"
    assert "(9) the following chapter is inserted" in found.hit.text
    absent = index.get(f"{key} Article 1(18)")
    assert absent.match in ("enclosing", "not_found"), absent.reason
    assert index.get(f"{key} Article 19a").match == "not_found"
