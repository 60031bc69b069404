"""The names people cite a document by, read from its title by each family's rules (issue 36,
item 4): an EU act's designation and the acronym its title gives, a UK Act's short title, a US
Code title, a standard designated in words. `get` finds units by any of them."""

from __future__ import annotations

import json

import polars as pl
import pytest

from lexkb.core.text.refs import cited_names, document_names

# Module fixtures that build: the tests taking them are in the build tier (tests/conftest.py).
BUILDING_FIXTURES = {"named"}

DORA = (
    "REGULATION (EU) 2022/2554 OF THE EUROPEAN PARLIAMENT AND OF THE COUNCIL of 14 December 2022 "
    "on digital operational resilience for the financial sector and amending Regulations (EC) No "
    "1060/2009, (EU) No 648/2012 and (EU) 2016/1011 (Text with EEA relevance) (DORA)"
)
GDPR = (
    "Regulation (EU) 2016/679 of the European Parliament and of the Council of 27 April 2016 on "
    "the protection of natural persons with regard to the processing of personal data and on the "
    "free movement of such data, and repealing Directive 95/46/EC (General Data Protection "
    "Regulation)"
)


@pytest.mark.parametrize(
    ("key", "title", "names"),
    [
        # EU: the act's own designation (not those it amends), and an acronym, never "(EU)".
        ("dora", DORA, ["Regulation (EU) 2022/2554", "DORA", "Digital Operational Resilience Act", "EU Digital Operational Resilience Act", "2022/2554", "Regulation 2022/2554"]),
        ("gdpr", GDPR, ["Regulation (EU) 2016/679", "GDPR", "General Data Protection Regulation", "2016/679", "Regulation 2016/679"]),
        ("x", "Commission Delegated Regulation (EU) No 231/2013 of 19 December 2012", ["Regulation (EU) No 231/2013", "231/2013", "Regulation 231/2013"]),
        ("x", "Directive (EU) 2015/849 of the European Parliament", ["Directive (EU) 2015/849", "AMLD4", "Fourth Anti-Money Laundering Directive", "2015/849", "Directive 2015/849"]),
        # UK: the short title an Act gives itself.
        ("x", "Bribery Act 2010", ["Bribery Act 2010", "Bribery Act"]),
        ("x", "Police (Northern Ireland) Act 2000", ["Police (Northern Ireland) Act 2000", "Police (Northern Ireland) Act", "Police Act 2000"]),
        ("x", "The Companies Act 2006 (c. 46)", ["Companies Act 2006", "Companies Act"]),
        # US Code: by title and by the publisher's file name.
        ("x", "Title 17—Copyrights", ["17 U.S.C.", "Title 17", "Title 17, United States Code", "Copyrights"]),
        ("usc05", None, ["5 U.S.C.", "Title 5", "Title 5, United States Code"]),
        # Standards designated in words.
        ("x", "International Financial Reporting Standard 16 Leases", ["IFRS 16"]),
        ("x", "International Standard on Auditing 315 (Revised 2019)", ["ISA 315"]),
        # A title's own acronym for its words, a contract's initials and the name it calls
        # itself by ("this Agreement").
        ("x", "Anti-Money Laundering (AML) Policy", ["AML Policy"]),
        ("nda", "Non-Disclosure Agreement", ["NDA", "Agreement"]),
        ("x", "Master Services Agreement", ["MSA", "Agreement"]),
        # Nothing to find: no invented names.
        ("x", "Compto AML Policy", []),
        ("x", "Regulations made under the Act 2010", []),
    ],
)  # fmt: skip
def test_each_family_names_its_documents_by_its_own_rules(key, title, names):
    assert cited_names(key, title) == names


def test_the_names_join_the_document_names():
    names = document_names("dora", DORA, None)
    assert {"Regulation (EU) 2022/2554", "DORA"} <= set(names)
    assert "EU" not in names and "EEA" not in names


@pytest.fixture(scope="module")
def named(tmp_path_factory):
    from lexkb import Index
    from pipelines.in_process import run_build

    folder = tmp_path_factory.mktemp("names")
    rows = [
        ("dora", "Article 3(19)", "'ICT third-party service provider' means an undertaking."),
        ("bribery", "7(1)", "A relevant commercial organisation is guilty of an offence."),
        ("copyright", "§ 512(c)(1)", "A service provider shall not be liable."),
        ("leases", "B34", "A lessee shall apply this guidance."),
    ]
    lines = [json.dumps({"DocumentID": d, "PassageID": p, "Passage": t}) for d, p, t in rows]
    (folder / "refs.jsonl").write_text("\n".join(lines), encoding="utf-8")
    titles = {
        "dora": DORA,
        "bribery": "Bribery Act 2010",
        "copyright": "Title 17—Copyrights",
        "leases": "International Financial Reporting Standard 16 Leases",
    }
    catalog = {"documents": {key: {"title": title} for key, title in titles.items()}}
    (folder / "catalog.json").write_text(json.dumps(catalog), encoding="utf-8")
    run_build([folder], folder / "root", embedder="none")
    return Index.open(folder / "root")


@pytest.mark.parametrize(
    ("asked", "key", "ref"),
    [
        ("DORA Article 3(19)", "dora", "Article 3(19)"),
        ("Article 3(19) of Regulation (EU) 2022/2554", "dora", "Article 3(19)"),
        ("section 7(1) of the Bribery Act 2010", "bribery", "7(1)"),
        ("17 U.S.C. 512(c)(1)", "copyright", "§ 512(c)(1)"),
        ("IFRS 16.B34", "leases", "B34"),
        ("IFRS 16, para. B34", "leases", "B34"),
    ],
)
def test_get_finds_units_by_the_names_people_cite(named, asked, key, ref):
    found = named.get(asked)
    assert (found.match, found.hit.document_key, found.hit.ref) == ("exact", key, ref), found.reason


def test_a_name_no_document_has_is_not_found(named):
    assert named.get("18 U.S.C. 512(c)(1)").match == "not_found"
    assert named.get("IFRS 17.B34").match == "not_found"


def test_a_question_naming_a_document_uses_a_word_the_index_knows(named):
    from lexkb.answers.question.scope import capitalised_terms, vocabulary

    known = vocabulary(named)
    # "IFRS" is in no paragraph or title here, only in the name read from the title.
    for question in ("How does IFRS 16 define the lease term?", "What does DORA require?"):
        assert all(known.knows(words) for words in capitalised_terms(question)), question


def test_answers_name_the_document_as_it_is_cited(named):
    found = named.get("DORA Article 3(19)")
    assert found.reason == "DORA Article 3(19) is DORA, Article 3(19)"
    assert named.get("IFRS 16.B34").reason == "IFRS 16.B34 is IFRS 16, paragraph B34"
    assert named.get("bribery 7(1)").hit.citation == "Bribery Act 2010, section 7(1)"
    assert named.get("copyright § 512(c)(1)").hit.citation == "17 U.S.C. § 512(c)(1)"


def test_a_name_several_documents_go_by_names_none_of_them():
    from lexkb.tables import alias_key, document_aliases

    documents = pl.DataFrame(
        {
            "document_id": ["d1", "d2", "d3"],
            "document_key": ["nda", "msa", "agreement"],
            "title": ["Non-Disclosure Agreement", "Master Services Agreement", "Agreement"],
            "short_name": [None, None, None],
            "aliases": [[], [], []],
        }
    )
    aliases = document_aliases(documents, {})
    assert aliases[alias_key("NDA")] == "d1" and aliases[alias_key("MSA")] == "d2"
    # "Agreement" is every contract's own name: it stays only with the one keyed so
    assert aliases[alias_key("Agreement")] == "d3"
    two = document_aliases(documents.head(2), {})
    assert alias_key("Agreement") not in two


@pytest.mark.parametrize(
    ("lines", "found"),
    [
        (["Bribery Act 2010", "CHAPTER 23", "CONTENTS"], ["2010 c. 23"]),
        (["Finance Act 2021", "2021 CHAPTER 26"], ["2021 c. 26"]),
        # a running head repeated page after page, not a cross-heading naming an amended Act
        (["Ministry of Defence Police Act 1987 (c. 4)", "1 In section 2"], []),
        (["x", "Bribery Act 2010 (c. 23)", "y", "Bribery Act 2010 (c. 23)"], ["2010 c. 23"]),
    ],
)
def test_a_uk_act_is_also_named_by_its_chapter_number(lines, found):
    from transforms.structure.designations import printed_designations

    assert printed_designations(lines) == found
