"""The US Code's XHTML rendering (uscode.house.gov) read as markup (issue 36): its fields and
classes say what each block is, the labels' levels follow the Code's numbering scheme.

A small title written here in the OLRC's layout covers chained labels, headings set in small
capitals, labels that fit two levels, flush text after a list, struck units, notes and the
unnumbered definitions of a § 101; the real 17 U.S.C. rendering is held against its USLM XML.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import shared_file
from tests.pipeline.test_legal_xml import _units
from transforms.reading.elements import document_elements
from transforms.reading.legal_xml.usc_levels import (
    CLAUSE,
    PARAGRAPH,
    SUBCLAUSE,
    SUBPARAGRAPH,
    SUBSECTION,
    Levels,
    candidates,
)
from transforms.reading.legal_xml.xml_rows import is_outline
from transforms.reading.source_files import SourceFile
from transforms.structure import structure_legal_xml

# Module fixtures that build: the tests taking them are in the build tier (tests/conftest.py).
BUILDING_FIXTURES = {"index"}

TITLE = """<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "x">
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>United States Code</title></head>
<body><div>
<!-- field-start:titlehead --><h1 class="usc-title-head">TITLE 99—TEST MATTERS</h1>
<!-- field-end:titlehead -->
<!-- field-start:structuralhead -->
<h3 class="chapter-head"><strong>CHAPTER 1—GENERAL PROVISIONS</strong></h3>
<!-- field-end:structuralhead -->
<!-- field-start:analysis --><div class="analysis"><div>101.</div><div>Definitions.</div></div>
<!-- field-end:analysis -->
<!-- field-start:head --><h3 class="section-head">§101. Definitions</h3><!-- field-end:head -->
<!-- field-start:statute -->
<p class="statutory-body">As used in this title, the following terms mean the following:</p>
<p class="statutory-body-1em">A "device" is one of the following—</p>
<p class="statutory-body-2em">(1) a machine; or</p>
<p class="statutory-body-2em">(2) a process.</p>
<p class="statutory-body-1em">A "work" is—</p>
<p class="statutory-body-2em">(1) a writing; and</p>
<p class="statutory-body-2em">(2) a drawing.</p>
<!-- field-end:statute -->
<!-- field-start:sourcecredit --><p class="source-credit">(Pub. L. 1–1, Jan. 1, 2000.)</p>
<!-- field-end:sourcecredit -->
<!-- field-start:head --><h3 class="section-head">§106A. Rights of makers</h3>
<!-- field-end:head -->
<!-- field-start:statute -->
<p class="statutory-body">(a) <cap-smallcap>Rights</cap-smallcap>.—Subject to section 107<sup>1</sup>, the maker—</p>
<p class="statutory-body-1em">(1) shall have the right—</p>
<p class="statutory-body-2em">(A) to claim the work, and</p>
<p class="statutory-body-2em">(B) to refuse the name;</p>
<p class="statutory-body-1em">(2) may waive the right.</p>
<p class="statutory-body">(b) <cap-smallcap>Exceptions</cap-smallcap>.—(1) A change by time is no distortion.</p>
<p class="statutory-body">(2) A change by conservation is no distortion.</p>
<p class="statutory-body">(c) <cap-smallcap>Term on January</cap-smallcap> 1, 1978.—(1)(A) Any right subsisting on that day.</p>
<p class="statutory-body-1em">(B) In the case of—</p>
<p class="statutory-body-2em">(i) a posthumous work, or</p>
<p class="statutory-body-2em">(ii) a joint work,</p>
<p class="statutory-body-block-1em">the term is 28 years.</p>
<p class="statutory-body">(d) A right of display.</p>
<p class="statutory-body">(e) A right of sale.</p>
<p class="statutory-body">(f) A right of loan.</p>
<p class="statutory-body">(g) A right of rental.</p>
<p class="statutory-body">(h) A right of transfer.</p>
<p class="statutory-body">[(i) Repealed. Pub. L. 2–2, Feb. 2, 2001.]</p>
<p class="statutory-body">(j) <cap-smallcap>Conditions</cap-smallcap>.—The limits apply only if the maker—</p>
<p class="statutory-body-1em">(1)(A) has adopted a policy that—</p>
<p class="statutory-body-3em">(i) provides notice; and</p>
<p class="statutory-body-3em">(ii) is reasonably implemented, except that—</p>
<p class="statutory-body-4em">(I) a first notice is free; and</p>
<p class="statutory-body-4em">(II) a second notice costs a fee.</p>
<!-- field-end:statute -->
<!-- field-start:notes --><!-- field-start:amendment-note -->
<h4 class="note-head">Amendments</h4>
<p class="note-body"><b>2001</b>—Subsec. (i). Pub. L. 2–2 struck out subsec. (i).</p>
<!-- field-end:amendment-note --><!-- field-end:notes -->
<!-- field-start:footnote --><p class="footnote"><sup>1</sup> So in original.</p>
<!-- field-end:footnote -->
<!-- field-start:repealedhead -->
<h3 class="section-head">[§107. Repealed. Pub. L. 3–3, Mar. 3, 2002]</h3>
<!-- field-end:repealedhead -->
<!-- field-start:repealsummary --><p class="note-body">Section related to fees.</p>
<!-- field-end:repealsummary -->
</div></body></html>
"""


def _source(path: Path) -> SourceFile:
    return SourceFile(path.name, path, "html", "0" * 64, path.stat().st_size)


def _build(path: Path) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    source = _source(path)
    elements = document_elements(source)
    assert is_outline(elements)
    return structure_legal_xml(source, elements)


@cache
def _built(path: str) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    return _build(Path(path))


@pytest.fixture(scope="module")
def title(tmp_path_factory) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    path = tmp_path_factory.mktemp("usc") / "usc99.htm"
    path.write_text(TITLE, encoding="utf-8")
    return _build(path)


def test_the_title_chapters_and_sections_come_from_the_markup(title):
    documents, sections, _ = title
    assert documents["title"][0] == "Title 99—Test Matters"
    headed = sections.select("section_number", "title").rows()
    assert ("§ 106A", "Rights of makers") in headed
    chapter = sections.filter(pl.col("title") == "General Provisions")
    assert chapter["section_number"].to_list() == ["Chapter 1"]


def test_labels_nest_to_the_last_level_with_their_headings(title):
    units = _units(title[2])
    assert units["§ 106A(a)"] == "(a) Rights.—Subject to section 107, the maker—"
    assert units["§ 106A(a)(1)(A)"] == "(A) to claim the work, and"
    assert units["§ 106A(a)(2)"] == "(2) may waive the right."
    # a label chained after a heading opens its child; its sibling on the next line follows
    assert units["§ 106A(b)(1)"] == "(1) A change by time is no distortion."
    assert units["§ 106A(b)(2)"] == "(2) A change by conservation is no distortion."
    # a heading that runs past its small capitals, then two labels chained together
    assert units["§ 106A(c)(1)(A)"] == "(A) Any right subsisting on that day."
    assert units["§ 106A(c)"].startswith("(c) Term on January 1, 1978.—\n(1)")


def test_a_label_that_fits_two_levels_is_read_in_sequence(title):
    units = _units(title[2])
    # "(i)" after subsection (h)'s struck successor is clause (i) under (B), never a subsection
    assert units["§ 106A(c)(1)(B)(i)"] == "(i) a posthumous work, or"
    assert "§ 106A(i)" not in units
    assert units["§ 106A(j)(1)(A)(ii)(II)"] == "(II) a second notice costs a fee."
    assert "§ 106A(j)(1)(A)(I)" not in units


def test_a_unit_without_words_of_its_own_is_printed_whole(title):
    units = _units(title[2])
    # subsection (b) says only its heading: its words are its paragraphs'
    assert units["§ 106A(b)"].splitlines() == [
        "(b) Exceptions.—",
        "(1) A change by time is no distortion.",
        "(2) A change by conservation is no distortion.",
    ]
    # flush text after a list closes the unit that opened it
    assert units["§ 106A(c)(1)(B)"] == "(B) In the case of—\nthe term is 28 years."


def test_notes_struck_units_and_definitions_stay_out_of_the_statute(title):
    chunks = title[2]
    units = _units(chunks)
    notes = chunks.filter(pl.col("chunk_level") == "note")["content"].to_list()
    assert any(n.startswith("Amendments\n2001—Subsec. (i)") for n in notes)
    assert "[(i) Repealed. Pub. L. 2–2, Feb. 2, 2001.]" in notes
    assert any(n.startswith("(Pub. L. 1–1") for n in notes)
    assert "So in original." in " ".join(notes)
    assert not any("So in original" in text for text in units.values())
    # the definitions' own "(1)", "(2)" repeat: words of their definitions, not § 101(1)
    assert not any(ref.startswith("§ 101(") for ref in units)
    paragraphs = chunks.filter(pl.col("chunk_level") == "paragraph")["content"].to_list()
    assert 'A "work" is—\n(1) a writing; and\n(2) a drawing.' in paragraphs
    # a repealed section keeps its heading and its note, and no text to cite
    repealed = chunks.filter(pl.col("ref").str.starts_with("§ 107"))
    assert set(repealed["chunk_level"]) <= {"note"}


@pytest.mark.parametrize(
    ("label", "levels"),
    [
        ("a", [SUBSECTION]),
        ("i", [SUBSECTION, CLAUSE]),
        ("ii", [CLAUSE, 5]),
        ("I", [SUBPARAGRAPH, SUBCLAUSE]),
        ("4A", [PARAGRAPH]),
        ("aa", [5]),
        ("AA", [6]),
    ],
)
def test_each_label_fits_the_levels_of_the_scheme(label, levels):
    assert candidates(label) == levels


def test_indentation_decides_between_two_readings():
    levels = Levels()
    for label, level in (("a", SUBSECTION), ("b", SUBSECTION), ("h", SUBSECTION)):
        levels.stack.clear()
        levels.push(level, label, "§ 1")
    levels.push(PARAGRAPH, "1", "§ 1", 1)
    levels.push(SUBPARAGRAPH, "A", "§ 1", 2)
    # "(i)" continues subsection (h) at the left margin, opens a clause indented under (A)
    assert levels.place("i", indent=0, chained=False) == SUBSECTION
    assert levels.place("i", indent=3, chained=False) == CLAUSE
    assert levels.place("i", indent=None, chained=True) == CLAUSE


# the real file -------------------------------------------------------------------------------
def test_us_code_html_agrees_with_its_uslm_xml():
    """17 U.S.C. from its XHTML rendering against the same title's USLM (an older release): on
    the units both hold, the same refs with the same first words, and every section heading."""
    from tests.pipeline.test_legal_xml import _built as built_xml

    html_documents, html_sections, html_chunks = _built(str(shared_file("realdocs", "usc17.htm")))
    _, xml_sections, xml_chunks = built_xml(str(shared_file("realdocs", "xml", "usc17.xml")))
    assert html_documents["title"][0] == "Title 17—Copyrights"
    html, xml = _units(html_chunks), _units(xml_chunks)
    both = set(html) & set(xml)
    assert len(both) >= 0.95 * len(xml)

    def opening(text: str) -> str:
        text = re.sub(r"[“”\"]", "", text).replace("’", "'")
        return " ".join(text.split())[:40].casefold()

    # What differs is the releases' own text (amendments since 2013) and fractions ("33⅓").
    agree = sum(opening(html[ref]) == opening(xml[ref]) for ref in both)
    print(f"usc17: {len(both)} units in both, {agree / len(both):.1%} open alike")
    assert agree >= 0.97 * len(both)
    xml_heads = set(xml_sections["section_number"].drop_nulls())
    html_heads = set(html_sections["section_number"].drop_nulls())
    assert {h for h in xml_heads if h.startswith("§")} <= html_heads
    # § 106A is its own section, and its subsections nest to the last level
    assert html["§ 106A(a)(1)(A)"] == "(A) to claim authorship of that work, and"
    assert html["§ 512(c)(1)(A)(i)"].startswith("(i) does not have actual knowledge")
    assert not any(re.search(r"\[\d+\]$", ref) for ref in html)


# the index -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def index(tmp_path_factory):
    from lexkb import Index
    from pipelines.in_process import run_build

    corpus = tmp_path_factory.mktemp("usc_corpus")
    (corpus / "usc99.htm").write_text(TITLE, encoding="utf-8")
    root = tmp_path_factory.mktemp("usc_index") / "index"
    run_build([corpus], root, embedder="none")
    return Index.open(root)


@pytest.mark.parametrize(
    ("asked", "match", "ref"),
    [
        # upper-case labels are read to the last level, never dropped from the reference
        ("§ 106A(a)(1)(A)", "exact", "§ 106A(a)(1)(A)"),
        ("99 U.S.C. 106A(j)(1)(A)(ii)(II)", "exact", "§ 106A(j)(1)(A)(ii)(II)"),
        ("Title 99 § 106A(c)(1)(B)(i)", "exact", "§ 106A(c)(1)(B)(i)"),
        # "(A)" of "(a)(1)(A)" is its own label: one "a" in the address cannot read both
        ("§ 106A(a)(2)(A)", "enclosing", "§ 106A(a)(2)"),
        # a struck subsection is no point inside its section, though clauses print "(i)"
        ("§ 106A(i)", "enclosing", "§ 106A"),
    ],
)
def test_get_reads_us_code_references_to_the_last_level(index, asked, match, ref):
    found = index.get(asked)
    assert (found.match, found.hit.ref if found.hit else None) == (match, ref)


def test_the_title_is_found_by_the_names_it_is_cited_by(index):
    for name in ("99 U.S.C.", "Title 99", "Test Matters"):
        assert index.document_paragraphs(name)
