"""The trained models where the tools use them: a reranked search carries each hit's chance of
answering, evidence declines a question no hit answers (and never a phrase to look up), and
every verdict the support model decides says so."""

from __future__ import annotations

from lexkb.answers import verify_citations
from lexkb.answers.ask import ask
from lexkb.answers.evidence import ABSTAIN, QUALIFIED, EvidenceSettings, evidence
from lexkb.answers.guardrails import GuardrailSettings, check_question
from lexkb.answers.ranking import subject
from lexkb.answers.ranking.answered import is_question

QUESTION = "How long must client money reconciliation records be kept?"


def test_a_reranked_search_says_how_likely_each_hit_answers(index):
    plain = index.search(QUESTION, k=5, min_relevance=0.0)
    reranked = index.search(QUESTION, k=5, min_relevance=0.0, rerank=True)
    assert all(h.answers is None for h in plain.hits)
    assert len(reranked.hits) == 5
    assert all(h.answers is not None and 0.0 <= h.answers <= 1.0 for h in reranked.hits)
    # the first 30 are reordered whatever k is, then cut to k
    deep = index.search(QUESTION, k=30, min_relevance=0.0, rerank=True)
    assert [h.chunk_id for h in reranked.hits] == [h.chunk_id for h in deep.hits[:5]]
    assert {h.chunk_id for h in deep.hits} == {
        h.chunk_id for h in index.search(QUESTION, k=30, min_relevance=0.0).hits
    }


def test_a_question_no_hit_answers_is_declined_with_that_reason(index):
    # in scope (client money), but no paragraph of the sample says when it must be returned
    unanswered = "When must client money be returned to a client after the account closes?"
    # Where the answerability model does not judge, the relevance model's best chance declines.
    alone = EvidenceSettings(answerability=False)
    found = evidence(index, unanswered, settings=alone)
    assert found.mode == ABSTAIN and found.reason == "not_answered_by_sources"
    assert f"{found.top_answers:.2f}" in found.explanation
    assert evidence(index, QUESTION, settings=alone).answerable  # what the sample answers
    strict = EvidenceSettings(min_answers=0.99, answerability=False)
    phrase = evidence(index, "retention of client money reconciliation records", settings=strict)
    assert phrase.reason != "not_answered_by_sources" and phrase.top_answers is None
    # By default the answerability model decides. The sample's three documents are far from
    # the index it learned on, and it reads the question as answered: the answer is never
    # DIRECT and says its first source may not answer (the relevance model's chance of it).
    judged = evidence(index, unanswered)
    assert judged.answerability is not None and judged.mode == QUALIFIED
    answer = ask(index, unanswered, cache=None)
    assert answer.verification["answering"]["answers"] is False
    declined = evidence(index, unanswered, settings=EvidenceSettings(abstain_below=0.99))
    assert declined.mode == ABSTAIN and "answerability" in declined.explanation


def test_a_question_on_a_subject_the_index_lacks_is_declined_as_out_of_scope(index):
    """Issue 58: the subject model reads whether the index holds what a question is about at
    all; the answerability model, whether what it holds answers. Annual leave asked of the
    sample's client-money rules is the first kind, and declined as such, with its chance."""
    leave = "How many days of paid annual leave is a full-time worker entitled to each year?"
    found = evidence(index, leave)
    assert found.mode == ABSTAIN and found.reason == "out_of_scope"
    assert found.held_subject is not None and found.held_subject < subject.HELD_BELOW
    # check_question (guardrails) judges scope as `ask` does: refused, with three questions
    # the index can answer; the client-money question is allowed.
    refused = check_question(index, leave)
    assert not refused.allowed and refused.question_type == "out_of_scope"
    assert refused.suggestions and refused.scope == found.scope
    assert check_question(index, QUESTION).allowed
    # Asked of one document the asker chose, it is that document's to answer or not.
    chosen = index.documents()[0]["document_key"]
    scoped = evidence(index, leave, filters={"document": chosen})
    assert scoped.reason != "out_of_scope"
    # Out of scope not among the types refused: the same question is allowed.
    kinds = frozenset(GuardrailSettings().forbidden - {"out_of_scope"})
    assert check_question(index, leave, GuardrailSettings(forbidden=kinds)).allowed
    assert f"subject {found.held_subject:.2f}" in found.explanation
    # The sample holds what the client-money question is about, and answers it.
    held = evidence(index, QUESTION)
    assert held.mode != ABSTAIN and held.held_subject >= subject.HELD_BELOW
    # With the subject model's threshold at 0, it still leans foreign, and with the scope model
    # reading the question as foreign and no paragraph answering, three readers agree.
    agreed = evidence(index, leave, settings=EvidenceSettings(held_below=0.0))
    assert agreed.mode == ABSTAIN and agreed.reason == "out_of_scope"
    assert "the subject model leans foreign" in agreed.explanation
    # With neither, the answerability model alone judges it, and declines it as one the
    # documents held do not answer.
    alone = evidence(index, leave, settings=EvidenceSettings(held_below=0.0, foreign_below=0.0))
    assert alone.mode == ABSTAIN and alone.reason == "not_answered_by_sources"
    assert "subject" not in alone.explanation and "answerability" in alone.explanation


def test_the_relevance_model_decides_and_the_scope_model_names_why(index):
    # A scope floor no question reaches: every question reads as foreign to the index. One a
    # paragraph found answers is answered all the same; one none answers is declined, and the
    # scope model's reading makes that `out_of_scope` rather than `not_answered_by_sources`.
    strict = EvidenceSettings(min_scope=0.9999, answerability=False)
    kept = evidence(index, QUESTION, settings=strict)
    assert kept.mode != ABSTAIN and kept.top_answers >= strict.min_answers
    unanswered = "When must client money be returned to a client after the account closes?"
    declined = evidence(index, unanswered, settings=strict)
    assert declined.reason == "out_of_scope" and declined.top_answers < strict.min_answers
    alone = EvidenceSettings(answerability=False)
    assert evidence(index, unanswered, settings=alone).reason == "not_answered_by_sources"


def test_what_a_question_is():
    assert is_question("how long must records be kept")
    assert is_question("Records retention period?")
    assert not is_question("retention period for client money records")


def test_each_verdict_names_what_decided_it(index):
    claim = "Records of client money reconciliations must be kept for at least seven years"
    result = verify_citations(
        index,
        [
            {"ref": "Records Retention Act § 103(b)", "claim": claim},
            {"ref": "Records Retention Act § 103(b)", "claim": claim.replace("seven", "five")},
        ],
    )
    model, rule = result.citations
    assert (model.verdict, model.decided_by) == ("supported", "model")
    assert "probability" in model.reason
    assert (rule.verdict, rule.decided_by) == ("contradicted", "rule")


def test_a_quotation_is_supported_by_rule(index):
    quote = "records of client money reconciliations shall be kept for not  less than seven years."
    checked = verify_citations(index, [{"ref": "Records Retention Act § 103(b)", "claim": quote}])
    found = checked.citations[0]
    assert (found.verdict, found.decided_by) == ("supported", "rule")
    assert "word for word" in found.reason and "seven years" in found.best_sentence
