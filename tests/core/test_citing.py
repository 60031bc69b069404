"""How each family is cited (lexkb.core.text.citing, refs.short_name), readable document keys
(lexkb.core.text.keys), what a title says a document is (refs.title_type) and the dates a
document writes in words (lexkb.core.text.dates, transforms.structure.inferred)."""

from __future__ import annotations

from datetime import date

import pytest

from lexkb.core.text.citing import asked_kind, citation, cited_ref, fits, unit_word
from lexkb.core.text.dates import find_date, find_month
from lexkb.core.text.keys import file_key, readable_key, unique_keys
from lexkb.core.text.refs import short_name, title_type
from transforms.structure.inferred import stated_dates

DORA = (
    "REGULATION (EU) 2022/2554 OF THE EUROPEAN PARLIAMENT AND OF THE COUNCIL of 14 December "
    "2022 on digital operational resilience for the financial sector and amending Regulations "
    "(EC) No 1060/2009, (EU) No 648/2012, (EU) No 600/2014, (EU) No 909/2014 and (EU) 2016/1011"
)


@pytest.mark.parametrize(
    ("title", "given", "key", "name"),
    [
        (DORA, None, "CELEX_32022R2554_EN_TXT", "DORA"),
        ("Bribery Act 2010", None, "x", "Bribery Act 2010"),
        ("IFRS 16 Leases", None, "x", "IFRS 16"),
        ("International Financial Reporting Standard 16 Leases", None, "x", "IFRS 16"),
        ("Title 17—Copyrights", None, "usc17", "17 U.S.C."),
        ("Anti-Money Laundering (AML) Policy", None, "x", "AML Policy"),
        ("Non-Disclosure Agreement", None, "nda", "NDA"),
        ("Distribution Agreement", None, "x", "Distribution Agreement"),
        ("Lexkb Rulebook (LRB) Chapter 4: Client Assets", "LRB", "x", "LRB"),  # the catalog's
        (None, None, "notes", "notes"),
    ],
)
def test_a_document_is_cited_by_its_short_name(title, given, key, name):
    assert short_name(title, given, key) == name


@pytest.mark.parametrize(
    ("ref", "word", "cited"),
    [
        ("7(1)", "section", "section 7(1)"),
        ("Schedule 1, paragraph 13", "section", "Schedule 1, paragraph 13"),
        ("B34", "paragraph", "paragraph B34"),
        ("C1A", "paragraph", "paragraph C1A"),
        ("Section 4.2", "clause", "clause 4.2"),
        ("Section 4.10 ¶ 2", "clause", "clause 4.10 ¶ 2"),
        ("Section 12.1", "section", "Section 12.1"),
        ("§ 107", "section", "§ 107"),
        ("Article 19(4)", None, "Article 19(4)"),
        ("p. 27 ¶ 9", "paragraph", "p. 27 ¶ 9"),  # placed by position: no number to name
        ("4.3.1", "rule", "rule 4.3.1"),
        (None, "section", None),
    ],
)
def test_a_unit_is_cited_as_its_kind(ref, word, cited):
    assert cited_ref(ref, word) == cited


def test_a_citation_is_the_short_name_and_the_unit():
    assert citation("DORA", "Article 19(4)", 42) == "DORA, Article 19(4)"
    assert citation("17 U.S.C.", "§ 107", None) == "17 U.S.C. § 107"
    assert citation("IFRS 16", "p. 27 ¶ 9", 27) == "IFRS 16, p. 27 ¶ 9"  # the page once
    assert citation("NDA", None, 3) == "NDA, p. 3"
    assert citation("NDA", None, None) == "NDA"


def test_a_contract_is_cited_by_the_word_its_text_uses():
    assert (
        unit_word("contract", ["as provided to in clause 2 hereof", "clause 1.2 (f)"]) == "clause"
    )
    assert unit_word("contract", ["subject to Section 12.1", "under Section 3"]) == "section"
    assert unit_word("contract", ["no cross-references at all"]) == "clause"
    assert unit_word("act") == "section" and unit_word("standard") == "paragraph"
    assert unit_word("regulation") is None and unit_word(None) is None


def test_the_kind_a_reference_names_rules_out_other_families():
    assert asked_kind("clause 4.2") == "clause" and asked_kind("s. 7") == "section"
    assert asked_kind("§ 107") == "section" and asked_kind("para B34") == "paragraph"
    assert asked_kind("Article 5") is None and asked_kind("4.2") is None
    assert not fits("section", "clause")  # an Act's section 4(2) is no clause 4.2
    assert fits("clause", "section")  # a contract's clauses are stored as sections
    assert fits(None, "clause") and fits("section", None)


@pytest.mark.parametrize(
    ("key", "title", "readable"),
    [
        ("CELEX_32022R2554_EN_TXT", DORA, "dora"),
        ("asset_00100_ukpga_20100023_en", "Bribery Act 2010", "bribery-act-2010"),
        ("Compto AML Policy", "Anti-Money Laundering (AML) Policy", "compto-aml-policy"),
        ("usc17", "Title 17—Copyrights", "usc17"),
        ("records-retention-act", "Records Retention Act", "records-retention-act"),
        # A contract's file name says more than its first page: numbers and all, it stays.
        (
            "AgapeAtpCorp_20191202_10-KA_EX-10.1_11911128_EX-10.1_Supply Agreement",
            "EXHIBIT 10.1",
            "agapeatpcorp-20191202-10-ka-ex-10-1-11911128-ex-10-1-supply-agreement",
        ),
    ],
)
def test_keys_are_readable(key, title, readable):
    assert readable_key(key, title) == readable


def test_a_key_two_documents_would_share_takes_a_suffix():
    assert unique_keys(["nda", "msa", "nda", "nda"]) == ["nda", "msa", "nda-2", "nda-3"]
    assert unique_keys(["faq"], taken={"faq"}) == ["faq-2"]
    assert file_key("contracts/2024/nda.pdf") == "nda"


@pytest.mark.parametrize(
    ("title", "key", "kind"),
    [
        (DORA, "", "regulation"),
        ("DIRECTIVE (EU) 2022/2464 OF THE EUROPEAN PARLIAMENT", "", "directive"),
        ("Bribery Act 2010", "", "act"),
        ("Title 17—Copyrights", "usc17", "code"),
        ("IFRS 16 Leases", "", "standard"),
        ("Anti-Money Laundering (AML) Policy", "", "policy"),
        ("Non-Disclosure Agreement", "", None),  # contracts are told by their text
        ("Policy on Regulation (EU) 2016/679", "", "policy"),  # an act it names is not itself
    ],
)
def test_a_title_says_what_a_document_is(title, key, kind):
    assert title_type(title, key) == kind


def test_dates_written_in_words():
    assert find_date("[8th April 2010]")[0] == date(2010, 4, 8)
    assert find_date("of 14 December 2022 on digital")[0] == date(2022, 12, 14)
    assert find_month("Effective Date December 2024 Revision") == date(2024, 12, 1)
    assert find_month("no month here") is None


def test_a_document_states_its_dates_as_its_family_does():
    applies = ["This Regulation shall enter into force ...", "It shall apply from 17 January 2025."]
    assert stated_dates("regulation", DORA, applies) == (date(2022, 12, 14), date(2025, 1, 17))
    assent = ["An Act to make provision about bribery. [8th April 2010]", "BE IT ENACTED"]
    assert stated_dates("act", "Bribery Act 2010", assent) == (date(2010, 4, 8), None)
    standard = [
        "An entity shall apply this Standard for annual reporting periods beginning on or after"
        " 1 January 2019. Earlier application is permitted."
    ]
    assert stated_dates("standard", "IFRS 16 Leases", standard) == (None, date(2019, 1, 1))
    control = ["Policy Name AML Policy Status Approved Effective Date December 2024 Revision"]
    assert stated_dates("policy", "AML Policy", control) == (None, date(2024, 12, 1))
    assert stated_dates(None, "Notes", ["Signed on 1 May 2020."]) == (None, None)


def test_dates_in_figures_are_read_only_where_they_mean_one_day():
    from lexkb.core.text.dates import find_numeric_date

    assert find_numeric_date("Effective 3/29/2022") == date(2022, 3, 29)
    assert find_numeric_date("signed 29.03.2022") == date(2022, 3, 29)
    assert find_numeric_date("updated 2024-01-09") == date(2024, 1, 9)
    assert find_numeric_date("on 05/05/2020") == date(2020, 5, 5)
    # 7 December or July 12: no date rather than a guess.
    assert find_numeric_date("effective date 07/12/2021") is None
    assert find_numeric_date("version 13/13/2020") is None


def test_a_contract_states_its_dates_on_lines_of_its_own():
    from transforms.structure.contracts import preamble

    terms = ["PREFECT TERMS OF SERVICE", "Effective 3/29/2022", "These terms govern your use."]
    assert preamble(terms)["effective_date"] == date(2022, 3, 29)
    revised = ["Master Services Agreement", "This agreement was last revised on March 13, 2024."]
    assert preamble(revised)["agreement_date"] == date(2024, 3, 13)
    ambiguous = ["effective date 07/12/2021 between Digital Salt Pvt and Dataverse Ltd"]
    assert preamble(ambiguous)["effective_date"] is None


def test_a_standard_is_dated_by_the_month_on_its_cover():
    cover = ["IFRS S2 Climate-related Disclosures", "June 2023", "Objective"]
    assert stated_dates("standard", "IFRS S2", cover) == (date(2023, 6, 1), None)
    # A month inside a sentence is the history of other standards, not this one's issue.
    history = ["In April 2001 the Board adopted IAS 17 Leases."]
    assert stated_dates("standard", "IFRS 16 Leases", history) == (None, None)
