"""Word's automatic list numbers (numbering.xml): rendered as Word shows them, and read by the
structure builder as the units they number ("Section 2(b)"), on documents made here
(tests/support/word_policy.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from lexkb import Index
from tests.conftest import REPO
from tests.support import word_policy
from transforms.reading.docx_numbering import (
    BodyParagraph,
    ListNumber,
    format_number,
    number_texts,
    read_paragraphs,
)
from transforms.reading.elements import document_elements
from transforms.reading.source_files import discover
from transforms.structure import structure_document
from transforms.structure.builder import Builder

# Module fixtures that build: the tests taking them are in the build tier (tests/conftest.py).
BUILDING_FIXTURES = {"made"}

W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def _lvl(ilvl: int, fmt: str, text: str, start: int = 1, extra: str = "") -> str:
    return (
        f'<w:lvl w:ilvl="{ilvl}"><w:start w:val="{start}"/><w:numFmt w:val="{fmt}"/>{extra}'
        f'<w:lvlText w:val="{text}"/></w:lvl>'
    )


def _abstract(key: int, *levels: str, link: str = "") -> str:
    return f'<w:abstractNum w:abstractNumId="{key}">{link}{"".join(levels)}</w:abstractNum>'


def _num(num_id: int, abstract: int, overrides: str = "") -> str:
    return f'<w:num w:numId="{num_id}"><w:abstractNumId w:val="{abstract}"/>{overrides}</w:num>'


def _p(num: tuple[int, int] | None = None, style: str | None = None, text: str = "x") -> str:
    props = f'<w:pStyle w:val="{style}"/>' if style else ""
    if num is not None:
        props += f'<w:numPr><w:ilvl w:val="{num[1]}"/><w:numId w:val="{num[0]}"/></w:numPr>'
    return f"<w:p><w:pPr>{props}</w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>"


def _numbers(
    numbering: list[str], paragraphs: list[str], styles: str = ""
) -> list[ListNumber | None]:
    document = f"<w:document {W}><w:body>{''.join(paragraphs)}</w:body></w:document>"
    parts = (
        document.encode(),
        f"<w:numbering {W}>{''.join(numbering)}</w:numbering>".encode(),
        f"<w:styles {W}>{styles}</w:styles>".encode() if styles else None,
    )
    return [p.number for p in read_paragraphs(*parts)]


def _labels(numbers: list[ListNumber | None]) -> list[str | None]:
    return [n.label if n else None for n in numbers]


def _refs(numbers: list[ListNumber | None]) -> list[str | None]:
    return [n.ref if n else None for n in numbers]


SECTIONS = _abstract(
    1,
    _lvl(0, "decimal", "%1."),
    _lvl(1, "lowerLetter", "(%2)"),
    _lvl(2, "lowerRoman", "(%3)"),
)


# the renderer ---------------------------------------------------------------------------------
def test_number_formats_render_as_word_writes_them():
    assert [format_number(v, "lowerLetter") for v in (1, 26, 27, 28)] == ["a", "z", "aa", "bb"]
    assert [format_number(v, "upperRoman") for v in (4, 9, 1994)] == ["IV", "IX", "MCMXCIV"]
    assert format_number(14, "lowerRoman") == "xiv"
    assert format_number(7, "decimalZero") == "07"
    assert [format_number(v, "ordinal") for v in (1, 11, 22, 103)] == [
        "1st",
        "11th",
        "22nd",
        "103rd",
    ]
    assert format_number(3, "none") == ""
    assert format_number(3, "chineseCounting") is None  # not guessed


def test_levels_nest_restart_and_cite_under_the_item_above():
    paragraphs = [_p((1, lvl)) for lvl in (0, 1, 1, 2, 2, 0, 1)] + [_p()]
    numbers = _numbers([SECTIONS, _num(1, 1)], paragraphs)
    assert _labels(numbers) == ["1.", "(a)", "(b)", "(i)", "(ii)", "2.", "(a)", None]
    assert _refs(numbers) == ["1", "1(a)", "1(b)", "1(b)(i)", "1(b)(ii)", "2", "2(a)", None]
    assert [n.level for n in numbers if n] == [0, 1, 1, 2, 2, 0, 1]


def test_templates_with_several_numbers_are_their_own_ref():
    abstract = _abstract(
        1,
        _lvl(0, "decimal", "Section %1"),
        _lvl(1, "decimal", "%1.%2"),
        _lvl(2, "lowerLetter", "(%3)"),
    )
    numbers = _numbers([abstract, _num(1, 1)], [_p((1, lvl)) for lvl in (0, 1, 1, 2, 0, 1)])
    assert _labels(numbers) == ["Section 1", "1.1", "1.2", "(a)", "Section 2", "2.1"]
    assert _refs(numbers) == ["1", "1.1", "1.2", "1.2(a)", "2", "2.1"]


def test_start_values_and_the_schema_default():
    abstract = _abstract(1, _lvl(0, "decimal", "%1.", start=11))
    no_start = _abstract(
        2, '<w:lvl w:ilvl="0"><w:numFmt w:val="decimal"/><w:lvlText w:val="%1"/></w:lvl>'
    )
    numbers = _numbers(
        [abstract, no_start, _num(1, 1), _num(2, 2)],
        [_p((1, 0)), _p((1, 0)), _p((2, 0)), _p((2, 0))],
    )
    assert _labels(numbers) == ["11.", "12.", "0", "1"]


def test_instances_of_one_list_continue_unless_a_start_override_restarts_them():
    letters = _abstract(1, _lvl(0, "lowerLetter", "(%1)"))
    restart = '<w:lvlOverride w:ilvl="0"><w:startOverride w:val="1"/></w:lvlOverride>'
    numbers = _numbers(
        [
            letters,
            _num(1, 1),
            _num(2, 1),
            _num(3, 1, restart),
            _num(4, 1, restart.replace('"1"/>', '"5"/>')),
        ],
        [_p((1, 0)), _p((1, 0)), _p((2, 0)), _p((3, 0)), _p((3, 0)), _p((1, 0)), _p((4, 0))],
    )
    # numId 2 continues numId 1; 3 restarts at (a) the first time only; 1 goes on from there
    assert _labels(numbers) == ["(a)", "(b)", "(c)", "(a)", "(b)", "(c)", "(e)"]


def test_a_level_override_redefines_the_level_for_its_instance_only():
    override = '<w:lvlOverride w:ilvl="1">' + _lvl(1, "upperLetter", "%2.") + "</w:lvlOverride>"
    numbers = _numbers(
        [SECTIONS, _num(1, 1), _num(2, 1, override)],
        [_p((1, 0)), _p((2, 1)), _p((2, 1)), _p((1, 0)), _p((1, 1))],
    )
    assert _labels(numbers) == ["1.", "A.", "B.", "2.", "(a)"]
    assert _refs(numbers) == ["1", "1(A)", "1(B)", "2", "2(a)"]


def test_level_restart_follows_lvl_restart():
    def numbers_with(restart: str) -> list[str | None]:
        abstract = _abstract(
            1,
            _lvl(0, "decimal", "%1."),
            _lvl(1, "lowerLetter", "(%2)"),
            _lvl(2, "lowerRoman", "(%3)", extra=f'<w:lvlRestart w:val="{restart}"/>'),
        )
        levels = (0, 1, 2, 2, 1, 2, 0, 1, 2)
        return _labels(_numbers([abstract, _num(1, 1)], [_p((1, lvl)) for lvl in levels]))

    # "1": only a level-0 item restarts level 2; "0": nothing does
    assert numbers_with("1") == ["1.", "(a)", "(i)", "(ii)", "(b)", "(iii)", "2.", "(a)", "(i)"]
    assert numbers_with("0") == ["1.", "(a)", "(i)", "(ii)", "(b)", "(iii)", "2.", "(a)", "(iv)"]


def test_legal_numbering_shows_every_number_in_decimal():
    def labels(legal: str) -> list[str | None]:
        abstract = _abstract(
            1, _lvl(0, "upperRoman", "Part %1"), _lvl(1, "decimal", "%1.%2", extra=legal)
        )
        return _labels(_numbers([abstract, _num(1, 1)], [_p((1, lvl)) for lvl in (0, 1, 0, 1)]))

    assert labels("<w:isLgl/>") == ["Part I", "1.1", "Part II", "2.1"]
    assert labels("") == ["Part I", "I.1", "Part II", "II.1"]


STYLES = (
    '<w:style w:type="paragraph" w:default="1" w:styleId="Normal"/>'
    '<w:style w:type="paragraph" w:styleId="Clause"><w:pPr><w:numPr><w:numId w:val="1"/>'
    "</w:numPr></w:pPr></w:style>"
    '<w:style w:type="paragraph" w:styleId="SubClause"><w:basedOn w:val="Clause"/>'
    '<w:pPr><w:numPr><w:ilvl w:val="1"/></w:numPr></w:pPr></w:style>'
    '<w:style w:type="numbering" w:styleId="Outline"><w:pPr><w:numPr><w:numId w:val="2"/>'
    "</w:numPr></w:pPr></w:style>"
)


def test_numbering_from_styles_their_base_and_numbering_style_links():
    linked = _abstract(
        1,
        _lvl(0, "decimal", "%1.", extra='<w:pStyle w:val="Clause"/>'),
        _lvl(1, "lowerLetter", "(%2)"),
    )
    outline = _abstract(2, _lvl(0, "upperLetter", "%1."), link='<w:styleLink w:val="Outline"/>')
    via_style = _abstract(3, link='<w:numStyleLink w:val="Outline"/>')
    numbering = [linked, outline, via_style, _num(1, 1), _num(2, 2), _num(3, 3)]
    paragraphs = [
        _p(style="Clause"),  # the style's list, at the level linked to the style
        _p(style="SubClause"),  # numId from the base style, level from its own
        _p(style="Clause").replace("</w:pPr>", '<w:numPr><w:numId w:val="0"/></w:numPr></w:pPr>'),
        _p(style="Clause"),
        _p((3, 0)),  # an abstract that takes its levels from the numbering style "Outline"
        _p((2, 0)),  # and counts with the list that defines them
    ]
    numbers = _numbers(numbering, paragraphs, STYLES)
    assert _labels(numbers) == ["1.", "(a)", None, "2.", "A.", "B."]


def test_bullets_and_section_break_marks_show_no_number():
    bullets = _abstract(2, _lvl(0, "bullet", "•"))
    mark = '<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr><w:sectPr/></w:pPr></w:p>'
    numbers = _numbers(
        [SECTIONS, bullets, _num(1, 1), _num(2, 2)], [_p((2, 0)), _p((1, 0)), mark, _p((1, 0))]
    )
    assert _labels(numbers) == [None, "1.", None, "2."]


def test_rows_take_words_labels_where_unstructured_wrote_another_or_none():
    paragraphs = [
        BodyParagraph("General", ListNumber("Part I", "I", 0)),
        BodyParagraph("These rules apply to every record.", ListNumber("1.1", "1.1", 1)),
        BodyParagraph("Training", ListNumber("12.", "12", 0)),
        BodyParagraph("Unnumbered words of a long paragraph that a page break splits.", None),
        BodyParagraph("a. typed in the text", None),
    ]
    rows = [
        ("Part I General", "ListItem"),
        ("I.1 These rules apply to every record.", "ListItem"),
        ("Name Owner", "Table"),
        ("Training", "Title"),
        ("Unnumbered words of a long paragraph", "NarrativeText"),
        ("", "PageBreak"),
        ("that a page break splits.", "NarrativeText"),
        ("a. typed in the text", "ListItem"),
    ]
    texts, categories = zip(*rows, strict=True)
    out = number_texts(paragraphs, list(texts), list(categories))
    assert [text for text, _ in out] == [
        "Part I General",
        "1.1 These rules apply to every record.",
        "Name Owner",
        "12. Training",
        "Unnumbered words of a long paragraph",
        "",
        "that a page break splits.",
        "a. typed in the text",
    ]
    assert [n.ref if n else None for _, n in out] == [
        "I",
        "1.1",
        None,
        "12",
        None,
        None,
        None,
        None,
    ]


# the structure builder ------------------------------------------------------------------------
def _units(lines: list[tuple[str, tuple[str, int] | None]]) -> dict[str, str]:
    builder = Builder("d", "plain", paged=False)
    for block, (text, listed) in enumerate(lines, start=1):
        builder.feed(text, "ListItem" if listed else "Text", None, block, listed)
    builder.close_unit()
    return {unit.ref: " ".join(unit.lines) for unit in builder.units}


def test_a_word_numbered_point_is_a_unit_whatever_its_words():
    units = _units(
        [
            ("1. Company Position", ("1", 0)),
            ("It is the policy of the Company to prevent money laundering.", None),
            ("Key components of the policy include:", None),
            ("1. Compliance Officer Designation", ("1", 0)),  # a second list in the section
            ("a. the officer reports to the board", ("1(a)", 1)),  # its point is its text
            ("2. Training and Education", ("2", 0)),
            ("2. Scope", ("2", 0)),
            ("a. all personal data held by the company;", ("2(a)", 1)),
            ("(i) on paper", ("2(a)(i)", 2)),
            ("b. all staff of the company.", ("2(b)", 1)),
        ]
    )
    assert units["2(a)"] == "a. all personal data held by the company;"
    assert units["2(a)(i)"] == "(i) on paper"
    assert units["2(b)"] == "b. all staff of the company."
    assert "1(a)" not in units and "a. the officer reports to the board" in units["1"]


def test_a_lettered_list_of_its_own_is_lettered_under_its_section_once():
    units = _units(
        [
            ("5. Lawful Basis", ("5", 0)),
            ("The company processes personal data only where:", None),
            ("(a) the data subject has consented;", ("a", 0)),
            ("(b) a contract requires it.", ("b", 0)),
            ("Again, in other words:", None),
            ("(a) the data subject agreed.", ("a", 0)),
        ]
    )
    assert units["5(a)"] == "(a) the data subject has consented;"
    assert units["5(b)"].startswith("(b) a contract requires it.")
    assert "(a) the data subject agreed." in units["5(b)"]


# the documents made here, against their truth -------------------------------------------------
@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("word_policy")
    word_policy.write(folder)
    return folder


@pytest.mark.parametrize("name", list(word_policy.DOCUMENTS))
def test_every_truth_unit_is_a_unit_with_its_words(made: Path, name: str):
    truth = json.loads((made / f"{name}.truth.json").read_text())
    source = discover([made / name])[0]
    _, _, chunks = structure_document(source, document_elements(source))
    paragraphs = chunks.filter(pl.col("chunk_level") == "paragraph")
    text = {r: " ".join(c.split()) for r, c in paragraphs.select("ref", "content").iter_rows()}
    for unit in truth["units"]:
        ref = unit["ref"].removeprefix("Section ")
        if unit.get("heading") and ref not in text:
            continue  # a heading with no words of its own: its section's chunk
        assert ref in text, ref
        assert unit["text"][:40] in text[ref], ref
    assert not {ref.removeprefix("Section ") for ref in truth["absent"]} & set(text)


@pytest.fixture(scope="module")
def policy(made: Path) -> Index:
    root = made / "root"
    done = subprocess.run(
        [sys.executable, "-c", "from lexkb.cli.main import run; run()", "build"]
        + [str(made / "word-numbered-policy.docx"), "--out", str(root), "--embedder", "none"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return Index.open(root)


def test_a_built_policy_answers_its_word_numbers_exactly(policy: Index):
    key = policy.documents()[0]["document_key"]
    found = policy.get(f"{key} Section 2(b)")
    assert found.match == "exact"
    assert found.hit.ref == "2(b)"
    assert found.hit.text.endswith(
        "b. all employees, contractors, agents and temporary staff of the company; and"
    )
    # the restarted list, the overridden level and the list from a numbering style
    for ref, words in [
        ("Section 6(a)", "(a) The right of access"),
        ("Section 9(B)", "B. Record the facts"),
        ("Section 11(b)", "(b) The owner keeps"),
        ("Section 3(b)(ii)", "(ii) disclosure by transmission"),
    ]:
        found = policy.get(f"{key} {ref}")
        assert (found.match, words in found.hit.text) == ("exact", True), ref
    assert policy.get(f"{key} Section 6(c)").match not in ("exact", "contains")
