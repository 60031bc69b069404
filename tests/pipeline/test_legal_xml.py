"""Legal XML read natively: USLM, CLML and Formex, their structure taken from the markup.

Small documents written here by hand cover each dialect's nesting, notes and quoted text, and
hostile files (entities, malformed XML) that must be quarantined with their reason. The real
files in ../shared/data are checked against their own markup, the GDPR's Formex against the gold
units of evaluation_data/gdpr.py, and the US Code's USLM against the truth of its HTML rendering.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import polars as pl
import pytest
from lxml import etree
from rapidfuzz.fuzz import partial_ratio, ratio

from tests.conftest import shared_file
from transforms.reading.elements import document_elements
from transforms.reading.legal_xml.read import local
from transforms.reading.quarantine import SourceError
from transforms.reading.source_files import SourceFile, scan
from transforms.structure import structure_legal_xml

USLM_NS = "http://xml.house.gov/schemas/uslm/1.0"
CLML_NS = "http://www.legislation.gov.uk/namespaces/legislation"


def _source(path: Path) -> SourceFile:
    return SourceFile(path.name, path, "xml", "0" * 64, path.stat().st_size)


def _build(path: Path) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    source = _source(path)
    return structure_legal_xml(source, document_elements(source))


@cache
def _built(path: str) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    return _build(Path(path))


def _units(chunks: pl.DataFrame) -> dict[str, str]:
    rows = chunks.filter(pl.col("chunk_level") == "paragraph")
    return {r: t for r, t in zip(rows["ref"], rows["content"], strict=True) if r}


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# hand-written documents ----------------------------------------------------------------------
USLM_DOC = f"""<?xml version="1.0" encoding="UTF-8"?>
<uscDoc xmlns="{USLM_NS}" identifier="/us/usc/t99"><main>
<title identifier="/us/usc/t99"><num value="99">Title 99—</num><heading>TEST MATTERS</heading>
<chapter><num value="1">CHAPTER 1—</num><heading>GENERAL</heading>
<section identifier="/us/usc/t99/s5"><num value="5">§ 5.</num><heading> Rights</heading>
<chapeau>The owner may—</chapeau>
<subsection identifier="/us/usc/t99/s5/a"><num value="a">(a)</num><heading> Scope.—</heading>
<chapeau>Subject to this title, a person—</chapeau>
<paragraph><num value="1">(1)</num><chapeau> shall have the right—</chapeau>
<subparagraph><num value="A">(A)</num><chapeau> to claim—</chapeau>
<clause><num value="i">(i)</num><content> authorship of the work;</content></clause>
<clause><num value="ii">(ii)</num><content> credit in a notice;</content></clause>
</subparagraph></paragraph></subsection>
<subsection><num value="b">(b)</num><content>Only the author has these rights.</content></subsection>
<sourceCredit>(Pub. L. 1-2, Jan. 1, 2000.)</sourceCredit>
<notes><note topic="amendments"><heading>Amendments</heading><p>2001—Subsec. (b) amended.</p></note></notes>
</section>
<section identifier="/us/usc/t99/s5A"><num value="5A">§ 5A.</num><heading> Other rights</heading>
<subsection><num value="a">(a)</num><content>A different subsection (a).</content></subsection>
</section>
<section identifier="/us/usc/t99/s6" status="repealed"><num value="6">[§ 6.</num>
<heading> Repealed. Pub. L. 3-4]</heading></section>
</chapter></title></main></uscDoc>"""

CLML_DOC = f"""<?xml version="1.0" encoding="UTF-8"?>
<Legislation xmlns="{CLML_NS}" xmlns:dc="http://purl.org/dc/elements/1.1/">
<Metadata><dc:title>Test Act 2001</dc:title></Metadata>
<Primary><Body>
<Part><Number>Part 1</Number><Title>Main provisions</Title>
<P1group><Title>Duties</Title><P1><Pnumber>7</Pnumber><P1para>
<P2><Pnumber>1</Pnumber><P2para><Text>A body must act fairly.<FootnoteRef Ref="f00001"/></Text>
</P2para></P2>
<P2><Pnumber>2</Pnumber><P2para><Text>In this section—</Text>
<P3><Pnumber>a</Pnumber><P3para><Text>“body” means a public body;</Text></P3para></P3>
</P2para></P2>
<P2><Pnumber>3</Pnumber><P2para><Text>For subsection (4) of section 9 of the 1990 Act there
shall be substituted—</Text><BlockAmendment><P2><Pnumber>4</Pnumber><P2para>
<Text>The quoted words of the other Act.</Text></P2para></P2></BlockAmendment>
</P2para></P2></P1para></P1></P1group>
</Part></Body>
<Schedules><Schedule><Number>SCHEDULE 1</Number><TitleBlock><Title>Procedure</Title></TitleBlock>
<ScheduleBody><P1><Pnumber>3</Pnumber><P1para><P2><Pnumber>2</Pnumber><P2para>
<Text>The Board may regulate its own<Character Name="NonBreakingSpace"/>procedure.</Text></P2para></P2></P1para></P1>
</ScheduleBody></Schedule></Schedules></Primary>
<Footnotes><Footnote id="f00001"><FootnoteText><Para><Text>S.I. 1990/1.</Text></Para>
</FootnoteText></Footnote></Footnotes></Legislation>"""

FORMEX_DOC = """<?xml version="1.0" encoding="UTF-8"?>
<ACT><TITLE><TI><P>Regulation (EU) 2099/1 of the Test Council</P>
<P>(Text with EEA relevance)</P></TI></TITLE>
<PREAMBLE><GR.CONSID>
<CONSID><NP><NO.P>(1)</NO.P><TXT>Whereas testing matters.<NOTE NOTE.ID="E0001"><P>OJ L 1,
1.1.2000, p. 1.</P></NOTE></TXT></NP></CONSID>
</GR.CONSID></PREAMBLE>
<ENACTING.TERMS><DIVISION><TITLE><TI><P>CHAPTER I</P></TI><STI><P>General</P></STI></TITLE>
<ARTICLE IDENTIFIER="002"><TI.ART>Article 2</TI.ART><STI.ART>Scope</STI.ART>
<PARAG IDENTIFIER="002.001"><NO.PARAG>1.</NO.PARAG><ALINEA><P>This applies to:</P>
<LIST><ITEM><NP><NO.P>(a)</NO.P><TXT>the <QUOT.START CODE="2018"/>first<QUOT.END
CODE="2019"/> case;</TXT></NP></ITEM></LIST></ALINEA></PARAG>
</ARTICLE>
<ARTICLE IDENTIFIER="003"><TI.ART>Article 3</TI.ART><STI.ART>Definitions</STI.ART>
<ALINEA>For the purposes of this Regulation:</ALINEA>
</ARTICLE></DIVISION></ENACTING.TERMS></ACT>"""

AKN_NS = "http://docs.oasis-open.org/legaldocml/ns/akn/3.0"
AKN_DOC = f"""<?xml version="1.0" encoding="UTF-8"?>
<akomaNtoso xmlns="{AKN_NS}"><act name="test">
<meta><identification source="#test"><FRBRWork><FRBRthis value="/akn/xx/act/2020/1/main"/>
<FRBRname value="Test Act"/></FRBRWork></identification></meta>
<preface><p><docTitle>Data Act 2020</docTitle></p></preface>
<preamble><recitals><recital eId="rec_1"><num>(1)</num><p>Data matters.</p></recital></recitals>
</preamble>
<body><chapter eId="chp_1"><num>CHAPTER I</num><heading>General</heading>
<article eId="art_5"><num>Article 5</num><heading>Duties</heading>
<paragraph eId="art_5__para_1"><num>1.</num><content><p>A holder shall act.</p></content></paragraph>
<paragraph eId="art_5__para_2"><num>2.</num><list eId="art_5__para_2__list_1">
<intro><p>A holder shall not:<authorialNote marker="1"><p>OJ L 9, p. 1.</p></authorialNote></p>
</intro><point eId="art_5__para_2__list_1__point_a"><num>(a)</num><content><p>sell data;</p>
</content></point></list></paragraph>
<paragraph eId="art_5__para_3"><num>3.</num><content><p>Article 9 of Act 1999 is replaced by:
<mod><quotedStructure><article><num>Article 9</num><paragraph><num>1.</num><content><p>Quoted
words.</p></content></paragraph></article></quotedStructure></mod></p></content></paragraph>
</article></chapter>
<section eId="sec_6"><num>6</num><heading>Offences</heading>
<subsection><num>(1)</num><content><p>It is an offence.</p></content></subsection></section>
</body></act></akomaNtoso>"""

BILLION_LAUGHS = f"""<?xml version="1.0"?>
<!DOCTYPE uscDoc [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<uscDoc xmlns="{USLM_NS}"><main><section><num value="1">§ 1.</num>
<content>&lol3;</content></section></main></uscDoc>"""

EXTERNAL_ENTITY = f"""<?xml version="1.0"?>
<!DOCTYPE Legislation [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<Legislation xmlns="{CLML_NS}"><Primary><Body><P1><Pnumber>1</Pnumber><P1para>
<Text>&secret;</Text></P1para></P1></Body></Primary></Legislation>"""


def test_uslm_nests_to_the_last_level_and_keeps_notes_apart(tmp_path):
    documents, sections, chunks = _build(_write(tmp_path, "t99.xml", USLM_DOC))
    units = _units(chunks)
    assert documents["title"][0] == "Title 99—Test Matters"
    assert units["§ 5"] == "The owner may—"
    assert units["§ 5(a)(1)(A)(i)"] == "(i) authorship of the work;"
    assert units["§ 5(a)(1)(A)(ii)"] == "(ii) credit in a notice;"
    assert units["§ 5(a)"].startswith("(a) Scope.—Subject to this title")
    assert "authorship" not in units["§ 5(a)"]  # each level holds its own words only
    assert units["§ 5A(a)"] == "(a) A different subsection (a)."
    assert units["§ 5(b)"] == "(b) Only the author has these rights."
    # the repealed section has no text in force: only its bracketed line, as a note
    assert not any(ref.startswith("§ 6") for ref in units)
    notes = chunks.filter(pl.col("chunk_level") == "note")
    assert any("2001—Subsec. (b) amended." in t for t in notes["content"])
    assert any("Pub. L. 1-2" in t for t in notes["content"])
    assert not any("amended" in t or "Pub. L." in t for t in units.values())
    section_chunk = chunks.filter((pl.col("chunk_level") == "section") & (pl.col("ref") == "§ 5"))[
        "chunk_id"
    ][0]
    assert set(notes.filter(pl.col("ref") == "§ 5")["parent_chunk_id"]) == {section_chunk}
    assert sections.filter(pl.col("section_number") == "§ 5")["title"][0] == "Rights"


USLM_PRINTED_WHOLE = f"""<?xml version="1.0" encoding="UTF-8"?>
<uscDoc xmlns="{USLM_NS}" identifier="/us/usc/t98"><main>
<title identifier="/us/usc/t98"><num value="98">Title 98—</num><heading>MORE MATTERS</heading>
<section identifier="/us/usc/t98/s7"><num value="7">§ 7.</num><heading> Limits</heading>
<subsection><num value="a">(a)</num><content>A work may be copied for teaching.</content></subsection>
<subsection><num value="c">(c)</num><heading> Exceptions.—</heading>
<paragraph><num value="1">(1)</num><content> Fading of a painting is no distortion.</content></paragraph>
<paragraph><num value="2">(2)</num><content> Lighting a work for display is no distortion.</content></paragraph>
</subsection></section></title></main></uscDoc>"""


def test_a_unit_printed_with_its_paragraphs_is_read_once_in_its_section(tmp_path):
    _, _, chunks = _build(_write(tmp_path, "t98.xml", USLM_PRINTED_WHOLE))
    units = _units(chunks)
    # "(c) Exceptions.—" has no words of its own: it is printed with its paragraphs ...
    assert "Fading" in units["§ 7(c)"] and units["§ 7(c)(1)"].startswith("(1) Fading")
    # ... and the section reads each sentence once, though (c)(1) is a unit too
    section = chunks.filter(pl.col("chunk_level") == "section")["content"][0]
    assert section.count("Fading of a painting") == 1
    assert section.count("Lighting a work") == 1
    assert "copied for teaching" in section


def test_clml_cites_sections_and_schedules_and_keeps_quoted_text_in_place(tmp_path):
    documents, sections, chunks = _build(_write(tmp_path, "act.xml", CLML_DOC))
    units = _units(chunks)
    assert documents["title"][0] == "Test Act 2001"
    assert units["section 7(1)"] == "(1) A body must act fairly."
    assert units["section 7(2)(a)"] == "(a) “body” means a public body;"
    assert units["Schedule 1, paragraph 3(2)"] == "(2) The Board may regulate its own procedure."
    # the amended Act's subsection (4) is text of section 7(3), never a unit of this Act
    assert "section 7(4)" not in units and "section 7(3)(4)" not in units
    assert "The quoted words of the other Act." in units["section 7(3)"]
    assert sections.filter(pl.col("section_number") == "section 7")["title"][0] == "Duties"
    notes = chunks.filter(pl.col("chunk_level") == "note")
    assert notes.select("ref", "content").rows() == [("section 7(1)", "S.I. 1990/1.")]


def test_formex_units_recitals_and_footnotes(tmp_path):
    documents, _, chunks = _build(_write(tmp_path, "reg.xml", FORMEX_DOC))
    units = _units(chunks)
    assert documents["title"][0] == "Regulation (EU) 2099/1 of the Test Council"
    assert units["Recital 1"] == "(1) Whereas testing matters."
    assert units["Article 2(1)"] == "1. This applies to:\n(a) the ‘first’ case;"
    assert units["Article 3"] == "For the purposes of this Regulation:"
    notes = chunks.filter(pl.col("chunk_level") == "note")
    assert notes["content"].to_list() == ["OJ L 1, 1.1.2000, p. 1."]
    assert notes["ref"].to_list() == ["Recital 1"]


def test_akoma_ntoso_articles_points_and_quoted_structure(tmp_path):
    documents, sections, chunks = _build(_write(tmp_path, "act.xml", AKN_DOC))
    units = _units(chunks)
    assert documents["title"][0] == "Data Act 2020"
    assert units["Recital 1"] == "(1) Data matters."
    assert units["Article 5(1)"] == "(1) A holder shall act."
    assert units["Article 5(2)"] == "(2) A holder shall not:"
    assert units["Article 5(2)(a)"] == "(a) sell data;"
    assert "Quoted words." in units["Article 5(3)"]
    assert not any(ref.startswith("Article 9") for ref in units)
    assert units["section 6(1)"] == "(1) It is an offence."
    notes = chunks.filter(pl.col("chunk_level") == "note")
    assert notes.select("ref", "content").rows() == [("Article 5(2)", "OJ L 9, p. 1.")]
    assert sections.filter(pl.col("section_number") == "Article 5")["title"][0] == "Duties"


@pytest.mark.parametrize(
    ("name", "text", "kind"),
    [
        ("laughs.xml", BILLION_LAUGHS, "xml_entities"),
        ("external.xml", EXTERNAL_ENTITY, "xml_entities"),
        ("broken.xml", f'<uscDoc xmlns="{USLM_NS}"><main><section></main>', "invalid_xml"),
    ],
)
def test_hostile_or_malformed_xml_is_quarantined_with_its_reason(tmp_path, name, text, kind):
    path = _write(tmp_path, name, text)
    found = scan([tmp_path])
    assert [s.key for s in found.sources] == [name]  # a legal root: it goes to the parser
    with pytest.raises(SourceError) as caught:
        document_elements(_source(path))
    assert caught.value.kind == kind
    assert "root:x:" not in caught.value.reason and "lol" * 3 not in caught.value.reason


def test_xml_over_the_size_bound_is_refused_before_parsing(tmp_path):
    from transforms.reading.legal_xml.read import parse

    path = _write(tmp_path, "t99.xml", USLM_DOC)
    with pytest.raises(SourceError) as caught:
        parse(path, max_mb=0.001)
    assert caught.value.kind == "too_large"


def test_other_xml_is_listed_not_parsed(tmp_path):
    _write(tmp_path, "sitemap.xml", '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>')
    found = scan([tmp_path])
    assert not found.sources
    assert "root <urlset>" in found.ignored["sitemap.xml"]


@pytest.mark.build
def test_a_build_reads_each_dialect_and_quarantines_the_hostile_file(tmp_path):
    """Through the whole build: the scan lets legal XML in, the parse worker reads it, the
    structure step takes its units, `get` finds them; entities are quarantined, not expanded."""
    from lexkb import Index
    from pipelines.in_process import run_build

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, text in [
        ("t99.xml", USLM_DOC),
        ("act.xml", CLML_DOC),
        ("reg.xml", FORMEX_DOC),
        ("akn.xml", AKN_DOC),
        ("laughs.xml", BILLION_LAUGHS),
    ]:
        _write(corpus, name, text)
    report = run_build([corpus], tmp_path / "index", embedder="none")
    assert report.documents == 4
    index = Index.open(tmp_path / "index")
    quarantine = pl.read_parquet(index.snapshot.table_path("quarantine"))
    assert quarantine.select("source_name", "stage", "kind").rows() == [
        ("laughs.xml", "parse", "xml_entities")
    ]
    found = index.get("§ 5(a)(1)(A)(ii)")
    assert (found.match, found.hit.ref) == ("exact", "§ 5(a)(1)(A)(ii)")
    assert index.get("§ 5A(a)").hit.text == "(a) A different subsection (a)."
    assert index.get("Schedule 1, paragraph 3(2)").match == "exact"
    point = index.get("Article 2(1)(a)")
    assert (point.match, point.hit.ref) == ("contains", "Article 2(1)")
    assert index.get("Article 2(2)").match != "exact"


# the real files ------------------------------------------------------------------------------
def test_us_code_title_17_from_uslm():
    path = shared_file("realdocs", "xml", "usc17.xml")
    documents, sections, chunks = _built(str(path))
    units = _units(chunks)
    root = etree.parse(str(path)).getroot()
    in_force = [s for s in root.iter(f"{{{USLM_NS}}}section") if not s.get("status")]
    assert len(in_force) == 136
    numbers = {s.find(f"{{{USLM_NS}}}num").get("value") for s in in_force}
    headed = set(sections.filter(pl.col("section_number").str.starts_with("§ "))["section_number"])
    assert {f"§ {n}" for n in numbers} <= headed
    assert documents["title"][0] == "Title 17—Copyrights"
    # letter-suffixed sections are their own: § 106A(a) is not § 106's
    assert "§ 106(a)" not in units
    assert units["§ 106A(a)"].startswith("(a) Rights of Attribution and Integrity")
    assert units["§ 512(c)(1)(A)(i)"].startswith("(i) does not have actual knowledge")
    assert units["§ 512(i)"].startswith("(i) Conditions for Eligibility")
    # each unit's text is the markup's own: spot-check every subsection's first words
    for element in root.iter(f"{{{USLM_NS}}}subsection"):
        identifier = element.get("identifier") or ""
        match = re.fullmatch(r"/us/usc/t17/s(\w+)/(\w+)", identifier)
        if match and f"§ {match[1]}({match[2]})" in units:
            content = element.find(f"{{{USLM_NS}}}content")
            if content is not None and content.text and content.text.strip():
                assert content.text.strip()[:40] in units[f"§ {match[1]}({match[2]})"]
    assert not any(re.search(r"\[\d+\]$", ref) for ref in units)
    notes = chunks.filter(pl.col("chunk_level") == "note")
    assert notes.height > 300 and not notes["content"].is_in(list(units.values())).any()


def test_us_code_from_xml_agrees_with_its_html_rendering():
    """17 U.S.C. from USLM against the truth written from the HTML (a later release): the units
    both contain, first words compared as the realdocs scorer does."""
    truth = json.loads(shared_file("realdocs", "usc17.htm.truth.json").read_text())
    _, _, chunks = _built(str(shared_file("realdocs", "xml", "usc17.xml")))
    # A section without words of its own before its subsections is its section chunk.
    held = chunks.filter(pl.col("chunk_level") == "section")
    units = {**dict(zip(held["ref"], held["content"], strict=True)), **_units(chunks)}

    def words(text: str) -> str:
        """Without the labels and headings in front ("§ 512. ... (a) Transitory Digital
        Network Communications.— (1) In general.—"), as the scorer strips a unit's and its
        children's."""
        text = re.sub(r"^(?:§\s*\S+\s*|\(\w{1,4}\)\s*|[^.—\n]{1,150}\.—\s*)+", "", text)
        return " ".join(
            text.replace("’", "'").replace("“", '"').replace("”", '"').split()
        ).casefold()

    both = [u for u in truth["units"] if u["ref"] in units]
    agree = 0
    for unit in both:
        own = words(units[unit["ref"]])
        heading = words(unit.get("heading") or "")
        expected = words(unit["text"])[:60]
        if heading and own.startswith(heading):
            own = words(own[len(heading) :].lstrip(" .—-:"))
        # As the realdocs scorer counts it: a unit that is only its label and heading (its
        # words are its children's) is right.
        only_heading = not own or (not heading and len(own) < 80 and own.endswith(("—", ".—")))
        agree += only_heading or partial_ratio(expected, own[: len(expected) + 15]) >= 90
    share = agree / len(both)
    print(f"usc17: {len(both)} of {len(truth['units'])} truth units in the XML; {share:.1%} agree")
    assert len(both) >= 0.7 * len(truth["units"])
    assert share >= 0.97


def test_uk_act_from_clml():
    path = shared_file("realdocs", "xml", "ukpga_20000032_en.xml")
    documents, built, chunks = _built(str(path))
    units = _units(chunks)
    assert documents["title"][0] == "Police (Northern Ireland) Act 2000"
    root = etree.parse(str(path)).getroot()
    body = next(e for e in root.iter() if local(e) == "Body")
    ids = {e.get("id") for e in body.iter() if local(e) == "P1" and e.get("id")}
    expected = {f"section {i.removeprefix('section-')}" for i in ids}
    assert expected <= set(built["section_number"])
    assert len(expected) > 75
    for element in root.iter(f"{{{CLML_NS}}}P2"):
        found = re.fullmatch(r"section-(\d+[A-Z]*)-(\d+[A-Z]*)", element.get("id") or "")
        if found:
            ref = f"section {found[1]}({found[2]})"
            first = next(t for t in element.iter(f"{{{CLML_NS}}}Text"))
            assert " ".join("".join(first.itertext()).split())[:40] in units[ref]
    assert units["Schedule 1, paragraph 1(1)"].startswith("(1) The Board shall not be regarded")


def test_gdpr_from_formex_matches_the_gold_units():
    path = shared_file("gdpr", "gdpr-en.xml")
    from evaluation_data.gdpr import load, normalize

    gold, titles = load(path)
    _, sections, chunks = _built(str(path))
    units = _units(chunks)
    right = sum(1 for u in gold if u.ref in units and ratio(normalize(units[u.ref]), u.text) >= 90)
    assert (right, len(gold)) == (562, 562)
    found = dict(zip(sections["section_number"], sections["title"], strict=True))
    assert sum(normalize(found.get(f"Article {n}", "")) == t for n, t in titles.items()) >= 98
