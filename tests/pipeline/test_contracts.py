"""Contracts: clause numbering, points, definitions, attachments and the preamble, from text and
PDF; and, when the reference data is present, real CUAD contracts from both."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import shared_file
from transforms.reading.elements import document_elements
from transforms.reading.source_files import discover
from transforms.structure import structure_document

# Module fixtures that build: the tests taking them are in the build tier (tests/conftest.py).
BUILDING_FIXTURES = {"agreement"}

AGREEMENT = """SERVICES AGREEMENT

This Services Agreement (the "Agreement") is made as of March 3, 2021 (the "Effective Date") by and between Northwind Traders Ltd., a Delaware corporation ("Supplier"), and Contoso Bank plc ("Customer").

WHEREAS, Customer wishes to obtain services from Supplier;

NOW, THEREFORE, the parties agree as follows:

ARTICLE I
DEFINITIONS

1.1 "Affiliate" means any entity that controls, is controlled by or is under common control with a party.

1.2 "Confidential Information" means all information disclosed by one party to the other.

ARTICLE II
SERVICES

2.1 Scope. Supplier shall perform the services described in Exhibit A.

2.2 Standards. Supplier shall:

(a) perform the services with reasonable care; and

(b) comply with all applicable laws.

2.3 Subcontracting. Supplier may not subcontract any part of the services.

(a) Approval. Customer may approve a subcontractor in writing.

(b) Liability. Supplier remains liable for every subcontractor.

(i) This applies to affiliates too.

(ii) It survives termination.

ARTICLE III
TERM

3.1 This Agreement starts on the Effective Date and continues for two (2) years.

Section 3.2 Either party may terminate this Agreement on ninety (90) days' written notice, as set out in Sections 2.1 and
2.3 above.

IN WITNESS WHEREOF, the parties have signed this Agreement.

EXHIBIT A
SERVICE DESCRIPTION

1. Supplier shall host the ledger platform.

2. Supplier shall answer support calls within four hours.
"""


@pytest.fixture(scope="module")
def agreement(tmp_path_factory):
    path = tmp_path_factory.mktemp("contract") / "services-agreement.txt"
    path.write_text(AGREEMENT, encoding="utf-8")
    source = discover([path])[0]
    return structure_document(source, document_elements(source))


def _paragraphs(chunks: pl.DataFrame) -> dict[str, str]:
    rows = chunks.filter(pl.col("chunk_level") == "paragraph").select("ref", "content").rows()
    return dict(rows)


def test_clauses_take_the_refs_a_lawyer_cites(agreement):
    _, sections, chunks = agreement
    paragraphs = _paragraphs(chunks)
    assert paragraphs["Section 2.1"].startswith("2.1 Scope.")
    assert paragraphs["Section 3.1"].startswith("3.1 This Agreement starts")
    # "Section 3.2 ... Sections 2.1 and / 2.3 above": a wrapped citation is not a new clause.
    assert "2.3 above" in paragraphs["Section 3.2"]
    assert "Section 2.3 above" not in paragraphs
    headings = dict(zip(sections["section_number"], sections["title"], strict=True))
    assert headings["Article I"] == "DEFINITIONS" and headings["Article III"] == "TERM"


def test_points_lead_ins_and_lists(agreement):
    _, _, chunks = agreement
    paragraphs = _paragraphs(chunks)
    # A lead-in ending "shall:" keeps its list: Section 2.2(a) is found inside Section 2.2.
    assert "(a) perform the services" in paragraphs["Section 2.2"]
    assert "(b) comply with all applicable laws" in paragraphs["Section 2.2"]
    # Points after a full sentence are clauses of their own, nested as written.
    assert paragraphs["Section 2.3(a)"].startswith("(a) Approval.")
    assert paragraphs["Section 2.3(b)"].startswith("(b) Liability.")
    assert "(i) This applies to affiliates too." in paragraphs["Section 2.3(b)"] or (
        paragraphs["Section 2.3(b)(i)"].startswith("(i) This applies")
    )


def test_definitions_attachments_and_unnumbered_text(agreement):
    _, _, chunks = agreement
    paragraphs = _paragraphs(chunks)
    assert paragraphs["Section 1.1"].startswith('1.1 "Affiliate" means')
    # The exhibit's own numbering is qualified by it, so it never collides with Section 1.
    assert paragraphs["Exhibit A Section 2"].endswith("within four hours.")
    # Unnumbered text is cut at its layout paragraphs and placed by position, never one blob.
    preamble = [ref for ref, text in paragraphs.items() if text.startswith(("WHEREAS", "NOW"))]
    assert len(preamble) == 2 and all(ref.startswith("¶ ") for ref in preamble)


def test_preamble_gives_title_parties_and_dates(agreement):
    documents, _, _ = agreement
    row = documents.row(0, named=True)
    assert row["title"] == "SERVICES AGREEMENT"
    assert row["document_type"] == "contract"
    assert row["parties"] == ["Northwind Traders Ltd.", "Contoso Bank plc"]
    assert str(row["published"]) == "2021-03-03" and str(row["effective"]) == "2021-03-03"


def _structured(path: Path, text: str) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    path.write_text(text, encoding="utf-8")
    source = discover([path])[0]
    return structure_document(source, document_elements(source))


def test_the_first_numbered_clause_ends_the_recitals_heading(tmp_path):
    _, _, chunks = _structured(
        tmp_path / "agency-agreement.txt",
        "AGENCY AGREEMENT\n\nThis Agreement is made on May 1, 2020 between Alpha Ltd and Beta "
        "LLC.\n\nRECITALS\n\nA. Alpha makes instruments.\n\nB. Beta sells instruments.\n\n"
        "NOW, THEREFORE, the parties agree as follows:\n\n1. APPOINTMENT\n\n1.1 Alpha appoints "
        "Beta as its agent.\n\n2. TERM\n\n2.1 This Agreement lasts two years.\n",
    )
    paths = dict(zip(chunks["ref"].to_list(), chunks["section_path"].to_list(), strict=True))
    assert paths["Section 1.1"] == ["Section 1 APPOINTMENT"]
    assert paths["Section 2.1"] == ["Section 2 TERM"]
    recital = chunks.filter(pl.col("content").str.starts_with("B. Beta sells"))
    assert recital["section_path"].to_list() == [["RECITALS"]]


def test_a_long_clause_is_cut_into_paragraphs_under_five_thousand(tmp_path):
    sentence = "The supplier shall keep every record of the services for seven years. "
    text = "MASTER AGREEMENT\n\nThis Agreement is made by and between A and B.\n\n"
    text += "4.1 Records. " + sentence * 120 + "\n\n4.2 Audit. The customer may audit.\n"
    path = tmp_path / "master.txt"
    path.write_text(text, encoding="utf-8")
    source = discover([path])[0]
    _, _, chunks = structure_document(source, document_elements(source))
    paragraphs = _paragraphs(chunks)
    assert max(len(t) for t in paragraphs.values()) <= 4000
    assert {"Section 4.1", "Section 4.1 ¶ 2", "Section 4.2"} <= set(paragraphs)


def _paged_pdf(lines: list[str], head: str) -> bytes:
    from fpdf import FPDF

    class Paged(FPDF):
        def header(self) -> None:
            self.set_font("helvetica", size=8)
            self.cell(0, 8, head, align="R")
            self.ln(12)

        def footer(self) -> None:
            self.set_y(-12)
            self.set_font("helvetica", size=8)
            self.cell(0, 8, f"Page {self.page_no()}", align="C")

    pdf = Paged()
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    for line in lines:
        pdf.multi_cell(0, 6, line)
        pdf.ln(3)
    return bytes(pdf.output())


def test_pdf_lines_keep_words_apart_and_running_heads_out(tmp_path):
    words = [f"word{n:03d}" for n in range(900)]
    clauses = [f"1.{n} " + " ".join(words[n * 90 : (n + 1) * 90]) + "." for n in range(10)]
    path = tmp_path / "supply-agreement.pdf"
    head = "CONFIDENTIAL - Acme Supply Agreement"
    lines = ["SUPPLY AGREEMENT", "This Agreement is made by and between X and Y.", *clauses]
    path.write_bytes(_paged_pdf(lines * 2, head))
    source = discover([path])[0]
    documents, _, chunks = structure_document(source, document_elements(source))
    assert documents["page_count"][0] >= 3
    text = "\n".join(chunks.filter(pl.col("chunk_level") == "paragraph")["content"])
    found = Counter(re.findall(r"word\d{3}", text))
    # Every word stands alone (nothing glued across a line end); heads and page numbers gone.
    assert set(found) == set(words) and set(found.values()) == {2}
    assert not re.search(r"word\d{3}word", text)
    assert head not in text and "Page 2" not in text


def test_a_sentence_under_a_bare_article_number_is_its_text_not_its_title(tmp_path):
    _, sections, chunks = _structured(
        tmp_path / "joint-venture-contract.txt",
        "JOINT VENTURE CONTRACT\n\nThis Contract is made on May 1, 2020 between Alpha Ltd and "
        "Beta LLC.\n\nARTICLE 12\n\nThe registered capital shall be paid by both Parties in "
        "proportion to their investment. The detailed method and timing\n\n",
    )
    assert not [t for t in sections["title"] if "registered capital" in (t or "")]
    assert chunks["content"].str.contains("The registered capital shall be paid").any()


def test_a_run_in_heading_broken_early_stays_with_its_clause():
    name = "NEONSYSTEMSINC_03_01_1999-EX-10.5-DISTRIBUTOR AGREEMENT_Amendment.pdf"
    source = discover([shared_file("cuad", "pdf") / name])[0]
    _, sections, chunks = structure_document(source, document_elements(source))
    # The PDF breaks "3.2 TERMS OF PAYMENT. The royalties payable to Licensor" before the
    # sentence goes on: the heading and those words open the clause, not a section title.
    assert not [t for t in sections["title"] if "royalties payable" in (t or "")]
    clause = chunks.filter(
        (pl.col("ref") == "Section 3.2") & (pl.col("chunk_level") == "paragraph")
    )
    assert (
        "TERMS OF PAYMENT. The royalties payable to Licensor pursuant to Section 3.1"
        in " ".join(clause["content"][0].split())
    )


def _cuad_pair() -> tuple[Path, Path]:
    pdf = shared_file("cuad", "pdf")
    txt = shared_file("cuad", "txt")
    name = "BIOPURECORP_06_30_1999-EX-10.13-AGENCY AGREEMENT"
    return pdf / f"{name}.PDF", txt / f"{name}.txt"


def test_cuad_contract_from_pdf_matches_its_text(tmp_path):
    pdf, txt = _cuad_pair()
    tables = {}
    for path in (pdf, txt):
        source = discover([path])[0]
        tables[path.suffix.lower()] = structure_document(source, document_elements(source))
    words = {}
    for kind, (_, sections, chunks) in tables.items():
        paragraphs = chunks.filter(pl.col("chunk_level") == "paragraph")
        assert paragraphs["content"].str.len_chars().max() <= 5000
        text = " ".join(paragraphs["content"]) + " " + " ".join(sections["title"])
        words[kind] = Counter(w.casefold() for w in re.findall(r"\w+", text))
        refs = set(paragraphs["ref"].drop_nulls())
        assert {"Section 1.1", "Section 1.2"} <= refs, kind
    overlap = sum((words[".pdf"] & words[".txt"]).values())
    f1 = 2 * overlap / (sum(words[".pdf"].values()) + sum(words[".txt"].values()))
    assert f1 > 0.97
    # Its PDF prints two pages to a sheet, each with its number ("11" above "-10-") mid-sheet:
    # neither heads a section nor ends a clause, which runs on across them.
    _, sections, chunks = tables[".pdf"]
    assert not [t for t in sections["title"] if re.fullmatch(r"[-\d\s]+", t or "")]
    clause = chunks.filter(pl.col("content").str.contains("such information and assistance as"))
    assert clause.height >= 1
    assert "reasonably request in connection with the defense" in clause["content"][0]
    assert not re.search(r"assistance as \d", clause["content"][0])
