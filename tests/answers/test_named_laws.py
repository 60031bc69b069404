"""A question that names a law the index does not hold is answered as such (issue 58): the
names a question gives are read by their form, checked against what the index says, and only
a question naming nothing the index knows is declined for it, naming both sides."""

from __future__ import annotations

from lexkb.answers.ask import ask
from lexkb.answers.evidence import ABSTAIN, EvidenceSettings, evidence
from lexkb.answers.question.named_laws import named, names_in
from lexkb.core.vocabulary import AbstentionReason


def test_names_are_read_by_their_form_and_generic_words_are_not_names():
    assert names_in("Which AI practices are prohibited under the EU AI Act?") == [
        ("EU AI Act", "law")
    ]
    assert names_in("What does Regulation (EU) 2016/679 say about consent?") == [
        ("Regulation (EU) 2016/679", "law")
    ]
    assert names_in("Does MiFID II or the SEC require best execution?") == [
        ("MiFID II", "law"),
        ("SEC", "regulator"),
    ]
    assert names_in("Under German law, may an employer read staff emails?") == [
        ("German", "jurisdiction")
    ]
    assert names_in("Is the Companies Act 2006 relevant here?") == [("Companies Act 2006", "law")]
    # "the Act", "the Rules", a capitalised opener: no name.
    for plain in ("Under the Act, who is a gatekeeper?", "What Rules apply to client money?"):
        assert names_in(plain) == []


def test_a_name_is_known_when_the_index_says_it(index):
    found = named(index, "Does the Records Retention Act or HIPAA say how long records are kept?")
    assert found.known == ("Records Retention Act",)
    assert found.foreign == ("HIPAA",) and not found.only_foreign
    assert named(index, "What does the Data Handling Regulation say?").foreign == ()
    # A short form of a held law's title is that law, whatever its head word.
    assert named(index, "What does the Retention Act say about ledgers?").known == (
        "Retention Act",
    )


def test_a_question_naming_only_a_law_the_index_lacks_is_declined_naming_both(index):
    question = "Which AI practices are prohibited under the EU AI Act?"
    answer = ask(index, question)
    assert answer.mode == ABSTAIN and answer.abstention_reason == AbstentionReason.NOT_HELD
    assert "does not hold the EU AI Act" in answer.explanation
    # ... and says which documents are served, by the names people cite them by.
    assert any(d["number"] in answer.explanation for d in index.documents())
    assert answer.details["not_held"] == ["the EU AI Act"]
    # Without reading names the same search is judged by its paragraphs alone.
    hits = index.search(question, k=10, min_relevance=0.0).hits
    judged = evidence(index, question, hits, EvidenceSettings(decline_not_held=False))
    assert judged.reason != AbstentionReason.NOT_HELD


def test_a_foreign_name_beside_a_held_one_is_answered_with_a_warning(index):
    question = "Does the Records Retention Act or HIPAA say how long client records are kept?"
    answer = ask(index, question)
    assert answer.mode != ABSTAIN
    assert any("names HIPAA" in w for w in answer.warnings)
    found = evidence(index, question)
    assert found.not_held == ["HIPAA"] and found.reason != AbstentionReason.NOT_HELD


def test_a_question_word_is_no_part_of_the_term_it_opens():
    from lexkb.answers.question.scope import capitalised_terms

    assert capitalised_terms("Does MiFID II apply to us?") == [["MiFID", "II"]]
    assert capitalised_terms("What ADGM rule applies?") == [["ADGM"]]
    # A term that opens a sentence with a word of its own stays whole.
    assert capitalised_terms("Receiving Party shall not disclose.") == [["Receiving", "Party"]]


def test_a_paragraph_that_surely_answers_overrules_a_foreign_name(index):
    """ "HIPAA" is no law the sample index holds, but a paragraph found answers the question at
    0.9 or more: the name may be another name for what the index holds, so the question is
    answered, qualified, with a warning; without such a paragraph it is declined."""
    held = ask(index, "Under HIPAA, how long must client money reconciliation records be kept?")
    assert held.mode != ABSTAIN and held.details["best_answers"] >= 0.9
    assert any("names HIPAA" in w for w in held.warnings)
    foreign = ask(index, "Under HIPAA, how long must medical records be kept?")
    assert foreign.abstention_reason == AbstentionReason.NOT_HELD


def test_a_question_naming_a_held_document_is_asked_of_it(realdocs_built):
    """Issue 58 item 1: a held document's name scopes the search to that document, and is no
    word of the search (its front matter repeats its name)."""
    from lexkb import Index
    from lexkb.answers.question.named_laws import scoped

    six = Index.open(realdocs_built[0])
    question = "Under the Bribery Act 2010, what must a company show to escape liability?"
    keys, searched = scoped(six, question)
    assert keys == ["bribery-act-2010"]
    assert "Bribery" not in searched and "liability" in searched
    # By its number, by a contract's initials, by the US Code's citation form.
    assert scoped(six, "What does Regulation 2022/2554 require of ICT contracts?")[0] == ["dora"]
    assert scoped(six, "Is the NDA one-sided or mutual?")[0] == ["nda"]
    assert scoped(six, "Does 17 U.S.C. protect architectural works?")[0] == ["usc17"]
    # Nothing named, nothing scoped; a name whose removal leaves too little stays.
    assert scoped(six, "How long must records be kept?") == ([], "How long must records be kept?")
    assert scoped(six, "What is DORA?")[1] == "What is DORA?"
    # Answered or not, every provision offered is the named Act's.
    answer = ask(six, question, cache=None)
    offered = [s.citation for s in answer.sources] or answer.details["nearest"]
    assert offered and all(c.startswith("Bribery Act 2010") for c in offered)
    # ... and says so, as it says how it read the question.
    assert "asked of Bribery Act 2010, which it names" in answer.read_as


def test_a_held_document_named_is_never_declined_as_a_subject_the_index_lacks(realdocs_built):
    """A near miss about a document the index holds is declined as that document not answering,
    never as "the documents do not cover this subject", which would deny the document named."""
    from lexkb import Index

    six = Index.open(realdocs_built[0])
    unsaid = "How much is the Christmas bonus paid to pensioners?"
    alone = ask(six, unsaid, cache=None)
    assert alone.abstention_reason == AbstentionReason.OUT_OF_SCOPE
    named_too = ask(six, f"Under the Bribery Act 2010, {unsaid[0].lower()}{unsaid[1:]}", cache=None)
    assert named_too.mode == ABSTAIN
    assert named_too.abstention_reason == AbstentionReason.NOT_ANSWERED_BY_SOURCES
    assert "do not cover this subject" not in named_too.explanation
    assert "Bribery Act 2010" in named_too.explanation


def test_a_held_document_named_settles_what_the_question_is_about(realdocs_built):
    """The subject model learnt NDA questions as foreign (asked of rulebooks without one), and
    leans that way on any question that names an NDA. Where the index holds the document a
    question names, the name settles that the index holds what it is about: the answerability
    model alone judges whether the document answers. A subject threshold both questions here
    fall under shows it."""
    from lexkb import Index

    six = Index.open(realdocs_built[0])
    strict = EvidenceSettings(held_below=0.9)
    named = evidence(
        six, "Does the NDA let us pass the shared material to our accountants?", settings=strict
    )
    assert named.held_subject is not None and named.held_subject < strict.held_below
    assert named.mode != ABSTAIN
    unnamed = evidence(six, "Is either side obliged to sign the final deal?", settings=strict)
    assert unnamed.held_subject < strict.held_below
    assert unnamed.mode == ABSTAIN and unnamed.reason == AbstentionReason.OUT_OF_SCOPE


def test_a_name_its_documents_write_in_capitals_is_a_name_only_in_capitals(index):
    """ADGM's rulebooks are called FEES, FUNDS and GEN; "what fees may a landlord charge" names
    none of them. A one-word name the documents write only in capitals names its document only
    when the question writes it so (the sample's rulebook is "LRB"); other names in any case."""
    from lexkb.answers.question.named_laws import documents_named, scoped

    assert documents_named(index, "Which records does the LRB require?") == {
        "lrb-chapter-4-client-assets"
    }
    assert documents_named(index, "which records does the lrb require?") == set()
    keys, rest = scoped(index, "Under the LRB, how are lrb records kept?")
    assert keys == ["lrb-chapter-4-client-assets"] and "lrb records" in rest
    assert documents_named(index, "what does the records retention act say?") == {
        "records-retention-act"
    }


def test_the_ranker_reads_a_named_document_s_paragraphs_against_the_words_searched(
    realdocs_built,
):
    """A document's name says nothing of which of its paragraphs answers: the ranker is given
    the hits `ask` searched (scoped, the name left out) and reads their words and cosines
    against the words searched, as training/ranker.py does."""
    import numpy as np

    from lexkb import Index
    from lexkb.answers.ranking import ranker
    from lexkb.answers.ranking.candidate_features import FEATURES, candidate_features

    six = Index.open(realdocs_built[0])
    question = "Under the Bribery Act 2010, what must a company show to escape liability?"
    hits, asked = ranker.first_search(six, question)
    assert hits and {h.document_key for h in hits} == {"bribery-act-2010"}
    assert "Bribery" not in asked and "liability" in asked
    chances = np.full(len(hits), 0.5)
    read = candidate_features(six, question, hits, chances, asked)
    as_words = candidate_features(six, asked, hits, chances)
    named = candidate_features(six, question, hits, chances)
    for name in ("rare_words_held", "words_held", "heading_words_held", "cosine"):
        column = FEATURES.index(name)
        assert np.allclose(read[:, column], as_words[:, column])
    # Still known: the question names the document each paragraph is of.
    assert read[:, FEATURES.index("names_document")].tolist() == [1.0] * len(hits)
    # Read against the whole question, the Act's name is a word every paragraph of it holds.
    words = FEATURES.index("words_held")
    assert not np.allclose(read[:, words], named[:, words])


def test_a_party_named_scopes_the_question_to_its_contract(realdocs_built):
    """People name the other side of a contract, not its title: a capitalised name that only a
    document's own opening (its parties) or its repeated text says scopes the question to that
    document, and leaves the words searched. Places and words many documents say do not."""
    from lexkb import Index
    from lexkb.answers.question.named_laws import scoped
    from lexkb.results import Holding

    six = Index.open(realdocs_built[0])
    # The NDA's second paragraph names Dataverse Ltd, two more say it; no other document does.
    assert six.documents_holding("Dataverse") == [Holding("nda", 3, 1)]
    assert six.documents_holding("Dataverse Thessaloniki") == [Holding("nda", 1, 1)]
    assert six.documents_holding("Dataverse Bribery") == []
    question = "Can Dataverse pass our confidential information to its subcontractors?"
    keys, searched = scoped(six, question)
    assert keys == ["nda"] and "Dataverse" not in searched and "confidential" in searched
    assert scoped(six, "Does the agreement bind Digital Salt after it ends?")[0] == ["nda"]
    # A place is no party, though the NDA's first lines give Mumbai as an address; a name no
    # document says, and a word every act says, scope nothing.
    for unscoped in (
        "Our office is in Mumbai. How long must records be kept?",
        "Can Acme Widgets share our designs?",
        "What powers does the Commission have?",
    ):
        assert scoped(six, unscoped) == ([], unscoped)
    # `ask` searches the NDA alone, as it searches a document named by its title.
    from lexkb.answers.ranking.ranker import first_search

    hits, asked = first_search(six, question)
    assert hits and {h.document_key for h in hits} == {"nda"} and asked == searched
