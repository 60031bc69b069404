"""A contract's head as a reviewer reads it: its name, parties, dates and governing law, from
texts written here in the shapes filings print (benchmarks/contract_head.py measures the same
readers on CUAD's contracts)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from lexkb.core.text.dates import find_date
from lexkb.core.text.governing_law import governing_law
from transforms.reading.elements import document_elements
from transforms.reading.source_files import discover
from transforms.structure import structure_document
from transforms.structure.contracts import contract_title, preamble, renewal_term

FOOTER = "Source: NORTHWIND HOLDINGS, INC., 10-Q, 11/8/2019"


def test_a_name_run_in_with_the_first_sentence_is_the_name():
    texts = [
        'Exhibit 10.1 COOPERATION AGREEMENT This Cooperation Agreement (this "Agreement") is made'
        " by and between Acme Capital Ltd. and Contoso Holdings Inc.",
        "1. Board Composition. The Company shall appoint two directors.",
    ]
    assert contract_title(texts) == "COOPERATION AGREEMENT"
    # Further down, capitals before a sentence are a clause's heading, not the contract's name.
    later = ["Exhibit 10.1", *(f"{n}. Clause {n} text." for n in range(1, 8))]
    assert contract_title([*later, "LICENSE AGREEMENT The licence is granted."]) is None


def test_parties_are_read_past_the_abbreviations_of_their_addresses():
    texts = [
        "This Agreement is made by and between Eton Pharmaceuticals, Inc., a Delaware corporation"
        " with offices at 21925 W. Field Pkwy, Suite 235, Deer Park, Illinois, U.S.A., and Aucta"
        " Pharmaceuticals, Inc., a Delaware corporation with offices at 71 Suttons Lane, NJ."
    ]
    assert preamble(texts)["parties"] == ["Eton Pharmaceuticals Inc.", "Aucta Pharmaceuticals Inc."]


def test_the_signature_block_names_the_parties_a_preamble_does_not():
    """A preamble with no "between" names none the reader can take; each entity that signs is
    one, and a signatory's particulars, a description, a page label or a bare role are not."""
    texts = [
        "AGENCY AGREEMENT",
        "Northwind Mutual Insurance Corporation of America, a Michigan insurance corporation"
        ' (NMICA) and Fabrikam Brokers, Inc., a Nevada corporation ("Agency") agree as follows:',
        "1. Authority. The Agency may solicit proposals.",
        "IN WITNESS WHEREOF, the parties have executed this Agreement as of the date below.",
        "NORTHWIND MUTUAL INSURANCE CORPORATION OF AMERICA",
        "By: /s/ Jane Roe Name: Jane Roe Title: President",
        "[Signature Page to Agency Agreement]",
        "a Nevada corporation",
        "By: /s/ John Doe",
        "APPROVED FOR AGENCY",
        "By: /s/ John Doe",
        "Fabrikam Brokers, Inc.",
        "By: /s/ John Doe",
        "Title: Secretary",
    ]
    assert preamble(texts)["parties"] == [
        "NORTHWIND MUTUAL INSURANCE CORPORATION OF AMERICA",
        "Fabrikam Brokers, Inc.",
    ]


def test_a_signing_party_the_preamble_named_is_not_named_twice():
    texts = [
        "This Agreement is made by and between Contoso Brands Group, Inc. and Tailspin Toys LLC.",
        "IN WITNESS WHEREOF the parties sign below.",
        "CONTOSO BRAND GROUP, INC.",
        "By: /s/ A. Person",
        "TAILSPIN TOYS, LLC",
        "By: /s/ B. Person",
        "Tailspin Holdings Limited, as guarantor",
        "By: /s/ C. Person",
    ]
    assert preamble(texts)["parties"] == [
        "Contoso Brands Group Inc.",
        "Tailspin Toys LLC",
        "Tailspin Holdings Limited",
    ]


def test_the_agreement_is_dated_by_the_sentence_that_makes_it_past_footers_and_contents():
    contents = "TABLE OF CONTENTS " + " ".join(f"{n}. Heading {n} .... {n}" for n in range(1, 400))
    making = (
        "This Network Agreement is entered into as of the 31  day of July, 2019 (the"
        ' "Effective Date") by and between Commnet Wireless, LLC and AT&T Mobility LLC.'
    )
    texts = [FOOTER, contents, FOOTER, making, FOOTER, "1. Definitions."]
    found = preamble(texts)
    assert found["agreement_date"] == date(2019, 7, 31)  # not the filing's 11/8/2019
    assert found["effective_date"] == date(2019, 7, 31)


def test_a_recital_dates_another_agreement_not_this_one():
    texts = [
        "AMENDMENT AGREEMENT",
        "This Amendment is made by and between Movado Group, Inc. and the Trustees of the Trust.",
        "WHEREAS, the Company and the Trust entered into a Split Dollar Agreement, dated as of"
        " December 5, 1995;",
    ]
    assert preamble(texts)["agreement_date"] is None


def test_the_effective_date_is_where_the_contract_defines_it():
    made = "This Agreement is entered into as of the Effective Date by and between Link Plus Corp."
    defined = [made, "1.1 Definitions.", '"Effective Date" means July 15, 2005.']
    assert preamble(defined)["effective_date"] == date(2005, 7, 15)
    term = [made, '11.1 Term. This Agreement shall be effective as of January 1, 2012 (the "Ef']
    assert preamble(term)["effective_date"] == date(2012, 1, 1)
    signed = [
        "This Agreement is made on June 1, 2017 by and between Prudential Bank and J. Smith.",
        "IN WITNESS WHEREOF, the parties have signed this Agreement effective as of the date first"
        " written above.",
    ]
    assert preamble(signed)["effective_date"] == date(2017, 6, 1)
    assert preamble([made, "1. Services."])["effective_date"] is None


def test_days_written_as_filings_write_them():
    assert find_date("made this first (1st)  day of January, 1996, by")[0] == date(1996, 1, 1)
    assert find_date("made and effective as of1 August 2019, by and")[0] == date(2019, 8, 1)
    assert find_date("the 31  day of July, 2019")[0] == date(2019, 7, 31)
    assert find_date("in fiscal 2021 August 2019 sales") is None
    # An ordinal split and a comma spaced off, as a filing's extracted text has them.
    assert find_date("entered into this 20t h day of January, 2020")[0] == date(2020, 1, 20)
    assert find_date("ON THIS 19  DAY OF MAY , 2010")[0] == date(2010, 5, 19)
    assert find_date("dated April 15 , 2010 between")[0] == date(2010, 4, 15)
    assert find_date("Section 5 , 2010 amendments") is None


def test_the_governing_law_is_the_place_the_clause_names():
    wrapped = ["13. This Agreement shall be governed by the laws of the", "state of Florida."]
    assert governing_law(wrapped) == "Florida"
    assert (
        governing_law(
            ["construed in accordance with the laws of the Commonwealth of Massachusetts"]
        )
        == "Massachusetts"
    )
    assert governing_law(["This Agreement is governed by the laws of England and Wales."]) == (
        "England and Wales"
    )
    # Laws a clause names for another purpose choose no law.
    assert (
        governing_law(["Each party shall comply with all applicable laws of any country."]) is None
    )
    assert governing_law(["1. Services. The Supplier shall host the platform."]) is None


def test_a_renewal_is_noted_as_a_reviewer_notes_it():
    assert renewal_term(
        ["3. Term and Renewal. The term begins on the Effective Date and continues for five (5)"
         " years. Upon expiration, this Agreement shall automatically renew for consecutive one"
         " (1) year periods unless either party gives notice."]
    ) == "successive 1 year"  # fmt: skip
    assert renewal_term(["The term will be renewed for additional periods of 12 months."]) == (
        "successive 12 months"
    )
    assert renewal_term(["It will automatically renew for one or more annual periods."]) == (
        "successive 1 year"
    )
    assert renewal_term(["This Agreement may be renewed for a 2-year period by the parties."]) == (
        "2 years"
    )
    # Renewals of rights, and a term that simply ends, renew no contract term for a length.
    assert renewal_term(["all renewals and extensions of such rights, in any country."]) is None
    assert renewal_term(["The term is three (3) years from the Effective Date."]) is None


def test_the_documents_row_states_the_governing_law(tmp_path: Path):
    path = tmp_path / "hosting-agreement.txt"
    path.write_text(
        "HOSTING AGREEMENT\n\nThis Hosting Agreement is made as of March 3, 2021 by and between"
        " Northwind Traders Ltd. and Contoso Bank plc.\n\n1. Services. Northwind shall host the"
        " platform.\n\n2. Governing Law. This Agreement shall be governed by and construed in"
        " accordance with the laws of the State of New York.\n",
        encoding="utf-8",
    )
    source = discover([path])[0]
    documents, _, _ = structure_document(source, document_elements(source))
    row = documents.row(0, named=True)
    assert row["document_type"] == "contract"
    assert row["governing_law"] == "New York"
    assert row["renewal_term"] is None  # the text renews nothing
    assert row["parties"] == ["Northwind Traders Ltd.", "Contoso Bank plc"]
