"""Two DOCX files whose section and point numbers exist only as Word list numbering, with their
truth files: shared by the tests and `benchmarks/realdocs.py`.

How they are made: python-docx writes the paragraphs into its default template; this module
replaces the template's `word/numbering.xml` definitions with its own and adds the styles that
carry numbering to `word/styles.xml`. No paragraph's text holds its number. Each paragraph
below is written with the label Word shows for it, by hand from the definitions (not by lexkb's
renderer); the truth is made from those labels, in the form of the real-documents set's truth
files (`../shared/data/realdocs/README.md`).

- `word-numbered-policy.docx`: sections numbered "1." by a paragraph style's numbering, points
  "a." and sub-points "(i)" at levels 1 and 2 of the same list; a separate lettered list
  restarted by `w:startOverride`; a second decimal list inside a section; a list instance whose
  `w:lvlOverride` redefines level 1 as "A."; points that go on after an unnumbered paragraph;
  and sections 11-12 in a list that starts at 11, reached through a numbering style
  (`w:numStyleLink`).
- `word-numbered-rules.docx`: parts "Part I" (upperRoman), rules "%1.%2" with `w:isLgl`
  ("1.1", not "I.1"), points "(a)" under rules.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
FAMILY = "docx"
SOURCE = "made by tests/support/word_policy.py (python-docx, hand-written numbering.xml)"


def _lvl(ilvl: int, fmt: str, text: str, start: int = 1, extra: str = "") -> str:
    return (
        f'<w:lvl w:ilvl="{ilvl}"><w:start w:val="{start}"/><w:numFmt w:val="{fmt}"/>'
        f'{extra}<w:lvlText w:val="{text}"/><w:lvlJc w:val="left"/>'
        f'<w:pPr><w:ind w:left="{360 * (ilvl + 1)}" w:hanging="360"/></w:pPr></w:lvl>'
    )


# abstract definitions, then list instances; numIds are what paragraphs name
POLICY_NUMBERING = [
    # 1: sections "1.", points "a.", sub-points "(i)"; level 0 linked to the section style
    '<w:abstractNum w:abstractNumId="1"><w:multiLevelType w:val="multilevel"/>'
    + _lvl(0, "decimal", "%1.", extra='<w:pStyle w:val="PolicySection"/>')
    + _lvl(1, "lowerLetter", "%2.")
    + _lvl(2, "lowerRoman", "(%3)")
    + "</w:abstractNum>",
    # 2: a lettered list of its own
    '<w:abstractNum w:abstractNumId="2"><w:multiLevelType w:val="singleLevel"/>'
    + _lvl(0, "lowerLetter", "(%1)")
    + "</w:abstractNum>",
    # 3: a plain decimal list
    '<w:abstractNum w:abstractNumId="3"><w:multiLevelType w:val="singleLevel"/>'
    + _lvl(0, "decimal", "%1.")
    + "</w:abstractNum>",
    # 5: the operational sections, from 11, defined by the numbering style OperationalList
    '<w:abstractNum w:abstractNumId="5"><w:multiLevelType w:val="multilevel"/>'
    '<w:styleLink w:val="OperationalList"/>'
    + _lvl(0, "decimal", "%1.", start=11)
    + _lvl(1, "lowerLetter", "(%2)")
    + "</w:abstractNum>",
    # 6: takes its levels from the numbering style OperationalList
    '<w:abstractNum w:abstractNumId="6"><w:multiLevelType w:val="multilevel"/>'
    '<w:numStyleLink w:val="OperationalList"/></w:abstractNum>',
    '<w:num w:numId="1"><w:abstractNumId w:val="1"/></w:num>',
    '<w:num w:numId="3"><w:abstractNumId w:val="2"/></w:num>',
    # the same lettered list again, restarted: (a), not (d)
    '<w:num w:numId="4"><w:abstractNumId w:val="2"/>'
    '<w:lvlOverride w:ilvl="0"><w:startOverride w:val="1"/></w:lvlOverride></w:num>',
    '<w:num w:numId="5"><w:abstractNumId w:val="3"/></w:num>',
    # the sections' list with level 1 redefined as "A."
    '<w:num w:numId="6"><w:abstractNumId w:val="1"/><w:lvlOverride w:ilvl="1">'
    + _lvl(1, "upperLetter", "%2.")
    + "</w:lvlOverride></w:num>",
    '<w:num w:numId="8"><w:abstractNumId w:val="6"/></w:num>',
    '<w:num w:numId="9"><w:abstractNumId w:val="5"/></w:num>',
]

RULES_NUMBERING = [
    '<w:abstractNum w:abstractNumId="1"><w:multiLevelType w:val="multilevel"/>'
    + _lvl(0, "upperRoman", "Part %1")
    + _lvl(1, "decimal", "%1.%2", extra="<w:isLgl/>")
    + _lvl(2, "lowerLetter", "(%3)")
    + "</w:abstractNum>",
    '<w:num w:numId="1"><w:abstractNumId w:val="1"/></w:num>',
]


@dataclass(frozen=True)
class Para:
    """One paragraph: `kind` says what the truth makes of it ("title", "body", "heading" (a
    unit's heading), "unit" (a numbered unit with its own words), "item" (a numbered line that
    is its section's text), "plain" (unnumbered text outside any unit's truth)); `label` is the
    number Word shows, `num` the (numId, ilvl) written on the paragraph; None with `style`
    "PolicySection": numbered by the style."""

    kind: str
    label: str | None
    text: str
    num: tuple[int, int] | None = None
    style: str | None = None


SECTION = "PolicySection"


def _section(label: str, title: str) -> Para:
    return Para("heading", label, title, style=SECTION)


def _point(label: str, text: str, num: int = 1, ilvl: int = 1) -> Para:
    return Para("unit", label, text, (num, ilvl), "List Paragraph")


def _body(text: str) -> Para:
    return Para("body", None, text)


POLICY = [
    Para("title", None, "Data Protection Policy", style="Title"),
    Para(
        "plain",
        None,
        "This policy sets out how Acme Widgets Ltd collects, uses, stores and protects personal "
        "data.",
    ),
    _section("1.", "Purpose"),
    _body(
        "This policy explains the rules that every employee must follow when handling personal "
        "data about customers, suppliers and staff."
    ),
    _section("2.", "Scope"),
    _body("This policy applies to the following, wherever they are located:"),
    _point("a.", "all personal data held by the company, whether on paper or in electronic form;"),
    _point("b.", "all employees, contractors, agents and temporary staff of the company; and"),
    _point("c.", "all systems and devices used to process personal data on behalf of the company."),
    _section("3.", "Definitions"),
    _point(
        "a.",
        "“Personal data” means any information relating to an identified or identifiable "
        "natural person.",
    ),
    _point("b.", "“Processing” means any operation performed on personal data, including:"),
    _point("(i)", "collection, recording, organisation and storage;", ilvl=2),
    _point(
        "(ii)",
        "disclosure by transmission, dissemination or otherwise making available; and",
        ilvl=2,
    ),
    _point("(iii)", "erasure, destruction or anonymisation.", ilvl=2),
    _point("c.", "“Data subject” means the natural person to whom the personal data relates."),
    _section("4.", "Principles"),
    _body("The company shall process personal data in line with the following principles."),
    _point("a.", "Personal data shall be processed lawfully, fairly and transparently."),
    _point("b.", "Personal data shall be collected for specified and legitimate purposes only."),
    _point("c.", "Personal data shall be adequate, relevant and limited to what is necessary."),
    _point("d.", "Personal data shall be accurate and, where necessary, kept up to date."),
    _point("e.", "Personal data shall be kept no longer than its purpose requires."),
    _point("f.", "Personal data shall be kept secure against loss, misuse and unlawful access."),
    _section("5.", "Lawful Basis"),
    _body("The company processes personal data only where at least one of the following applies."),
    _point(
        "(a)", "The data subject has given consent to the processing for a specific purpose.", 3, 0
    ),
    _point("(b)", "The processing is necessary for a contract with the data subject.", 3, 0),
    _point(
        "(c)", "The processing is necessary to comply with a legal obligation of the company.", 3, 0
    ),
    _section("6.", "Rights of Data Subjects"),
    _body("Every data subject has the following rights, which the company shall respect."),
    _point("(a)", "The right of access to the personal data the company holds about them.", 4, 0),
    _point(
        "(b)", "The right to have inaccurate personal data corrected without undue delay.", 4, 0
    ),
    _section("7.", "Security Measures"),
    _body(
        "The company shall protect personal data with technical and organisational measures "
        "that suit the risk. Key measures include:"
    ),
    Para("item", "1.", "Encryption of laptops and removable media.", (5, 0), "List Paragraph"),
    Para(
        "item", "2.", "Access control based on each employee's job role.", (5, 0), "List Paragraph"
    ),
    Para(
        "item",
        "3.",
        "Regular testing of backups and of their restoration.",
        (5, 0),
        "List Paragraph",
    ),
    _section("8.", "Retention"),
    _body("Personal data shall be kept no longer than necessary for the purpose it serves."),
    _point("a.", "Customer records are kept for six years after the end of the relationship."),
    _point("b.", "Staff records are kept for six years after the employment ends."),
    Para(
        "plain", None, "Retention periods are reviewed every year by the Data Protection Officer."
    ),
    _point("c.", "Records of unsuccessful job applicants are kept for six months."),
    _section("9.", "Data Breaches"),
    _body("A personal data breach shall be handled in the following steps."),
    _point("A.", "Report the breach to the Data Protection Officer within 24 hours.", 6),
    _point("B.", "Record the facts, effects and remedial action in the breach register.", 6),
    _point("C.", "Notify the supervisory authority within 72 hours where the law requires it.", 6),
    _section("10.", "Responsibilities"),
    _body(
        "The Data Protection Officer is responsible for this policy and reports on it to the "
        "board once a year."
    ),
    Para("plain", None, "Operational Rules", style="Heading 1"),
    Para("heading", "11.", "Incident Response", (8, 0), "List Paragraph"),
    _body("Security incidents shall be reported through the service desk without delay."),
    _point("(a)", "The service desk logs each incident and assigns an owner to it.", 8),
    _point(
        "(b)",
        "The owner keeps the Data Protection Officer informed until the incident is closed.",
        8,
    ),
    Para("heading", "12.", "Training", (8, 0), "List Paragraph"),
    _body(
        "Every employee shall complete data protection training when joining the company and "
        "every two years after that."
    ),
]
POLICY_ABSENT = [
    "Section 13", "Section 2(d)", "Section 3(d)", "Section 3(b)(iv)", "Section 4(g)",
    "Section 5(d)", "Section 6(c)", "Section 7(a)", "Section 8(d)", "Section 9(D)",
    "Section 11(c)", "Section 12(a)",
]  # fmt: skip

RULES = [
    Para("title", None, "Records Management Rules", style="Title"),
    Para(
        "plain",
        None,
        "These rules govern how Acme Widgets Ltd creates, keeps and disposes of its business "
        "records.",
    ),
    Para("plain", "Part I", "General", (1, 0)),
    Para(
        "unit", "1.1", "These rules apply to every record the company creates or receives.", (1, 1)
    ),
    Para(
        "unit",
        "1.2",
        "A record is any information created or received and kept as evidence of an activity.",
        (1, 1),
    ),
    Para(
        "unit", "1.3", "Each business unit shall appoint a records coordinator, who shall:", (1, 1)
    ),
    Para("unit", "(a)", "keep the unit's file plan up to date;", (1, 2)),
    Para("unit", "(b)", "train new staff of the unit in these rules; and", (1, 2)),
    Para("unit", "(c)", "report to the Head of Records every quarter.", (1, 2)),
    Para("plain", "Part II", "Keeping Records", (1, 0)),
    Para(
        "unit", "2.1", "Records shall be stored in the approved document management system.", (1, 1)
    ),
    Para("unit", "2.2", "Paper records shall be kept in locked cabinets, and:", (1, 1)),
    Para("unit", "(a)", "access to them shall be limited to staff who need it; and", (1, 2)),
    Para("unit", "(b)", "each removal of a file from a cabinet shall be logged.", (1, 2)),
    Para("plain", "Part III", "Disposal", (1, 0)),
    Para(
        "unit",
        "3.1",
        "Records shall be destroyed when their retention period ends, unless a legal hold applies.",
        (1, 1),
    ),
    Para(
        "unit",
        "3.2",
        "Destruction shall be approved in writing by the records coordinator.",
        (1, 1),
    ),
]
RULES_ABSENT = [
    "1.4", "1.5", "2.3", "2.4", "3.3", "4.1", "1.1(a)", "1.3(d)", "2.2(c)", "3.2(a)",
]  # fmt: skip


def _number(label: str) -> str:
    return label.strip("().")


def truth_units(paragraphs: list[Para], section_refs: bool) -> list[dict]:
    """The units the labels make: a numbered heading is "Section N" (its words: the first body
    paragraph, or its first point's); a point hangs under the unit above its level."""
    units: list[dict] = []
    open_refs: dict[int, str] = {}
    pending: dict | None = None  # a heading waiting for its first words
    for para in paragraphs:
        if para.kind == "heading":
            ref = f"Section {_number(para.label)}"
            pending = {"ref": ref, "text": None, "heading": para.text}
            units.append(pending)
            open_refs = {0: ref}
        elif para.kind == "unit":
            # a lettered list of its own (level 0) hangs under the section, as level 1 does
            level = max(para.num[1], 1) if para.num else 1
            if "." in para.label.rstrip("."):
                ref = para.label
                open_refs = {level: ref}
            else:
                ref = f"{open_refs[level - 1]}({_number(para.label)})"
                open_refs = {k: v for k, v in open_refs.items() if k < level} | {level: ref}
            units.append({"ref": ref, "text": para.text[:80]})
        elif para.kind == "body" and pending is not None and pending["text"] is None:
            pending["text"] = para.text[:80]
        if pending is not None and pending["text"] is None and para.kind == "unit":
            pending["text"] = para.text[:80]
    if not section_refs:
        for unit in units:
            unit["ref"] = unit["ref"].removeprefix("Section ")
    return units


def _document(paragraphs: list[Para], numbering: list[str], policy: bool):
    import docx
    from docx.enum.style import WD_STYLE_TYPE
    from docx.oxml import parse_xml

    document = docx.Document()
    definitions = document.part.numbering_part.element
    for child in list(definitions):
        definitions.remove(child)
    for xml in numbering:
        definitions.append(parse_xml(xml.replace(">", f" {W}>", 1)))
    if policy:
        section = document.styles.add_style("Policy Section", WD_STYLE_TYPE.PARAGRAPH)
        section.base_style = document.styles["List Paragraph"]
        section.element.get_or_add_pPr().append(
            parse_xml(f'<w:numPr {W}><w:numId w:val="1"/></w:numPr>')
        )
        linked = document.styles.add_style("Operational List", WD_STYLE_TYPE.LIST)
        linked.element.get_or_add_pPr().append(
            parse_xml(f'<w:numPr {W}><w:numId w:val="9"/></w:numPr>')
        )
    for para in paragraphs:
        style = "Policy Section" if para.style == SECTION else para.style
        paragraph = document.add_paragraph(para.text, style=style)
        if para.num is not None:
            num_id, ilvl = para.num
            paragraph._p.get_or_add_pPr().append(
                parse_xml(
                    f'<w:numPr {W}><w:ilvl w:val="{ilvl}"/><w:numId w:val="{num_id}"/></w:numPr>'
                )
            )
    return document


DOCUMENTS = {
    "word-numbered-policy.docx": (
        "Data Protection Policy", POLICY, POLICY_NUMBERING, POLICY_ABSENT, True
    ),
    "word-numbered-rules.docx": (
        "Records Management Rules", RULES, RULES_NUMBERING, RULES_ABSENT, False
    ),
}  # fmt: skip


def write(folder: Path) -> list[Path]:
    """Write both documents and their truth files into `folder`; the documents' paths."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (title, paragraphs, numbering, absent, policy) in DOCUMENTS.items():
        path = folder / name
        _document(paragraphs, numbering, policy).save(str(path))
        truth = {
            "file": name,
            "family": FAMILY,
            "source": SOURCE,
            "licence": "made for lexkb's tests",
            "title": title,
            "short_names": [],
            "units": truth_units(paragraphs, section_refs=policy),
            "absent": absent,
            "notes": "Numbers only in numbering.xml; the truth comes from the labels Word shows, "
            "written by hand beside each paragraph.",
        }
        (folder / f"{name}.truth.json").write_text(json.dumps(truth, indent=1, ensure_ascii=False))
        written.append(path)
    return written
