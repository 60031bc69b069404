"""Section trees and paragraph refs recovered from the sample corpus, one family per format."""

import polars as pl
import pytest

from lexkb.core.text.refs import title_name
from tests.conftest import CORPUS, shared_file
from transforms.reading.elements import document_elements
from transforms.reading.source_files import discover
from transforms.structure import drop_running_text, structure_document


def _structure(name):
    source = discover([CORPUS / name])[0]
    return structure_document(source, document_elements(source))


@pytest.fixture(scope="module")
def standard():
    return _structure("lsa-230-audit-documentation.pdf")


def _text_lines(path, lines: list[str]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The tables of a text file of `lines`, structured as a build does."""
    path.write_text("\n".join(lines), encoding="utf-8")
    source = discover([path])[0]
    return structure_document(source, document_elements(source))


def _chunk(chunks: pl.DataFrame, ref: str) -> dict:
    rows = chunks.filter((pl.col("ref") == ref) & (pl.col("chunk_level") == "paragraph"))
    assert rows.height == 1, f"{ref}: {rows.height} chunks"
    return rows.row(0, named=True)


def test_standard_requirements_and_application_material(standard):
    documents, _, chunks = standard
    assert documents["title"][0] == "LSA 230 Audit Documentation"
    refs = chunks["ref"].to_list()
    assert [f"{n}" for n in range(1, 11)] == [r for r in refs if r and r.isdigit()]
    assert [f"A{n}" for n in range(1, 9)] == [r for r in refs if r and r.startswith("A")]
    six = _chunk(chunks, "6")
    assert (
        "(a) the nature, timing" in six["content"] and "(c) significant matters" in six["content"]
    )
    # Unnumbered PDF headings carry no level of their own; each is the paragraph's nearest heading.
    assert six["section_path"][-1] == "Form, Content and Extent of Audit Documentation"
    assert _chunk(chunks, "A1")["heading"] == "Application and Other Explanatory Material"


def test_pdf_running_headers_and_page_numbers_removed(standard):
    _, _, chunks = standard
    text = "\n".join(chunks["content"])
    assert "Lexkb sample corpus" not in text
    assert "Page 1" not in text and "Page 2" not in text
    assert _chunk(chunks, "A8")["page"] == 2 and _chunk(chunks, "1")["page"] == 1


def test_rulebook_dotted_rules_under_their_sections():
    _, sections, chunks = _structure("lrb-chapter-4-client-assets.docx")
    rule = _chunk(chunks, "4.3.1")
    assert rule["section_path"] == ["4 CLIENT ASSETS", "4.3 Reconciliation"]
    parents = dict(zip(sections["section_id"], sections["parent_id"], strict=True))
    numbers = dict(zip(sections["section_id"], sections["section_number"], strict=True))
    assert numbers[parents[rule["section_id"]]] == "4"


def test_eu_regulation_recitals_articles_paragraphs_points():
    _, _, chunks = _structure("data-handling-regulation.md")
    refs = chunks["ref"].to_list()
    assert {"Recital 1", "Recital 2", "Recital 3"} <= set(refs)
    assert {"Article 1(1)", "Article 1(2)", "Article 5(1)", "Article 5(2)", "Article 6(3)"} <= set(
        refs
    )
    point_e = _chunk(chunks, "Article 5(1)")["content"]
    assert "(e) kept in a form" in point_e and "(f) protected" in point_e
    definitions = _chunk(chunks, "Article 2")
    assert "'personal data' means" in definitions["content"]
    assert definitions["section_path"][-1] == "Article 2 Definitions"


def test_us_style_sections_and_subsections():
    _, _, chunks = _structure("records-retention-act.txt")
    assert _chunk(chunks, "§ 103(b)")["content"].startswith("(b) Records of client money")
    assert (
        _chunk(chunks, "§ 101")["content"] == "This Act may be cited as the Records Retention Act."
    )


def test_ids_and_hashes_are_stable_and_unique():
    first = _structure("data-handling-regulation.md")[2]
    second = _structure("data-handling-regulation.md")[2]
    assert first["chunk_id"].to_list() == second["chunk_id"].to_list()
    assert first["chunk_id"].n_unique() == first.height
    import hashlib

    for content, digest in zip(first["content"], first["content_hash"], strict=True):
        assert hashlib.sha256(content.encode()).hexdigest() == digest


def test_passages_keep_their_ids_and_headings(tmp_path):
    import json

    path = tmp_path / "rules.json"
    path.write_text(
        json.dumps(
            [
                {"DocumentID": 3, "PassageID": "18.", "Passage": "OPERATING A PLATFORM"},
                {"DocumentID": 3, "PassageID": "18.8", "Passage": "Exit facility"},
                {
                    "DocumentID": 3,
                    "PassageID": "18.8.2",
                    "Passage": "An operator must provide information.",
                },
                {"DocumentID": 3, "PassageID": "18.8.3", "Passage": ""},
            ]
        )
    )
    source = discover([path])[0]
    documents, _, chunks = structure_document(source, document_elements(source))
    assert documents["document_key"].to_list() == ["3"]
    paragraphs = chunks.filter(pl.col("chunk_level") == "paragraph")
    assert paragraphs["ref"].to_list() == ["18.", "18.8", "18.8.2"]  # the empty one is left out
    assert _chunk(chunks, "18.8.2")["section_path"] == [
        "18 OPERATING A PLATFORM",
        "18.8 Exit facility",
    ]


def test_tab_labelled_text_keeps_its_labels(tmp_path):
    lines = [
        "Lexkb Fees Rules",
        "1\tINTRODUCTION",
        "1.1\tApplication",
        "1.1.1\tThese Rules apply to a Person in relation to:",
        "(a)\tan application for a licence; and",
        "(b)\ta notification of a change.",
        "1.1.2\tFees are payable in advance.",
        "1.1.2.Guidance.1.\tDays means business days.",
        "1.1.2.(3) A fee paid late attracts a surcharge.",
        "2\tFEES",
        "2.1.1\tThe application fee is set out in the Schedule.",
    ]
    documents, sections, chunks = _text_lines(tmp_path / "fees.txt", lines)
    assert documents["title"][0] == "Lexkb Fees Rules"
    paragraphs = chunks.filter(pl.col("chunk_level") == "paragraph")
    assert paragraphs["ref"].to_list() == [
        "1",
        "1.1",
        "1.1.1",
        "1.1.2",
        "1.1.2.Guidance.1.",
        "1.1.2.(3)",
        "2",
        "2.1.1",
    ]
    rule = _chunk(chunks, "1.1.1")
    assert rule["content"].splitlines()[-1] == "(b) a notification of a change."
    assert rule["section_path"] == ["1 INTRODUCTION", "1.1 Application"]
    assert _chunk(chunks, "1.1.2.Guidance.1.")["content"] == "Days means business days."
    # "1.1.2 Fees are payable in advance." reads as a sentence: a rule, not a heading.
    assert set(sections["section_number"]) == {"1", "1.1", "2"}


def test_a_table_row_in_tab_labelled_text_is_no_label(tmp_path):
    """A table rendered as text has tabs too: its first cell ("60 minutes", "Tier 1 Capital",
    "ADT <= 100,000") is no label, and the row stays text of the rule that introduces it."""
    lines = [
        "Lexkb Market Rules",
        "1\tTRANSPARENCY",
        "1.1\tDelayed publication",
        "1.1.1\tThe table below shows the smallest trade that may be published late:",
        "Permitted delay\tADT <= 100,000\tADT > 100,000",
        "60 minutes\t10,000\tmax (5% of ADT, 25,000)",
        "180 minutes\t25,000\tmax (15% of ADT, 75,000)",
        "Tier 1 Capital\t100%",
        "1.1.2\tSection 2 Part 3\tA venue may halt trading.",
        "APP 1\tTable of fees",
    ]
    _, _, chunks = _text_lines(tmp_path / "market.txt", lines)
    refs = chunks.filter(pl.col("chunk_level") == "paragraph")["ref"].to_list()
    assert refs == ["1", "1.1", "1.1.1", "1.1.2", "APP 1"]
    assert "180 minutes\t25,000" in _chunk(chunks, "1.1.1")["content"]


def test_long_paragraph_parts_and_extraction_quality(tmp_path):
    sentence = "The firm shall keep a record of every client money transfer it makes. "
    path = tmp_path / "rules.md"
    path.write_text(
        "# Lexkb Long Rules\n\n## 1 General\n\n1.1.1 " + sentence * 60 + "\n\n1.1.3 Short rule.\n"
    )
    source = discover([path])[0]
    documents, _, chunks = structure_document(source, document_elements(source))
    paragraph = _chunk(chunks, "1.1.1")
    parts = chunks.filter(pl.col("chunk_level") == "part")
    assert parts.height >= 3 and set(parts["ref"]) == {"1.1.1"}
    assert set(parts["parent_chunk_id"]) == {paragraph["chunk_id"]}
    assert " ".join(parts["content"]) == " ".join(paragraph["content"].split())
    assert all(len(text) <= 1500 for text in parts["content"])
    # 1.1.2 is missing: one gap in a run of three.
    assert 0.5 < documents["extraction_quality"][0] < 1.0


def test_gdpr_pdf_keeps_every_article_heading_and_cuts_inline_footnotes(gdpr_pdf_tables):
    _, sections, chunks = gdpr_pdf_tables
    titles = {
        number: title
        for number, title in zip(sections["section_number"], sections["title"], strict=True)
        if number and number.startswith("Article ")
    }
    assert len(titles) == 99
    # unstructured's list-item merge lost this heading and glued others to the paragraph above.
    assert titles["Article 66"] == "Urgency procedure"
    assert titles["Article 22"] == "Automated individual decision-making, including profiling"
    recital = _chunk(chunks, "Recital 3")
    assert "of the Council seeks to harmonise" in recital["content"]
    notes = chunks.filter(pl.col("parent_chunk_id") == recital["chunk_id"])
    assert notes["chunk_level"].to_list() == ["note"]
    assert notes["content"][0].endswith("(OJ L 281, 23.11.1995, p. 31).")


def test_gdpr_pdf_title_is_its_whole_printed_title(gdpr_pdf_tables):
    documents, sections, chunks = gdpr_pdf_tables
    title = documents["title"][0]
    # Printed in seven lines on its first page; each line once became a heading of its own.
    assert title.startswith(
        "Regulation (EU) 2016/679 of the European Parliament and of the Council of 27 April 2016"
        " on the protection of natural persons"
    )
    assert "95/46/EC (General Data Protection Regulation)" in title
    assert not any(t.startswith("Parliament and of") for t in sections["title"])
    assert _chunk(chunks, "Article 33(1)")["section_path"][0].startswith("Chapter IV")
    assert title_name(title) == "General Data Protection Regulation"


def test_gdpr_docx_title_is_its_official_title_however_long():
    source = discover([shared_file("gdpr", "gdpr-en.docx")])[0]
    documents, _, chunks = structure_document(source, document_elements(source))
    title = documents["title"][0]
    assert title.startswith("Regulation (EU) 2016/679 of the European Parliament and of the")
    assert title_name(title) == "General Data Protection Regulation"
    assert not chunks["content"].str.starts_with("Regulation (EU) 2016/679").any()


def test_page_numbers_printed_mid_page_are_furniture():
    texts = ["the parties agree to give such help as", "11", "-10-", "the other may need.", "3"]
    elements = pl.DataFrame(
        {
            "text": texts,
            "category": ["Text", "Text", "Title", "Text", "Text"],
            "page": [5] * 5,
            "block": [1, 1, 2, 3, 4],
        }
    )
    # Mid-page (not among a page's first or last two elements) once it holds more.
    head = pl.DataFrame(
        {
            "text": ["Head one.", "Head two."],
            "category": ["Text"] * 2,
            "page": [5] * 2,
            "block": [0] * 2,
        }
    )
    kept = drop_running_text(pl.concat([head, elements, head]))["text"].to_list()
    assert "-10-" not in kept and "11" not in kept
    assert "3" in kept and "the other may need." in kept


def _pages(*pages: list[str]) -> pl.DataFrame:
    rows = [(text, page) for page, texts in enumerate(pages, start=1) for text in texts]
    return pl.DataFrame(
        {
            "text": [t for t, _ in rows],
            "category": ["Title" if t.isdigit() else "Text" for t, _ in rows],
            "page": [p for _, p in rows],
            "block": list(range(len(rows))),
        }
    )


def test_bare_numbers_counting_the_pages_are_furniture_but_heading_labels_are_not():
    edge = ["First line.", "Second line."]
    # Two pages to a sheet: each sheet shows its pages' numbers mid-sheet.
    sheets = _pages(
        [*edge, "the parties shall", "1", "co-operate fully.", *edge],
        [*edge, "payment is due", "2", "within thirty days.", "3", "Each party", *edge],
        [*edge, "notices go to", "4", "the addresses below.", *edge],
    )
    kept = drop_running_text(sheets)["text"].to_list()
    assert not {"1", "2", "3", "4"} & set(kept)
    assert "within thirty days." in kept
    # A number on its own line above a heading is the heading's label.
    labels = _pages(
        [*edge, "1", "DEFINITIONS", "Terms are defined here.", *edge],
        [*edge, "2", "TERM", "It lasts a year.", "3", "PRICE", *edge],
        [*edge, "4", "NOTICES", "In writing.", *edge],
    )
    assert {"1", "2", "3", "4"} <= set(drop_running_text(labels)["text"].to_list())


def test_guidance_is_qualified_by_its_rule_and_ends_at_the_next_rule():
    _, _, chunks = _structure("lrb-chapter-4-client-assets.docx")
    guidance = _chunk(chunks, "4.2.2 Guidance 1")
    assert guidance["content"].startswith("1. The purpose of Rule 4.2.1")
    assert guidance["section_path"][-1] == "Guidance"
    # The binding rule after the guidance is filed under its own section again.
    assert _chunk(chunks, "4.2.3")["section_path"] == [
        "4 CLIENT ASSETS",
        "4.2 Segregation of Client Money",
    ]


def test_html_site_furniture_stays_out_of_the_text(tmp_path):
    page = tmp_path / "gn-7.html"
    page.write_text(
        "<html><body><nav><a href='/'>Home</a> | <a href='/rules'>Rules</a></nav>"
        "<main><h1>Guidance Note GN-7: Reconciliation</h1>"
        "<h2>3 Reconciliation</h2><p>3.1 Firms should reconcile client money daily.</p>"
        "<p>3.2 Differences must be corrected the same day.</p></main>"
        "<footer><p>© 2026 Lexkb Authority. All rights reserved.</p></footer>"
        "<p>Copyright 2026 Lexkb Authority</p></body></html>",
        encoding="utf-8",
    )
    source = discover([page])[0]
    _, _, chunks = structure_document(source, document_elements(source))
    text = "\n".join(chunks["content"])
    assert _chunk(chunks, "3.2")["content"] == "3.2 Differences must be corrected the same day."
    assert "All rights reserved" not in text and "Copyright" not in text and "Home" not in text
