"""Titles as people name documents, by family rules: a standard with its designation ("IFRS S2
Climate-related Disclosures"), a contract by its name and never by the notice over it, no
template blank in a title, an EU act's title block to the end of its subject line however its
lines are set, a US Code title by its heading and found as "4 U.S.C." and "Title 4, United
States Code". Documents of each family are written here in the layouts that went wrong, built
for real, and asked for by the names people use. The US Code title's editorial footnotes are
notes, never words of the statute.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from lexkb.core.text.refs import cited_names, title_code
from transforms.structure.contracts import contract_title
from transforms.structure.titles import (
    continues_eu_title,
    is_contact,
    is_notice,
    is_placeholder,
    named,
)

# Module fixtures that build: the tests taking them are in the build tier (tests/conftest.py).
BUILDING_FIXTURES = {"built"}

SIZE = 10
LEFT = 70.0
PITCH = 14.0
NOTICE = 'PLEASE READ THIS ACME SOFTWARE AS A SERVICE (SAAS) AGREEMENT ("TERMS") CAREFULLY BEFORE'
CBAM = (
    "REGULATION (EU) 2023/956 OF THE EUROPEAN PARLIAMENT AND OF THE COUNCIL of 10 May 2023 "
    "establishing a carbon border adjustment mechanism"
)
USC4_TITLE = "Title 4—Flag and Seal, Seat of Government, and the States"
USLM_NS = "http://xml.house.gov/schemas/uslm/1.0"


# rules ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("<Business Name>", None),
        ("[Company Name]", None),
        ("{{company_name}}", None),
        ("XXXX", None),
        ("<Business Name> Privacy Policy", "Privacy Policy"),
        ("[Company Name] - Acceptable Use Policy", "Acceptable Use Policy"),
        (NOTICE, None),
        ("BY CLICKING ACCEPT YOU AGREE TO THESE TERMS", None),
        # a title that only starts like a notice word is a title
        ("Notice of Privacy Practices", "Notice of Privacy Practices"),
        ("Anti-Money Laundering (AML) Policy", "Anti-Money Laundering (AML) Policy"),
        ("Regulation (EU) 2016/679", "Regulation (EU) 2016/679"),
        # a letterhead's contact line is no title
        ("925 West Georgia Street Suite 1820 Vancouver Canada Facsimile: 604-632-1730", None),
        ("Acme Corp, 1 Main St, Springfield (555) 123-4567", None),
    ],
)
def test_a_notice_or_a_blank_is_never_a_title_nor_part_of_one(text, title):
    assert named(text) == title
    assert is_placeholder(text) == (title is None and not is_notice(text) and not is_contact(text))


@pytest.mark.parametrize(
    ("lines", "title"),
    [
        # the notice names the agreement: its name is the title, the notice is not
        ([NOTICE, "USING THE SERVICES OFFERED BY ACME CLOUD, INC."], "ACME SOFTWARE AS A SERVICE (SAAS) AGREEMENT"),
        (["PLEASE READ THIS ACME SOFTWARE AS A", "SERVICE AGREEMENT CAREFULLY.", "1. FEES"], "ACME SOFTWARE AS A SERVICE AGREEMENT"),
        # a name line set in heading case, minor words and an acronym in it, wins over a notice
        (["Acme Software as a Service (SaaS) Agreement", NOTICE], "Acme Software as a Service (SaaS) Agreement"),
        (["<Company Name>", "[Company Name] Master Services Agreement"], "Master Services Agreement"),
        (["EXHIBIT 10.1", "AGENCY AGREEMENT"], "AGENCY AGREEMENT"),
        # a filing's exhibit label before the name, its date after it; the sentence making it
        (["Exhibit 10.4 Split-Dollar Endorsement Agreement"], "Split-Dollar Endorsement Agreement"),
        (["AFFILIATE AGREEMENT DATED JULY 15, 2005"], "AFFILIATE AGREEMENT"),
        (["THIS NON-DISCLOSURE AGREEMENT is made on the 1st day of May"], "NON-DISCLOSURE AGREEMENT"),
        (["Exhibit 10.1", "This Agreement is made by and between A and B."], None),
        # a letterhead above; the name defines its own short form after it
        (["925 West Georgia Street Suite 1820 Facsimile: 604-632-1730", 'PROMOTION AGREEMENT (the "Agreement")'], "PROMOTION AGREEMENT"),
        # a numbered clause heading is no name of the whole; "this Agreement" names none
        (["2. LICENSE RESTRICTIONS", "This Agreement is made by and between A and B."], None),
    ],
)  # fmt: skip
def test_a_contract_is_titled_by_its_name(lines, title):
    assert contract_title(lines) == title


@pytest.mark.parametrize(
    ("title", "line", "goes_on"),
    [
        ("REGULATION (EU) 2023/956 OF THE EUROPEAN PARLIAMENT AND", "OF THE COUNCIL", True),
        ("REGULATION (EU) 2023/956 OF THE EUROPEAN PARLIAMENT AND OF THE COUNCIL", "of 10 May 2023", True),
        ("REGULATION (EU) 2023/956 OF THE EUROPEAN PARLIAMENT AND OF THE COUNCIL", "of 10 May 2023 establishing a mechanism", True),
        ("REGULATION (EU) 2023/956 OF THE EUROPEAN PARLIAMENT AND OF THE COUNCIL", "establishing a mechanism", False),
        (CBAM[:87], "establishing a carbon border adjustment mechanism", True),
        (CBAM, "and amending Regulation (EU) No 952/2013 (CBAM Regulation)", True),
        (CBAM, "(Text with EEA relevance)", False),
        (CBAM, "THE EUROPEAN PARLIAMENT AND THE COUNCIL OF THE EUROPEAN UNION,", False),
        (CBAM, "Having regard to the Treaty on the Functioning of the European Union,", False),
        ("Commission Implementing Regulation (EU) 2023/1773", "of 17 August 2023", True),
        # printed in title case, the designation wrapped before its day
        ("Regulation (EU) 2016/679 of the European", "Parliament and of the Council of 27 April 2016", True),
        ("REGULATION (EU) 2023/956", "THE EUROPEAN PARLIAMENT AND THE COUNCIL OF THE EUROPEAN UNION,", False),
        ("Bribery Act 2010", "of 10 May 2023", False),
    ],
)  # fmt: skip
def test_an_eu_title_block_runs_to_the_end_of_its_subject(title, line, goes_on):
    assert continues_eu_title(title, line) is goes_on


@pytest.mark.parametrize(
    ("key", "title", "names"),
    [
        ("x", USC4_TITLE, {"4 U.S.C.", "Title 4", "Title 4, United States Code"}),
        ("usc42", None, {"42 U.S.C.", "Title 42, United States Code"}),
        ("x", "Regulation (EU) 2024/1689 of the European Parliament and of the Council of 13 June 2024 laying down harmonised rules on artificial intelligence (Artificial Intelligence Act)", {"AI Act", "EU AI Act", "EU Artificial Intelligence Act"}),
    ],
)  # fmt: skip
def test_family_names(key, title, names):
    assert names <= set(cited_names(key, title))


def test_a_sustainability_standard_has_its_code():
    assert title_code("IFRS S2 Climate-related Disclosures") == ("IFRS", "S2")
    assert title_code("IFRS 16 Leases") == ("IFRS", "16")


# documents -----------------------------------------------------------------------------------
def _text(pdf, x: float, y: float, text: str, size: float = SIZE, style: str = "") -> None:
    pdf.set_font("helvetica", style=style, size=size)
    pdf.text(x, y, text)


def _centred(pdf, y: float, text: str, size: float = SIZE, style: str = "") -> None:
    pdf.set_font("helvetica", style=style, size=size)
    pdf.text((595 - pdf.get_string_width(text)) / 2, y, text)


def _pdf():
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="A4")
    pdf.set_auto_page_break(False)
    return pdf


def saas_pdf(path: Path) -> Path:
    """Terms that open with a notice in capitals naming the agreement, no title line."""
    pdf = _pdf()
    pdf.add_page()
    lines = [
        NOTICE,
        "USING THE SERVICES OFFERED BY ACME CLOUD, INC. BY USING THE SERVICES YOU AGREE TO BE",
        "BOUND BY THESE TERMS.",
        "",
        "This Agreement is entered into by and between Acme Cloud, Inc. and the Customer.",
        "",
        "1. DEFINITIONS",
        '1.1 "Services" means the hosted software Acme Cloud, Inc. makes available online.',
        "2. LICENSE RESTRICTIONS",
        "2.1 The Customer shall not copy, resell or reverse engineer the Services.",
        "3. FEES",
        "3.1 The Customer shall pay every invoice within thirty days of its date.",
    ]
    for index, line in enumerate(lines):
        _text(pdf, LEFT, 80 + index * PITCH, line, size=8 if index < 3 else SIZE)
    pdf.output(str(path))
    return path


def standard_pdf(path: Path, cover: list[tuple[str, float]], code: str) -> Path:
    """A sustainability standard: its cover lines (text, size), then pages whose running head is
    its designation, paragraphs numbered in the margin."""
    pdf = _pdf()
    pdf.add_page()
    y = 90.0
    for text, size in cover:
        _text(pdf, 110, y, text, size=size)
        y += size * 1.6
    _text(
        pdf, 110, y + 30, "The Board issued this Standard in June 2023 for general purpose reports."
    )
    for page in range(2):
        pdf.add_page()
        _text(pdf, 400, 40, code, size=9)
        for index in range(2):
            number = page * 2 + index + 1
            y = 110.0 + index * 3 * PITCH
            _text(pdf, 110, y, f"An entity shall disclose information number {number} about risks.")
            _text(pdf, 110, y + PITCH, "and the text of the paragraph runs on here.")
            _text(pdf, 60, y, str(number))
    pdf.output(str(path))
    return path


def eu_pdf(path: Path) -> Path:
    """The Official Journal's title block set in two fonts: the designation in bold, the date
    and subject plain, in one layout paragraph."""
    pdf = _pdf()
    pdf.add_page()
    _centred(
        pdf, 90, "REGULATION (EU) 2023/956 OF THE EUROPEAN PARLIAMENT AND OF THE COUNCIL", style="B"
    )
    _centred(pdf, 104, "of 10 May 2023")
    _centred(pdf, 118, "establishing a carbon border adjustment mechanism")
    _centred(pdf, 140, "(Text with EEA relevance)")
    body = [
        "THE EUROPEAN PARLIAMENT AND THE COUNCIL OF THE EUROPEAN UNION,",
        "Having regard to the Treaty on the Functioning of the European Union,",
        "Whereas:",
        "(1) Emissions embedded in imported goods should be priced.",
        "HAVE ADOPTED THIS REGULATION:",
        "Article 1",
        "Subject matter",
        "This Regulation establishes a carbon border adjustment mechanism.",
        "Article 2",
        "Scope",
        "This Regulation applies to goods listed in Annex I.",
    ]
    for index, line in enumerate(body):
        _text(pdf, LEFT, 170 + index * 1.8 * PITCH, line)
    pdf.output(str(path))
    return path


EU_HTML = """<html><body>
<p class="doc-ti">REGULATION (EU) 2023/956 OF THE EUROPEAN PARLIAMENT AND OF THE COUNCIL</p>
<p class="doc-ti">of 10 May 2023</p>
<p class="doc-ti">establishing a carbon border adjustment mechanism</p>
<p class="doc-ti">(Text with EEA relevance)</p>
<p class="normal">THE EUROPEAN PARLIAMENT AND THE COUNCIL OF THE EUROPEAN UNION,</p>
<p class="normal">Having regard to the Treaty on the Functioning of the European Union,</p>
<p class="normal">Whereas:</p>
<p class="normal">(1) Emissions embedded in imported goods should be priced.</p>
<p class="normal">HAVE ADOPTED THIS REGULATION:</p>
<p class="ti-art">Article 1</p><p class="sti-art">Subject matter</p>
<p class="normal">This Regulation establishes a carbon border adjustment mechanism.</p>
<p class="ti-art">Article 2</p><p class="sti-art">Scope</p>
<p class="normal">This Regulation applies to goods listed in Annex I.</p>
</body></html>"""

USC4 = f"""<?xml version="1.0" encoding="UTF-8"?>
<uscDoc xmlns="{USLM_NS}" identifier="/us/usc/t4"><main>
<title identifier="/us/usc/t4"><num value="4">Title 4—</num>
<heading>FLAG AND SEAL, SEAT OF GOVERNMENT, AND THE STATES</heading>
<chapter identifier="/us/usc/t4/ch1"><num value="1">CHAPTER 1—</num><heading>THE FLAG</heading>
<section identifier="/us/usc/t4/s1"><num value="1">§ 1.</num><heading> Flag; stripes and stars on</heading>
<content>The flag of the United States shall be thirteen horizontal stripes, alternate red and
white.</content><sourceCredit>(July 30, 1947, ch. 389, 61 Stat. 642.)</sourceCredit></section>
<section identifier="/us/usc/t4/s8"><num value="8">§ 8.</num><heading> Respect for flag</heading>
<chapeau>No disrespect should be shown to the flag of the United States of America—</chapeau>
<subsection identifier="/us/usc/t4/s8/a"><num value="a">(a)</num><content> The flag should never
be displayed with the union down, except as a signal of dire distress.</content></subsection>
<subsection identifier="/us/usc/t4/s8/b"><num value="b">(b)</num><heading> Carrying<ref
class="footnoteRef" idref="fn1">1</ref><note type="footnote" id="fn1"><num>1</num> So in original.
Probably should be “Carriage”.</note>.—</heading><content>The flag should never touch anything
beneath it, such as the ground or<ref class="footnoteRef" idref="fn2">2</ref><note type="footnote"
id="fn2"><num>2</num> So in original. Probably should be followed by “the”.</note> floor.</content>
</subsection></section></chapter>
<chapter identifier="/us/usc/t4/ch4"><num value="4">CHAPTER 4—</num><heading>THE STATES</heading>
<section identifier="/us/usc/t4/s110"><num value="110">§ 110.</num><heading> Definitions</heading>
<subsection identifier="/us/usc/t4/s110/a"><num value="a">(a)</num><content> The term “person”
shall have the meaning assigned to it in section 7701(a)(1)<ref class="footnoteRef"
idref="fn3">3</ref> of title 26.</content><footnote id="fn3"><sup>3</sup><p>See References in
Text note below.</p></footnote></subsection>
</section></chapter></title></main></uscDoc>"""

TEMPLATE = [
    ("<Business Name>", "Title"),
    ("Information Security Policy", "Heading 1"),
    ("1. Purpose", "Heading 2"),
    ("This policy sets out how <Business Name> protects the information it holds.", "Normal"),
    ("2. Scope", "Heading 2"),
    ("This policy applies to every employee and contractor of <Business Name>.", "Normal"),
]


def template_docx(path: Path) -> Path:
    """A policy template whose first line is the business's name left blank."""
    from docx import Document

    document = Document()
    for text, style in TEMPLATE:
        document.add_paragraph(text, style=style)
    document.save(str(path))
    return path


def write_documents(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cbam-eurlex.html").write_text(EU_HTML, encoding="utf-8")
    (folder / "usc04.xml").write_text(USC4, encoding="utf-8")
    s2_cover = [("IFRS S2", 11), ("Climate-related Disclosures", 18), ("June 2023", 10)]
    return {
        "saas": saas_pdf(folder / "acme-saas.pdf"),
        "template": template_docx(folder / "security-policy-template.docx"),
        "s2": standard_pdf(folder / "ifrs-s2.pdf", s2_cover, "IFRS S2"),
        "eu_pdf": eu_pdf(folder / "cbam-oj.pdf"),
        "eu_html": folder / "cbam-eurlex.html",
        "usc": folder / "usc04.xml",
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from lexkb import Index
    from pipelines.in_process import run_build

    folder = tmp_path_factory.mktemp("titles")
    write_documents(folder / "docs")
    run_build([folder / "docs"], folder / "root", embedder="none")
    return Index.open(folder / "root")


def test_each_document_is_titled_as_its_readers_name_it(built):
    titles = {d["document_key"]: d["title"] for d in built.documents()}
    assert titles == {
        "acme-saas": "ACME SOFTWARE AS A SERVICE (SAAS) AGREEMENT",
        "security-policy-template": "Information Security Policy",
        "ifrs-s2": "IFRS S2 Climate-related Disclosures",
        "cbam-oj": CBAM,
        "cbam-eurlex": CBAM,
        "usc04": USC4_TITLE,
    }


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("4 U.S.C.", "usc04"),
        ("Title 4, United States Code", "usc04"),
        ("Title 4", "usc04"),
        ("IFRS S2", "ifrs-s2"),
        ("SaaS Agreement", "acme-saas"),
    ],
)
def test_documents_are_found_by_the_names_people_use(built, name, key):
    document, _ = built.document_paragraphs(name)
    assert document["document_key"] == key


def test_the_template_blank_is_no_text_of_the_policy(built):
    _, paragraphs = built.document_paragraphs("security-policy-template")
    assert not any(text.strip() == "<Business Name>" for text in paragraphs["content"])


def test_us_code_footnotes_are_notes_not_statute(built):
    found = built.get("4 U.S.C. 8(b)")
    assert found.match == "exact", found.reason
    assert found.hit.text.endswith(
        "(b) Carrying.—The flag should never touch anything beneath it, such as the ground or floor."
    )
    assert built.get("4 U.S.C. 110(a)").hit.text.endswith("in section 7701(a)(1) of title 26.")
    _, chunks = built.document_paragraphs("usc04", levels=("paragraph", "note"))
    statute = chunks.filter(pl.col("chunk_level") == "paragraph")["content"]
    assert not any("So in original" in text or "References in Text" in text for text in statute)
    notes = chunks.filter(pl.col("chunk_level") == "note")
    by_ref = dict(zip(notes["content"], notes["ref"], strict=True))
    assert by_ref["So in original. Probably should be “Carriage”."] == "§ 8(b)"
    assert by_ref["So in original. Probably should be followed by “the”."] == "§ 8(b)"
    assert by_ref["See References in Text note below."] == "§ 110(a)"


def test_a_standard_whose_cover_prints_date_and_series_first(tmp_path):
    """IFRS S1's cover: the date and the series over the designation, the name in two lines."""
    from transforms.reading.elements import document_elements
    from transforms.reading.source_files import discover
    from transforms.structure import structure_document

    cover = [
        ("June 2023", 10),
        ("IFRS® Sustainability Disclosure Standard", 12),
        ("IFRS S1", 20),
        ("General Requirements for Disclosure of", 18),
        ("Sustainability-related Financial Information", 18),
    ]
    source = discover([standard_pdf(tmp_path / "ifrs-s1.pdf", cover, "IFRS S1")])[0]
    documents, _, _ = structure_document(source, document_elements(source))
    assert documents["title"][0] == (
        "IFRS S1 General Requirements for Disclosure of Sustainability-related Financial Information"
    )


def test_a_title_under_a_notice_is_the_title_and_the_notice_stays_text(tmp_path):
    """Terms of use (no contract by their words) that print a notice over their name."""
    from transforms.reading.elements import document_elements
    from transforms.reading.source_files import discover
    from transforms.structure import structure_document

    path = tmp_path / "terms.html"
    path.write_text(
        "<html><body><p>PLEASE READ THESE TERMS OF USE CAREFULLY BEFORE USING THIS WEBSITE</p>"
        "<h1>Acme Website Terms of Use</h1><h2>1. Use of the website</h2>"
        "<p>You may use the website for lawful purposes only.</p></body></html>",
        encoding="utf-8",
    )
    source = discover([path])[0]
    documents, _, chunks = structure_document(source, document_elements(source))
    assert documents["title"][0] == "Acme Website Terms of Use"
    assert any(text.startswith("PLEASE READ THESE TERMS") for text in chunks["content"])
