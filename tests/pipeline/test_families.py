"""Families of legal document read as their publishers lay out a page: the EU Official Journal
(running heads, footnotes, definitions across a page break, quoted amending text) and
standards (paragraph numbers in the margin). Synthetic PDFs made here with fpdf2, laid out as
each family lays out its pages, and checks on the real documents that skip without them."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.conftest import shared_file
from transforms.reading.elements import pdf_elements
from transforms.reading.file_limits import ParseLimits
from transforms.reading.source_files import SourceFile
from transforms.structure import structure_document

SIZE = 10
LEFT = 70.0
PITCH = 14.0


def _structure(path: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    source = SourceFile(key=path.name, path=path, format="pdf", sha256="0", size=1)
    documents, _, chunks = structure_document(source, pdf_elements(source, ParseLimits()))
    return documents, chunks


def _text(pdf, x: float, y: float, text: str, size: float = SIZE) -> float:
    """Write `text` with its baseline at y; returns where it ends."""
    pdf.set_font("helvetica", size=size)
    pdf.text(x, y, text)
    return x + pdf.get_string_width(text)


def _called(pdf, y: float, text: str, number: int, after: str = "") -> None:
    """A line with a footnote call-out as the Official Journal sets it: "(" superscript ")"."""
    x = _text(pdf, LEFT, y, f"{text} (")
    x = _text(pdf, x, y - 3.5, str(number), size=6)
    _text(pdf, x, y, f"){after}")


def _oj_page(pdf, page: int, lines: list[str], notes: dict[int, str], calls: dict[int, int]):
    """One page of the Official Journal: the running head at the top edge (date and page
    reference swapping sides), paragraphs apart, "Article n" and its title centred (the title
    in bold), a line starting "+" running on from the line before, and footnotes at the foot."""
    pdf.add_page()
    y = 90.0
    for index, line in enumerate(lines):
        text = line.lstrip("+")
        y += PITCH if line.startswith("+") or index == 0 else 1.8 * PITCH
        if index in calls:
            _called(pdf, y, text, calls[index], ",")
        elif text.startswith("Article ") or (index and lines[index - 1].startswith("Article ")):
            bold = not text.startswith("Article ")
            pdf.set_font("helvetica", style="B" if bold else "", size=SIZE)
            pdf.text((595 - pdf.get_string_width(text)) / 2, y, text)
        else:
            _text(pdf, LEFT, y, text)
    y = 760.0
    for number, note in notes.items():
        x = _text(pdf, LEFT, y, "(", size=8)
        x = _text(pdf, x, y - 3, str(number), size=5)
        _text(pdf, x, y, f") {note}", size=8)
        y += 11
    head = f"L 333/{page} EN Official Journal of the European Union 27.12.2022"
    if page % 2:
        head = f"27.12.2022 EN Official Journal of the European Union L 333/{page}"
    _text(pdf, 40, 40, head, size=9)


@pytest.fixture(scope="module")
def oj_tables(tmp_path_factory) -> tuple[pl.DataFrame, pl.DataFrame]:
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="A4")
    pdf.core_fonts_encoding = "windows-1252"  # the Journal's quotes ‘ ’
    pdf.set_auto_page_break(False)
    first = [
        "I",
        "(Legislative acts)",
        "REGULATIONS",
        "REGULATION (EU) 2030/1 OF THE EUROPEAN PARLIAMENT AND OF THE COUNCIL",
        "+of 1 March 2030 on the resilience of widgets",
        "Having regard to the opinion of the European Central Bank",
        "Whereas:",
        "(1) Widgets should be resilient.",
        "HAVE ADOPTED THIS REGULATION:",
        "Article 1",
        "Subject matter",
        "This Regulation lays down rules on widgets.",
        "Article 2",
        "Definitions",
        "For the purposes of this Regulation, the following definitions shall apply:",
        "(1) ‘widget’ means a device that resists failure;",
        "(2) ‘provider’ means an undertaking that sells widgets as defined in",
    ]
    _oj_page(pdf, 1, first, {1: "OJ C 1, 1.1.2030, p. 1."}, {5: 1})
    second = [
        "Article 3 of Directive (EU) 2029/9;",
        "(3) ‘failure’ means the loss of a function of a widget.",
        "Article 3",
        "Amendments to Regulation (EU) 2029/8",
        "Regulation (EU) 2029/8 is amended as follows:",
        "(1) Article 2 is replaced by the following:",
        "‘Article 2",
        "+1. Providers shall keep widgets safe.’.",
        "Article 4",
        "Entry into force",
        "This Regulation shall enter into force on the day after its publication.",
    ]
    _oj_page(pdf, 2, second, {2: "Directive (EU) 2029/9 (OJ L 9, 9.9.2029, p. 9)."}, {1: 2})
    for page in range(3, 5):
        _oj_page(pdf, page, [f"Annex text of page {page} continues the widgets."], {}, {})
    path = tmp_path_factory.mktemp("oj") / "oj.pdf"
    pdf.output(str(path))
    return _structure(path)


def _units(chunks: pl.DataFrame) -> dict[str, str]:
    rows = chunks.filter(pl.col("chunk_level") == "paragraph")
    return dict(zip(rows["ref"].to_list(), rows["content"].to_list(), strict=True))


def test_oj_running_heads_are_furniture_on_every_page(oj_tables):
    _, chunks = oj_tables
    for text in chunks["content"].to_list():
        assert "Official Journal of the European Union L" not in text
        assert "27.12.2022" not in text
    assert not any(ref.startswith("27.12.2022") for ref in chunks["ref"].to_list())


def test_oj_definition_continued_over_the_page_break_stays_its_point(oj_tables):
    """Points are found inside the paragraph that holds them ("Article 2(2)" resolves to
    Article 2's text, `contains`): the page break must not cut (2) off from its end."""
    units = _units(oj_tables[1])
    text = " ".join(units["Article 2"].split())
    assert "(2) ‘provider’ means an undertaking that sells widgets as defined in Article 3" in text
    assert "(3) ‘failure’ means the loss" in text
    assert not any(ref.startswith("p. 2") for ref in units)


def test_oj_footnotes_are_notes_of_the_unit_that_calls_them(oj_tables):
    _, chunks = oj_tables
    notes = chunks.filter(pl.col("chunk_level") == "note")
    by_ref = dict(zip(notes["content"].to_list(), notes["ref"].to_list(), strict=True))
    assert by_ref.get("(2) Directive (EU) 2029/9 (OJ L 9, 9.9.2029, p. 9).") == "Article 2"
    assert "(1) OJ C 1, 1.1.2030, p. 1." in by_ref
    units = _units(chunks)
    assert not any("OJ L 9" in text or "OJ C 1," in text for text in units.values())
    assert not any("²" in text or "¹" in text for text in units.values())
    assert "European Central Bank," in " ".join(units.values())


def test_oj_quoted_amending_text_is_no_unit_of_the_quoting_act(oj_tables):
    units = _units(oj_tables[1])
    assert "Article 3(1)" not in units
    assert "1. Providers shall keep widgets safe.’." in units["Article 3"]
    assert units["Article 4"].startswith("This Regulation shall enter into force")


def test_oj_title_is_the_act_not_the_journal_series(oj_tables):
    documents, _ = oj_tables
    assert documents["title"][0].startswith("REGULATION (EU) 2030/1 OF THE EUROPEAN PARLIAMENT")


def test_oj_annex_tables_are_text_of_their_annex(tmp_path):
    """A correlation table's rows ("Article 2 | Article 2", "— | Article 3") and a list of
    goods by code are an annex's text: no article of the act opens inside an annex, and no
    table cell is a unit of its own."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="A4")
    pdf.core_fonts_encoding = "windows-1252"
    pdf.set_auto_page_break(False)
    first = [
        "REGULATION (EU) 2030/2 OF THE EUROPEAN PARLIAMENT AND OF THE COUNCIL",
        "HAVE ADOPTED THIS REGULATION:",
        "Article 1",
        "Scope",
        "This Regulation applies to the goods listed in Annex I.",
        "Article 2",
        "Repeal",
        "Directive 2020/9 is repealed; references to it are read as in Annex II.",
    ]
    _oj_page(pdf, 1, first, {}, {})
    annex = [
        ("ANNEX I", ""),
        ("List of goods and greenhouse gases", ""),
        ("2523 10 00 — Cement clinkers", "Carbon dioxide"),
        ("7601 — Unwrought aluminium", "Perfluorocarbons"),
        ("ANNEX II", ""),
        ("Correlation table", ""),
        ("Directive 2020/9", "This Regulation"),
        ("Article 2", "Article 2"),
        ("—", "Article 3"),
    ]
    pdf.add_page()
    _text(pdf, 40, 40, "L 333/2 EN Official Journal of the European Union 27.12.2022", size=9)
    y = 90.0
    for left, right in annex:
        y += 1.8 * PITCH
        _text(pdf, LEFT, y, left)
        if right:
            _text(pdf, 360, y, right)
    for page in (3, 4):
        _oj_page(pdf, page, [f"Annex text of page {page} continues."], {}, {})
    path = tmp_path / "oj-annex.pdf"
    pdf.output(str(path))
    units = _units(_structure(path)[1])
    assert [ref for ref in units if ref.startswith("Article")] == ["Article 1", "Article 2"]
    assert "Directive 2020/9 is repealed" in units["Article 2"]
    assert "— Article 3" in units["Annex II"] and "Carbon dioxide" in units["Annex I"]
    assert not any(text.strip() in ("Carbon dioxide", "— Article 3") for text in units.values())


@pytest.fixture(scope="module")
def standard_tables(tmp_path_factory) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A standard as its publisher prints it: its designation as running head and over its
    name, a contents page, paragraphs numbered in the margin (the margin written after the
    text, as PDFium reads it), and a heading wrapped onto a second line."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="A4")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    _text(pdf, 110, 70, "IFRS 99", size=11)
    _text(pdf, 110, 95, "Widgets", size=18)
    _text(pdf, 110, 130, "In 2030 the Board issued this Standard on the accounting for widgets.")
    pdf.add_page()
    _text(pdf, 400, 40, "IFRS 99", size=9)
    _text(pdf, 110, 90, "CONTENTS", size=13)
    for index, entry in enumerate(("OBJECTIVE 1", "SCOPE 3", "RECOGNITION 46A", "APPENDIX B1")):
        _text(pdf, 110, 130 + index * PITCH, entry, size=8)
    pages = [
        [
            ("1", "The objective of this Standard is to set out principles for widgets."),
            ("2", "An entity shall apply this Standard to all widgets it holds today."),
            ("46A", "As a practical expedient, an entity may elect not to assess them."),
        ],
        [
            ("B1", "This appendix is an integral part of the Standard for all widgets."),
            ("B2", "An entity shall consider all relevant facts and circumstances here."),
        ],
    ]
    for number, paragraphs in enumerate(pages, start=1):
        pdf.add_page()
        _text(pdf, 400, 40, "IFRS 99", size=9)
        y = 110.0
        if number == 2:
            pdf.set_font("helvetica", style="B", size=SIZE)
            pdf.text(110, y, "Widgets held before the date of initial")
            pdf.text(110, y + PITCH, "application")
            y += 3 * PITCH
        top = y
        for _, text in paragraphs:
            _text(pdf, 110, y, text)
            _text(pdf, 110, y + PITCH, "and the text of the paragraph runs on here.")
            y += 3 * PITCH
        y = top
        for label, _ in paragraphs:
            _text(pdf, 60, y, label)
            y += 3 * PITCH
        _text(pdf, 250, 800, f"© Foundation A{number}", size=9)
    path = tmp_path_factory.mktemp("standard") / "standard.pdf"
    pdf.output(str(path))
    return _structure(path)


def test_standard_margin_numbers_are_the_paragraph_refs(standard_tables):
    units = _units(standard_tables[1])
    for ref, words in (("1", "The objective"), ("46A", "As a practical"), ("B2", "An entity")):
        assert units[ref].startswith(words)
    assert units["2"].endswith("runs on here.")
    assert not any(len(text) < 15 for text in units.values())


def test_standard_contents_page_and_wrapped_heading_are_no_units(standard_tables):
    _, chunks = standard_tables
    units = _units(chunks)
    assert not any("OBJECTIVE" in text or "RECOGNITION 46A" in text for text in units.values())
    headings = chunks.filter(pl.col("chunk_level") == "section")["heading"].to_list()
    assert "Widgets held before the date of initial application" in headings


def test_standard_title_carries_its_designation(standard_tables):
    documents, _ = standard_tables
    assert documents["title"][0] == "IFRS 99 Widgets"


@pytest.mark.build
def test_real_eu_regulation_from_the_official_journal():
    documents, chunks = _structure(shared_file("realdocs", "CELEX_32022R2554_EN_TXT.pdf"))
    units = _units(chunks)
    assert documents["title"][0].startswith("REGULATION (EU) 2022/2554 OF THE EUROPEAN")
    assert "(19) ‘ICT third-party service provider’ means" in units["Article 3"]
    assert "(65)" in units["Article 3"]
    assert not any((ref or "").startswith("27.12.2022") for ref in units)
    assert not any("Official Journal of the European Union L" in t for t in units.values())
    notes = chunks.filter(pl.col("chunk_level") == "note")["content"].to_list()
    assert len(notes) >= 30 and not any(note in " ".join(units.values()) for note in notes)
    assert "Article 60(2)" not in units or "Article 34" in units["Article 60(2)"]


def test_real_accounting_standard_margin_numbers():
    """Refs only: the standard's text must not be written into the repository."""
    documents, chunks = _structure(shared_file("realdocs", "ifrs-16-leases.pdf"))
    units = _units(chunks)
    assert documents["title"][0] == "IFRS 16 Leases"
    expected = {str(n) for n in range(1, 107)} | {"46A", "46B", "60A", "C1A", "C20D"}
    expected |= {f"B{n}" for n in range(1, 59)} | {f"C{n}" for n in range(1, 22)}
    assert len(expected - set(units)) <= 6
    assert not any(ref in units for ref in ("107", "B59", "46C"))


@pytest.fixture(scope="module")
def act_tables(tmp_path_factory) -> tuple[pl.DataFrame, pl.DataFrame]:
    """An Act as legislation.gov.uk prints it: a contents page, the enacting words, sections
    headed by their bare number with numbered subsections, and a running head with the page
    number. Its drop cap is checked on the real Act: PDFium orders a synthetic one its own
    way."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="A4")
    pdf.core_fonts_encoding = "windows-1252"
    pdf.set_auto_page_break(False)
    pdf.add_page()
    _text(pdf, 220, 90, "Widgets Act 2030", size=18)
    _text(pdf, 250, 130, "CONTENTS", size=11)
    for index, entry in enumerate(("1 Duty to keep widgets", "2 Offences etc.", "3 Short title")):
        _text(pdf, 110, 160 + index * PITCH, entry)
    sections = [
        (
            "1 Duty to keep widgets",
            [
                "(1) A person must keep each widget safe.",
                "(2) The duty in subsection (1) applies to every widget.",
            ],
        ),
        (
            "2 Offences etc.",
            [
                "(1) A person who breaks a widget commits an offence.",
                "(2) A person guilty of an offence is liable to a fine.",
            ],
        ),
        ("3 Short title", ["This Act may be cited as the Widgets Act 2030."]),
    ]
    for page, (heading, subsections) in enumerate(sections, start=2):
        pdf.add_page()
        y = 110.0
        if page == 2:
            _text(pdf, 240, 70, "2030 CHAPTER 1", size=12)
            _text(pdf, 70, 95, "An Act about widgets; and for connected purposes.")
            _text(pdf, 70, y, "BE IT ENACTED by the Parliament, with the consent of")
            _text(pdf, 70, y + PITCH, "the Lords and Commons, as follows:—")
            y += 3 * PITCH
        else:
            _text(pdf, 60, 40, f"{page} Widgets Act 2030 (c. 1)", size=9)
        pdf.set_font("helvetica", style="B", size=SIZE)
        pdf.text(70, y, heading)
        for line in subsections:
            y += 1.8 * PITCH
            _text(pdf, 80, y, line)
    pdf.add_page()
    _text(pdf, 60, 40, "5 Widgets Act 2030 (c. 1)", size=9)
    schedule = [
        "SCHEDULES",
        "SCHEDULE 1 Section 3",
        "CONSEQUENTIAL AMENDMENTS",
        "Gadgets Act 1999 (c. 4)",
        "1 In section 2 of the Gadgets Act 1999 for “gadget” substitute “widget”.",
        "2 (1) Section 5 of that Act is amended as follows.",
        "(2) In subsection (1) for the words referred to in subsection",
        "(2)(a), and in paragraph (b) omit “old”.",
        "SCHEDULE 2 Section 3",
        "REPEALS",
        "Short title and chapter Extent of repeal",
        "Section 22",
        "The whole section.",
    ]
    for index, line in enumerate(schedule):
        _text(pdf, 80 if line.startswith("(2)(a)") else 70, 90 + index * 1.8 * PITCH, line)
    path = tmp_path_factory.mktemp("act") / "act.pdf"
    pdf.output(str(path))
    return _structure(path)


def test_act_schedules_cite_their_paragraphs(act_tables):
    documents, chunks = act_tables
    units = _units(chunks)
    # a cross-heading heads the paragraph under it; a paragraph with sub-paragraphs is theirs
    assert units["Schedule 1, paragraph 1"].splitlines() == [
        "Gadgets Act 1999 (c. 4)",
        "1 In section 2 of the Gadgets Act 1999 for “gadget” substitute “widget”.",
    ]
    assert units["Schedule 1, paragraph 2(1)"].startswith("(1) Section 5 of that Act")
    # a label that goes on with the citation the line before began opens nothing
    assert "(2)(a), and in paragraph (b)" in units["Schedule 1, paragraph 2(2)"]
    # a table of repeals: its "Section 22" is a cell, not a section of this Act
    sections = chunks.filter(pl.col("chunk_level") == "section")
    assert "Schedule 2" in sections["ref"].to_list()
    assert not any(ref.startswith("Section") for ref in chunks["ref"].drop_nulls())
    assert "Section 22" in sections.filter(pl.col("ref") == "Schedule 2")["content"][0]
    # the Act is also known by its year and chapter number
    assert documents["aliases"][0].to_list() == ["2030 c. 1"]


def test_act_sections_and_subsections_under_their_numbers(act_tables):
    units = _units(act_tables[1])
    assert units["1(2)"].startswith("(2) The duty in subsection (1)")
    assert units["2(1)"].startswith("(1) A person who breaks a widget")
    assert units["3"].startswith("This Act may be cited")


def test_act_contents_and_running_heads_are_furniture(act_tables):
    documents, chunks = act_tables
    units = _units(chunks)
    text = " ".join(units.values())
    assert "Widgets Act 2030 (c. 1)" not in text
    assert "BE IT ENACTED by the Parliament, with" in text  # kept as the Act's text
    assert text.count("Duty to keep widgets") == 0
    assert documents["title"][0] == "Widgets Act 2030"


def test_real_uk_act_from_legislation_gov_uk():
    documents, chunks = _structure(shared_file("realdocs", "asset_00100_ukpga_20100023_en.pdf"))
    units = _units(chunks)
    sections = set(chunks.filter(pl.col("chunk_level") == "section")["ref"].to_list())
    assert {str(n) for n in range(1, 21)} <= sections
    assert units["7(2)"].startswith("(2) But it is a defence for C to prove")
    assert units["Schedule 1, paragraph 13(2)"].startswith("(2) The existing words")
    # "... referred to in subsection" / "(2)(a), and" is one sentence of section 12(3)
    assert "subsection (2)(a), and" in " ".join(units["12(3)"].split())
    assert any(text.startswith("BE IT ENACTED") for text in units.values())
    assert not any("Bribery Act 2010 (c. 23)" in text for text in units.values())
    assert documents["title"][0] == "Bribery Act 2010"


def test_a_dotted_number_is_never_read_as_a_footnote_call_out():
    """Headings set in mixed sizes ("2.2 Separation of duties" in an IBM Redbook) raised the
    second number above the first: digits after a number's dot are never a call-out, digits
    after a word may be ("Ponemon Institute2")."""
    from transforms.reading.pdf_text import _INNER_DIGITS

    assert [m.group() for m in _INNER_DIGITS.finditer("2.2 Separation of duties 1.3.1")] == []
    assert [m.group() for m in _INNER_DIGITS.finditer("the Ponemon Institute2 revealed")] == ["2"]
