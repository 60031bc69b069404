"""Write the bundled sample corpus in examples/corpus/ (run: .venv/bin/python scripts/make_corpus.py).

The texts are written for lexkb and describe no real body. They copy the shapes real documents
take, so every part of the pipeline meets them: a standard with requirements and application
material (PDF, with running headers and page numbers), a rulebook with dotted rules and guidance
(DOCX), an EU-style regulation with recitals, articles, paragraphs and points (Markdown), a
US-style act with § sections (TXT), and pre-chunked passages (JSONL). They cite each other.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from docx import Document
from fpdf import FPDF

FIXED_DATE = datetime(2026, 1, 1, tzinfo=UTC)
OUT = Path(__file__).resolve().parent.parent / "examples" / "corpus"

STANDARD_TITLE = "LSA 230 Audit Documentation"
STANDARD = [
    ("heading", "Introduction"),
    ("heading", "Scope of this LSA"),
    (
        "para",
        "1. This Lexkb Standard on Assurance (LSA) deals with the auditor's responsibility to "
        "prepare audit documentation for an audit of financial statements. The specific "
        "documentation requirements of other LSAs do not limit the application of this LSA.",
    ),
    ("heading", "Nature and Purposes of Audit Documentation"),
    (
        "para",
        "2. Audit documentation that meets the requirements of this LSA provides evidence of "
        "the auditor's basis for a conclusion about the achievement of the overall objectives "
        "of the auditor, and evidence that the audit was planned and performed in accordance "
        "with the LSAs and applicable legal and regulatory requirements.",
    ),
    (
        "para",
        "3. Audit documentation serves a number of additional purposes, including the following:",
    ),
    ("point", "(a) assisting the engagement team to plan and perform the audit;"),
    ("point", "(b) enabling the engagement team to be accountable for its work; and"),
    ("point", "(c) retaining a record of matters of continuing significance to future audits."),
    ("heading", "Objective"),
    (
        "para",
        "4. The objective of the auditor is to prepare documentation that provides a "
        "sufficient and appropriate record of the basis for the auditor's report.",
    ),
    ("heading", "Requirements"),
    ("heading", "Timely Preparation of Audit Documentation"),
    ("para", "5. The auditor shall prepare audit documentation on a timely basis. (Ref: Para. A1)"),
    ("heading", "Form, Content and Extent of Audit Documentation"),
    (
        "para",
        "6. The auditor shall prepare audit documentation that is sufficient to enable an "
        "experienced auditor, having no previous connection with the audit, to understand: "
        "(Ref: Para. A2-A5)",
    ),
    (
        "point",
        "(a) the nature, timing and extent of the audit procedures performed to comply with "
        "the LSAs and applicable legal and regulatory requirements;",
    ),
    (
        "point",
        "(b) the results of the audit procedures performed, and the audit evidence obtained; and",
    ),
    (
        "point",
        "(c) significant matters arising during the audit, the conclusions reached thereon, "
        "and significant professional judgements made in reaching those conclusions.",
    ),
    (
        "para",
        "7. In documenting the nature, timing and extent of audit procedures performed, the "
        "auditor shall record the identifying characteristics of the specific items or "
        "matters tested, who performed the audit work and the date such work was completed, "
        "and who reviewed the audit work performed and the date and extent of such review.",
    ),
    (
        "para",
        "8. Where the audit involves client money or safe custody assets held by a regulated "
        "firm, the auditor shall document the reconciliations inspected under Rule 4.3.1 of "
        "the Lexkb Rulebook and any differences reported under Rule 4.3.3. (Ref: Para. A6)",
    ),
    ("heading", "Assembly of the Final Audit File"),
    (
        "para",
        "9. The auditor shall assemble the audit documentation in an audit file and complete "
        "the administrative process of assembling the final audit file on a timely basis "
        "after the date of the auditor's report. (Ref: Para. A7)",
    ),
    (
        "para",
        "10. After the assembly of the final audit file has been completed, the auditor shall "
        "not delete or discard audit documentation of any nature before the end of its "
        "retention period. (Ref: Para. A8)",
    ),
    ("heading", "Application and Other Explanatory Material"),
    (
        "para",
        "A1. Preparing sufficient and appropriate audit documentation on a timely basis helps "
        "to enhance the quality of the audit. Documentation prepared after the audit work has "
        "been performed is likely to be less accurate than documentation prepared at the time "
        "such work is performed.",
    ),
    (
        "para",
        "A2. The form, content and extent of audit documentation depend on factors such as "
        "the size and complexity of the entity, the nature of the audit procedures to be "
        "performed and the identified risks of material misstatement.",
    ),
    (
        "para",
        "A3. Audit documentation may be recorded on paper or on electronic or other media. "
        "Examples include audit programmes, analyses, issues memoranda, summaries of "
        "significant matters, letters of confirmation and representation, checklists and "
        "correspondence concerning significant matters.",
    ),
    (
        "para",
        "A4. The auditor need not include in audit documentation superseded drafts of working "
        "papers and financial statements, notes that reflect incomplete or preliminary "
        "thinking, or duplicates of documents.",
    ),
    (
        "para",
        "A5. Oral explanations by the auditor, on their own, do not represent adequate "
        "support for the work the auditor performed or conclusions the auditor reached, but "
        "may be used to explain or clarify information contained in the audit documentation.",
    ),
    (
        "para",
        "A6. The reconciliations referred to in paragraph 8 are those a firm performs under "
        "Chapter 4 of the Lexkb Rulebook. Records of personal data kept in the audit file are "
        "subject to Article 5 of the Data Handling Regulation.",
    ),
    (
        "para",
        "A7. An appropriate time limit within which to complete the assembly of the final "
        "audit file is ordinarily not more than 60 days after the date of the auditor's "
        "report.",
    ),
    (
        "para",
        "A8. The retention period for audit engagements ordinarily is no shorter than five "
        "years from the date of the auditor's report, or, if later, the date of the group "
        "auditor's report. Section 103(b) of the Records Retention Act sets a longer period "
        "for some records.",
    ),
]

RULEBOOK_TITLE = "Lexkb Rulebook (LRB) Chapter 4: Client Assets"
RULEBOOK = [
    ("h1", "4 CLIENT ASSETS"),
    ("h2", "4.1 Application"),
    (
        "rule",
        "4.1.1 This chapter applies to every Authorised Firm which holds or controls Client "
        "Money or Safe Custody Assets in connection with its regulated activities.",
    ),
    (
        "rule",
        "4.1.2 A firm that holds Client Money only in connection with a transaction that "
        "settles within one business day is exempt from Rules 4.2.1 to 4.2.3, but not from "
        "Section 4.3.",
    ),
    ("h2", "4.2 Segregation of Client Money"),
    (
        "rule",
        "4.2.1 An Authorised Firm must hold Client Money in one or more client accounts that "
        "are held separately from any account used for money belonging to the firm.",
    ),
    (
        "rule",
        "4.2.2 A client account must be opened with a bank that is not a member of the "
        "firm's group, unless the firm has notified the Regulator in writing at least ten "
        "business days in advance.",
    ),
    ("guidance", "Guidance"),
    (
        "rule",
        "1. The purpose of Rule 4.2.1 is to protect Client Money if the firm becomes "
        "insolvent. A firm should label each client account so that the bank cannot set off "
        "its balance against a debt owed by the firm.",
    ),
    (
        "rule",
        "4.2.3 A firm must pay Client Money into a client account no later than the business "
        "day after it is received, and must not use Client Money to meet its own obligations.",
    ),
    ("h2", "4.3 Reconciliation"),
    (
        "rule",
        "4.3.1 An Authorised Firm must reconcile its records of Client Money and Safe Custody "
        "Assets with the statements of the bank or custodian at least every 25 business "
        "days.",
    ),
    (
        "rule",
        "4.3.2 The reconciliation required by Rule 4.3.1 must be performed by a person who "
        "is independent of the people who produce or maintain the records being reconciled.",
    ),
    (
        "rule",
        "4.3.3 Where a reconciliation reveals a difference, the firm must correct it "
        "promptly and, if the difference is not corrected within five business days, notify "
        "the Regulator in writing, stating the amount and its cause.",
    ),
    ("h2", "4.4 Records"),
    (
        "rule",
        "4.4.1 A firm must keep the records required by this chapter for at least six years "
        "from the date they were made. Records that contain personal data must also meet "
        "Article 5(1)(e) of the Data Handling Regulation.",
    ),
    (
        "rule",
        "4.4.2 The firm's auditor must be given access to these records when it reports on "
        "the firm's compliance with this chapter, as described in LSA 230 paragraph 8.",
    ),
]

REGULATION = """# Data Handling Regulation

Regulation 1/2026 of the Lexkb Authority on the handling of personal data by regulated firms

Whereas:

(1) Regulated firms keep large records about their clients, and clients need to know that this information is handled lawfully and securely.

(2) Common principles for handling personal data give firms one standard to meet and give supervisors one standard to check.

(3) Records kept for audit or prudential purposes should be retained no longer than those purposes require.

## CHAPTER I

## General provisions

### Article 1

### Subject matter

1. This Regulation lays down rules on the handling of personal data by firms authorised by the Lexkb Authority.

2. This Regulation applies alongside the Lexkb Rulebook. Where both apply, the stricter requirement prevails.

### Article 2

### Definitions

For the purposes of this Regulation:

(1) 'personal data' means any information relating to an identified or identifiable natural person;

(2) 'firm' means an Authorised Firm within the meaning of Rule 4.1.1 of the Lexkb Rulebook;

(3) 'retention period' means the period during which a record must be kept under Article 6.

## CHAPTER II

## Principles

### Article 5

### Principles of data handling

1. Personal data shall be:

(a) handled lawfully, fairly and transparently;

(b) collected for specified, explicit and legitimate purposes;

(c) limited to what is necessary for those purposes;

(d) accurate and, where necessary, kept up to date;

(e) kept in a form which permits identification of clients for no longer than is necessary, subject to the retention periods in Article 6;

(f) protected against unauthorised access, loss or destruction by appropriate technical measures.

2. The firm shall be able to demonstrate compliance with paragraph 1.

### Article 6

### Retention of records

1. A firm shall keep records containing personal data for the retention period that applies to the record under the Lexkb Rulebook, and in any case for no longer than ten years.

2. Records kept under Rule 4.4.1 of the Lexkb Rulebook may be kept for the period that rule requires, notwithstanding point (e) of Article 5(1).

3. At the end of the retention period the firm shall erase the personal data or make them anonymous.
"""

ACT = """Records Retention Act

§ 101. Short title
This Act may be cited as the Records Retention Act.

§ 102. Definitions
(a) In this Act, "record" means information created, received or kept by a regulated person as evidence of a transaction or of compliance with a legal obligation.
(b) "Regulated person" means a firm authorised by the Lexkb Authority.

§ 103. Retention periods
(a) A regulated person shall keep each record for the period set by the rule or regulation that requires it.
(b) Records of client money reconciliations shall be kept for not less than seven years, notwithstanding Rule 4.4.1 of the Lexkb Rulebook.
(c) A person who destroys a record before the end of the period in subsection (a) or (b) commits an offence.

§ 104. Relation to other laws
Nothing in this Act permits the retention of personal data beyond the period allowed by Article 6 of the Data Handling Regulation.
"""

PASSAGES = [
    {
        "document_id": "LKB-FAQ",
        "ref": "Q1",
        "title": "Lexkb Authority Client Assets FAQ",
        "text": "How often must client money be reconciled? At least every 25 business days under "
        "Rule 4.3.1; many firms reconcile daily.",
    },
    {
        "document_id": "LKB-FAQ",
        "ref": "Q2",
        "title": "Lexkb Authority Client Assets FAQ",
        "text": "Can a firm use client money to pay its own suppliers? No. Rule 4.2.3 forbids using "
        "client money to meet the firm's own obligations.",
    },
    {
        "document_id": "LKB-FAQ",
        "ref": "Q3",
        "title": "Lexkb Authority Client Assets FAQ",
        "text": "Who may perform a reconciliation? A person independent of those who keep the "
        "records, as Rule 4.3.2 requires.",
    },
]


class _StandardPdf(FPDF):
    def header(self) -> None:
        self.set_font("Helvetica", "I", 8)
        self.cell(0, 6, f"{STANDARD_TITLE} - Lexkb sample corpus", align="R")
        self.ln(10)

    def footer(self) -> None:
        self.set_y(-12)
        self.set_font("Helvetica", "I", 8)
        self.cell(0, 6, f"Page {self.page_no()}", align="C")


def write_pdf(path: Path) -> None:
    pdf = _StandardPdf(format="A4")
    pdf.set_auto_page_break(auto=True, margin=18)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 16)
    pdf.multi_cell(0, 9, STANDARD_TITLE)
    pdf.ln(4)
    for kind, text in STANDARD:
        if kind == "heading":
            pdf.ln(2)
            pdf.set_font("Helvetica", "B", 12)
            pdf.multi_cell(0, 7, text)
        else:
            pdf.set_font("Helvetica", "", 10)
            pdf.set_x(pdf.l_margin + (8 if kind == "point" else 0))
            pdf.multi_cell(0, 5.5, text)
            pdf.ln(1.5)
    pdf.set_creation_date(FIXED_DATE)  # same bytes on every run
    pdf.output(str(path))


def write_docx(path: Path) -> None:
    document = Document()
    document.core_properties.title = RULEBOOK_TITLE
    document.core_properties.created = FIXED_DATE
    document.core_properties.modified = FIXED_DATE
    document.add_heading(RULEBOOK_TITLE, level=0)
    for kind, text in RULEBOOK:
        if kind == "h1":
            document.add_heading(text, level=1)
        elif kind in ("h2", "guidance"):
            document.add_heading(text, level=2 if kind == "h2" else 3)
        else:
            document.add_paragraph(text)
    document.save(str(path))


CATALOG = """\
# Names that other documents use for these ones, so their citations resolve
# ("Rule 4.1.1 of the Lexkb Rulebook", "Article 6 of the Data Handling Regulation"),
# and the metadata search filters on. The Lexkb Authority and its URLs are fictional.
documents:
  lrb-chapter-4-client-assets:
    short_name: LRB
    version: "2026.1"
    aliases: [Lexkb Rulebook, the Rulebook]
    document_type: rulebook
    authority_level: primary
    author: Lexkb Authority
    source_url: https://lexkb.example/rulebook/chapter-4
    published: 2026-01-15
    effective: 2026-03-01
    tags: [client assets, client money]
  data-handling-regulation:
    short_name: DHR
    aliases: [Data Handling Regulation, Regulation 1/2026]
    document_type: regulation
    authority_level: primary
    author: Lexkb Authority
    source_url: https://lexkb.example/regulations/1-2026
    published: 2026-02-02
    tags: [data protection, records]
  records-retention-act:
    aliases: [Records Retention Act]
    document_type: act
    authority_level: primary
    author: Lexkb Parliament
    published: 2019-06-30
    tags: [records]
  lsa-230-audit-documentation:
    document_type: standard
    authority_level: secondary
    author: Lexkb Auditing Board
    source_url: https://lexkb.example/standards/lsa-230
    published: 2024-12-10
    tags: [audit, records]
  LKB-FAQ:
    refers_to: [lrb-chapter-4-client-assets]
    document_type: faq
    authority_level: guidance
    author: Lexkb Authority
    published: 2026-11-20
    tags: [client money]
    deprecated: false
"""


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    write_pdf(OUT / "lsa-230-audit-documentation.pdf")
    write_docx(OUT / "lrb-chapter-4-client-assets.docx")
    (OUT / "data-handling-regulation.md").write_text(REGULATION, encoding="utf-8")
    (OUT / "records-retention-act.txt").write_text(ACT, encoding="utf-8")
    (OUT / "catalog.yaml").write_text(CATALOG, encoding="utf-8")
    with (OUT / "client-assets-faq.jsonl").open("w", encoding="utf-8") as handle:
        for passage in PASSAGES:
            handle.write(json.dumps(passage) + "\n")
    print(f"wrote {len(list(OUT.iterdir()))} files to {OUT}")


if __name__ == "__main__":
    main()
