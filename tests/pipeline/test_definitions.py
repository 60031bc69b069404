"""Defined terms: the extractor's three shapes, the snapshot's `definitions` table from a real
build, `cards_only` search, and a question about a term answered by its definition first."""

from __future__ import annotations

import pytest

from lexkb.filters import defined_term_asked
from transforms.structure.defined_terms import definitions_in

TEXT = (
    "For the purposes of this Regulation:\n"
    "(1) personal data means any information relating to a person;\n"
    '"Client Money" means money of any currency held for a client.\n'
    "Accepted Spot Commodity\tHas the meaning given in section 258 of FSMR.\n"
    "(a)\tFUNDS, means:\n"
    'The term "Business Day" shall have the meaning set out in Schedule 1.\n'
    'The firm sends a "reminder" to the client every month.'
)


def test_extractor_reads_quoted_enumerated_and_glossary_definitions():
    found = definitions_in(TEXT)
    terms = [t for t, _, _ in found]
    assert terms == ["personal data", "Client Money", "Accepted Spot Commodity", "Business Day"]
    for term, start, end in found:
        assert term.casefold() in TEXT[start:end].casefold()
        assert "\n" not in TEXT[start:end]


@pytest.mark.parametrize(
    ("question", "term"),
    [
        ("What is Client Money?", "Client Money"),
        ("what does 'personal data' mean", "personal data"),
        ("Define retention period", "retention period"),
        ("How long must records be kept?", None),
        # The longest question asking after a term: a five-word opening, a quoted ten-word term
        # with spaced quotes and question mark (the word count that spares the pattern).
        (
            'What is meant by the " one two three four five six seven eight nine ten " ?',
            "one two three four five six seven eight nine ten",
        ),
        ("What is meant by the one two three four five six seven eight nine ten eleven?", None),
    ],
)
def test_term_questions(question, term):
    assert defined_term_asked(question) == term


def test_build_publishes_definitions_and_cards_only_search(index):
    defining = index.definitions_of("Personal Data")
    assert [h.citation for h in defining] == ["DHR, Article 2"]
    assert index.definitions_of("records retention schedule") == []
    cards = index.search("records", k=10, mode="keyword", filters={"cards_only": True})
    assert cards.hits
    for hit in cards:
        terms = [t for t, _, _ in definitions_in(hit.text)]
        assert terms, hit.citation
    plain = index.search("records", k=10, mode="keyword")
    assert {h.chunk_id for h in plain} - {h.chunk_id for h in cards}


def test_a_question_about_a_term_gets_its_definition_first(index):
    question = "What does personal data mean?"
    first = index.search(question, k=3, mode="keyword").hits[0]
    assert first.citation == "DHR, Article 2"
    assert "'personal data' means" in first.text
    # Not a term question: ranking as usual.
    other = index.search("personal data handled lawfully", k=3, mode="keyword").hits[0]
    assert other.citation != "DHR, Article 2"
