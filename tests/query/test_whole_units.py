"""A unit without sub-paragraphs is found as itself, with its citations (issue 36, item 5).

An article with no numbered paragraphs, or a section whose text is one paragraph, is stored as a
section chunk with one paragraph below it. Asking for it must answer one chunk, `exact`, with the
citations that land on either chunk, and `hop` from it must not be "ambiguous".
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from lexkb import Index

pytestmark = pytest.mark.build

REPO = Path(__file__).resolve().parents[2]

REGULATION = """# Regulation (EU) 2099/1 of the European Parliament and of the Council on widget safety

## Article 45
Scope

1. This Regulation applies to widgets placed on the market, subject to Article 46.

2. Member States shall apply Article 46 to imported widgets.

## Article 46
Penalties

Member States shall lay down the rules on penalties applicable to infringements of this Regulation and shall take all measures necessary to ensure that they are implemented.

## Article 47
Reporting

1. The Commission shall report on the application of Article 46 by 2030.

2. The report shall cover the widgets referred to in Article 45(1).
"""

ACT = """# Widget Safety Act 2099

## 6 Offence of selling unsafe widgets

(1) A person who sells an unsafe widget is guilty of an offence, subject to the defence in section 7.

(2) Proceedings under this section may be brought only with consent.

## 7 Defence of due diligence

It is a defence for a person charged with an offence under section 6 to prove that the person took all reasonable steps to avoid committing it.

## 8 Penalties

(1) A person guilty of an offence under section 6 is liable to a fine.

(2) Nothing in this section limits the defence in section 7.

(3) Words used in this section have the meanings given in section 9.

## 9 Interpretation

(1) In this Act a widget is unsafe when it fails the test in section 6.
"""


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    base = tmp_path_factory.mktemp("whole_units")
    sources = base / "sources"
    sources.mkdir()
    (sources / "regulation.md").write_text(REGULATION, encoding="utf-8")
    (sources / "widget-act.md").write_text(ACT, encoding="utf-8")
    root = base / "root"
    done = subprocess.run(
        [sys.executable, "-c", "from lexkb.cli.main import run; run()", "build", str(sources)]
        + ["--out", str(root), "--embedder", "none"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return Index.open(root)


def _refs(hits) -> list[str]:
    return sorted(h.ref for h in hits)


def test_an_article_without_paragraphs_is_found_with_the_paragraphs_citing_it(index):
    found = index.get("Regulation (EU) 2099/1 Article 46")
    assert found.match == "exact"
    # Itself: the article with its heading, one chunk.
    assert found.hit.ref == "Article 46"
    assert found.hit.text.startswith("Article 46 Penalties\nMember States shall lay down")
    assert _refs(found.cited_by) == ["Article 45(1)", "Article 45(2)", "Article 47(1)"]
    assert found.cites == []
    assert [h.ref for h in index.resolve("Article 46")] == ["Article 46"]


def test_hop_from_a_whole_unit_is_not_ambiguous(index):
    reached = index.hop("Article 46", max_hops=1)
    assert _refs(h.hit for h in reached) == ["Article 45(1)", "Article 45(2)", "Article 47(1)"]
    reached = index.hop("Widget Safety Act 2099 section 7", max_hops=1)
    assert _refs(h.hit for h in reached) == ["6", "6(1)", "8(2)"]


def test_a_section_of_one_paragraph_has_the_citations_of_both_chunks(index):
    seven = index.get("Widget Safety Act 2099 section 7")
    assert (seven.match, seven.hit.ref) == ("exact", "7")
    assert _refs(seven.cited_by) == ["6(1)", "8(2)"]
    assert _refs(seven.cites) == ["6"]
    # Its paragraph chunk (what search returns), asked for by id, is the same unit with the
    # same citations.
    _, paragraphs = index.document_paragraphs("Widget Safety Act 2099")
    paragraph = paragraphs.filter(pl.col("ref") == "7")["chunk_id"].to_list()
    assert len(paragraph) == 1 and paragraph[0] != seven.hit.chunk_id
    same = index.lookup(paragraph[0])
    assert (_refs(same.cites), _refs(same.cited_by)) == (["6"], ["6(1)", "8(2)"])
    # Section 9's one paragraph is numbered (1): "section 9" is the section chunk, cited by
    # 8(3), and it cites what its paragraph cites.
    nine = index.get("Widget Safety Act 2099 section 9")
    assert (nine.match, nine.hit.ref) == ("exact", "9")
    assert _refs(nine.cited_by) == ["8(3)"]
    assert _refs(nine.cites) == ["6"]
    assert _refs(h.hit for h in index.hop("Widget Safety Act 2099 section 9", max_hops=1)) == [
        "6",
        "8(3)",
    ]


def test_a_section_with_several_paragraphs_is_still_the_section(index):
    eight = index.get("Widget Safety Act 2099 section 8")
    assert (eight.match, eight.hit.ref) == ("exact", "8")
    assert eight.cites == []  # its paragraphs' citations stay theirs
    assert _refs(index.get("Widget Safety Act 2099 section 8(2)").cites) == ["7"]
