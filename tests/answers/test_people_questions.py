"""Questions in people's own words (issue 46), on the real sample index: a paragraph is found by
its heading, a lead-in comes with its points, a follow-up is
read with the question before it and a new question alone, and every answer says why in words."""

from __future__ import annotations

import pytest

from lexkb.answers.ask import ask
from lexkb.answers.evidence import ABSTAIN
from lexkb.answers.passages.whole import is_lead_in
from lexkb.answers.question.followup import is_follow_up, read_as
from lexkb.core.text.heading_path import heading_context, indexed_text


def test_a_chunk_is_indexed_below_its_heading_path():
    path = ["Chapter III ICT-related incident management", "Article 19 Reporting of incidents"]
    text = indexed_text("3. Where a major incident occurs ...", path, "paragraph")
    assert text.startswith(heading_context(path) + "\n") and text.endswith("occurs ...")
    # A section chunk already opens with its heading; a chunk without a path is its own text.
    assert indexed_text("Article 19 ...", path, "section") == "Article 19 ..."
    assert indexed_text("plain", None, "paragraph") == "plain"


def test_a_paragraph_is_found_by_words_only_its_heading_holds(index, monkeypatch):
    from lexkb import headings
    from lexkb.core.text.tokenize import tokenize

    # "§ 103. Retention periods": its paragraphs never say "retention".
    refs = index.tables.chunks["ref"].to_list()
    heading = index._searcher.headings.scores(tokenize("retention periods"))
    under = [row for row, ref in enumerate(refs) if ref and ref.startswith("§ 103(")]
    assert under and all(heading[row] > 0 for row in under)

    def rank() -> int:
        hits = index.search("retention periods", k=10, mode="keyword").hits
        return next(n for n, h in enumerate(hits) if h.ref and h.ref.startswith("§ 103"))

    with_field = rank()
    monkeypatch.setattr(headings, "HEADING_WEIGHT", 0.0)
    assert with_field < rank()


@pytest.mark.parametrize(
    ("question", "follows"),
    [
        ("And for a work made for hire?", True),
        ("What about Northern Ireland?", True),
        ("Does that apply to processors too?", True),
        ("How long does copyright last?", False),
        ("Who must consent to bribery prosecutions?", False),
        ("Is there a deadline for suing someone for copyright infringement?", False),
        # Said to change the subject: read alone, whatever the opening word.
        ("Also, on another matter: can the licence be sublicensed?", False),
        ("And a different question - who pays the audit costs?", False),
        ("Separately, must the supplier keep insurance?", False),
    ],
)
def test_a_follow_up_has_no_subject_of_its_own(question, follows):
    assert is_follow_up(question) is follows


def test_a_follow_up_is_read_with_the_question_before_and_a_new_one_alone():
    turns = [{"question": "How long must client money reconciliation records be kept?"}]
    searched, reading = read_as("And who must keep them?", turns)
    assert searched.startswith(turns[0]["question"]) and "follow-up" in reading
    searched, reading = read_as("What is personal data?", turns)
    assert searched == "What is personal data?" and "read alone" in reading


def test_ask_says_how_it_read_the_question(index):
    turns = [{"question": "What does the Data Handling Regulation say about personal data?"}]
    alone = ask(index, "How long must client money reconciliation records be kept?", turns=turns,
                cache=None)  # fmt: skip
    assert "read alone" in alone.read_as and alone.mode != ABSTAIN
    assert "seven years" in alone.answer


def test_a_lead_in_is_recognised():
    assert is_lead_in("the factors to be considered shall include—")
    assert is_lead_in("Personal data shall be:")
    assert not is_lead_in("Records shall be kept for seven years.")


def test_an_abstention_says_why_in_words_and_keeps_the_figures(index):
    answer = ask(index, "What is the maximum fine for insider dealing in Ruritania?", cache=None)
    assert answer.mode == ABSTAIN
    assert answer.explanation.endswith(".") and "<" not in answer.explanation
    assert "why" in answer.details


def test_a_question_worded_as_a_prediction_is_answered_when_the_documents_answer_it(index):
    answer = ask(index, "How long will client money reconciliation records be kept?", cache=None)
    assert answer.mode != ABSTAIN and "seven years" in answer.answer
    assert any("worded as estimation" in w or "worded as predictive" in w for w in answer.warnings)
    advice = ask(index, "Should we keep our records for longer than seven years?", cache=None)
    assert advice.mode == ABSTAIN and advice.abstention_reason == "advice"


def test_a_claim_that_denies_what_its_source_affirms_is_contradicted():
    from lexkb.answers.contradictions import polarity_conflict
    from lexkb.answers.passages.statements import statements

    source = statements(
        "But it is a defence for C to prove that C had in place adequate procedures designed to "
        "prevent persons associated with C from undertaking such conduct."
    )[0]
    denied = statements(
        "It is no defence for a commercial organisation that it had adequate procedures in place "
        "to prevent bribery."
    )[0]
    assert polarity_conflict(denied, source) == ["is no defence", "is a defence"]
    affirmed = statements(
        "It is a defence for a commercial organisation to prove that it had adequate procedures."
    )[0]
    assert polarity_conflict(affirmed, source) is None
    # A negation both sides state ("not less than") is no conflict.
    kept = statements("Records must be kept for not less than seven years by the firm.")[0]
    same = statements("Records shall be kept by the firm for not less than seven years.")[0]
    assert polarity_conflict(kept, same) is None
