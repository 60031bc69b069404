"""Answering on the sample corpus's real snapshot: guardrails, evidence, extraction, ask (offline
and through a stand-in OpenAI-compatible endpoint on 127.0.0.1), the cache and history."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
from dataclasses import replace

import numpy as np
import pytest

from lexkb.answers.answer_cache import AnswerCache
from lexkb.answers.ask import ask
from lexkb.answers.evidence import (
    ABSTAIN,
    DIRECT,
    QUALIFIED,
    EvidenceSettings,
    authority_of,
    evidence,
)
from lexkb.answers.extract import extract
from lexkb.answers.guardrails import ALLOWED, GuardrailSettings, check_question, question_type
from lexkb.answers.passages.statements import split_sentences
from lexkb.answers.question.scope import capitalised_terms
from tests.service.test_cli import LEXKB
from tests.support.http_fake import JSONHandler, LocalServer

RETENTION_QUESTION = "How long must records of client money reconciliations be kept?"
SEVEN_YEARS = "kept for not less than seven years"


# guardrails ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("What will the regulator require of custodians next year?", "predictive"),
        ("Estimate how much our reconciliation audit will cost.", "estimation"),
        ("Should we keep our records in the cloud?", "advice"),
        ("Is our retention policy compliant?", "own_data"),
        ("How long must client money records be kept?", ALLOWED),
        ("Do we need to reconcile client money daily?", ALLOWED),
    ],
)
def test_question_types_from_wording(question, kind):
    assert question_type(question)[0] == kind


def test_refusal_gives_reason_and_three_answerable_questions(index):
    refused = check_question(index, "Should we move our client money to another bank?")
    assert not refused.allowed and refused.question_type == "advice"
    assert refused.reason.startswith("Not answered:") and "advice" in refused.reason
    assert refused.matched.casefold() == "should we"
    assert len(refused.suggestions) == 3 and len(set(refused.suggestions)) == 3
    titles = {d["title"] for d in index.documents()}
    for suggestion in refused.suggestions:
        assert suggestion.endswith("?")
        assert any(title in suggestion for title in titles), suggestion
    # The suggestions are questions the index does answer.
    assert check_question(index, refused.suggestions[0]).allowed


def test_forbidden_types_are_a_setting(index):
    question = "Should we keep client money records for seven years?"
    only_predictive = GuardrailSettings(forbidden=frozenset({"predictive"}))
    assert not check_question(index, question).allowed
    passed = check_question(index, question, only_predictive)
    assert passed.allowed and passed.question_type == "advice"


def test_out_of_scope_question_is_refused(index):
    refused = check_question(index, "What is the penalty for speeding on a German autobahn?")
    assert not refused.allowed and refused.question_type == "out_of_scope"
    assert check_question(index, RETENTION_QUESTION).allowed


def test_capitalised_terms_skip_the_word_that_starts_a_sentence():
    terms = capitalised_terms("What must the Receiving Party do? Records of Client Money.")
    assert ["Receiving", "Party"] in terms and ["Client", "Money"] in terms
    assert ["What"] not in terms and ["Records"] not in terms


# evidence --------------------------------------------------------------------------------------
def test_evidence_answers_in_scope_and_abstains_with_reasons(index):
    found = evidence(index, "retention period for records of client money reconciliations")
    assert found.mode != ABSTAIN and found.reason in (None, "conflicting_evidence")
    assert found.hits and found.strong_hits >= 1 and 0 < found.scope <= 1
    off = evidence(index, "minimum wage for warehouse workers in Bavaria")
    assert off.mode == ABSTAIN and off.reason == "out_of_scope"
    vague = evidence(index, "records")
    assert vague.mode == ABSTAIN and vague.reason == "ambiguous_query"
    phrase = "retention period for records of client money reconciliations"
    strict = evidence(index, phrase, settings=EvidenceSettings(min_relevance=0.999))
    assert strict.mode == ABSTAIN and strict.reason in ("low_similarity", "out_of_scope")
    # A question is judged by the relevance model's reading of what was found, not by how many
    # of its words the paragraphs share: people ask in their own words.
    read = evidence(index, RETENTION_QUESTION, settings=EvidenceSettings(min_relevance=0.999))
    assert read.mode != ABSTAIN and read.top_answers >= EvidenceSettings().min_answers
    # The answerability model decides; the relevance model's best chance alone only where
    # that model is off.
    declined = evidence(index, RETENTION_QUESTION, settings=EvidenceSettings(abstain_below=1.01))
    assert declined.mode == ABSTAIN and declined.reason == "not_answered_by_sources"
    assert "answerability" in declined.explanation
    barred = EvidenceSettings(min_answers=1.01)
    assert evidence(index, RETENTION_QUESTION, settings=barred).mode != ABSTAIN
    alone = evidence(index, RETENTION_QUESTION, settings=replace(barred, answerability=False))
    assert alone.mode == ABSTAIN and alone.reason == "not_answered_by_sources"
    assert "the relevance model's best chance" in alone.explanation


def test_authority_is_relevance_weighted_level(index):
    hits = index.search("retention of records", k=5).hits
    settings = EvidenceSettings()
    levels = {h.metadata.get("authority_level") for h in hits}
    assert "primary" in levels and "secondary" in levels  # the catalog gives both
    value = authority_of(hits, settings)
    known = [h for h in hits if h.metadata.get("authority_level") in settings.authority_levels]
    expected = sum(
        settings.authority_levels[h.metadata["authority_level"]] * h.relevance for h in known
    ) / sum(h.relevance for h in known)
    assert value == pytest.approx(expected)
    low = EvidenceSettings(min_authority=0.99, min_scope=0.0)
    assert evidence(index, "audit documentation retention period", settings=low).reason in (
        "low_authority",
        "insufficient_chunks",
    )


def test_sources_of_low_authority_qualify_an_answer_by_default(index):
    """With the default settings, an answer resting on an FAQ or a commentary is QUALIFIED and
    says why (low_authority), as a lawyer would flag it; the same hits from the rulebook are
    not."""
    hits = index.search(RETENTION_QUESTION, k=5).hits
    as_faq = [replace(h, metadata={**h.metadata, "authority_level": "faq"}) for h in hits]
    found = evidence(index, RETENTION_QUESTION, hits=as_faq)
    assert found.mode == QUALIFIED and found.reason == "low_authority", found.explanation
    assert "authority 0.30 < 0.5" in found.explanation
    as_rules = [replace(h, metadata={**h.metadata, "authority_level": "primary"}) for h in hits]
    assert evidence(index, RETENTION_QUESTION, hits=as_rules).reason != "low_authority"


def test_direct_needs_every_signal(index):
    loose = EvidenceSettings(direct_scope=0.0, direct_relevance=0.0, direct_authority=0.0)
    found = evidence(index, "retention period for records of client money reconciliations",
                     settings=loose)  # fmt: skip
    assert found.mode == DIRECT or found.conflicts
    strict = EvidenceSettings(direct_relevance=1.0)
    assert evidence(index, "retention period for records of client money reconciliations",
                    settings=strict).mode != DIRECT  # fmt: skip
    # A question is DIRECT only where the first paragraph found answers it.
    assert (
        evidence(index, RETENTION_QUESTION, settings=EvidenceSettings(direct_answers=1.01)).mode
        != DIRECT
    )


# extract ---------------------------------------------------------------------------------------
def test_extract_returns_a_sentence_with_offsets(index):
    result = extract(index, RETENTION_QUESTION, document="Records Retention Act")
    assert not result.no_answer
    best = result.answers[0]
    paragraph = index.get(best.chunk_id).hit.text
    assert paragraph[best.start : best.end] == best.text
    sentences = [paragraph[a:b] for a, b in split_sentences(paragraph)]
    assert best.text in sentences
    assert SEVEN_YEARS in best.text
    assert all(a.confidence <= 1 for a in result.answers)


def test_extract_reranked_keeps_the_answer_and_carries_its_paragraphs_chance(index):
    from lexkb.core.judge.shipped import answers

    plain = extract(index, RETENTION_QUESTION, document="Records Retention Act", k=10, rerank=False)
    result = extract(index, RETENTION_QUESTION, document="Records Retention Act", k=10)
    best = result.answers[0]
    assert SEVEN_YEARS in best.text and "relevance model" in result.reason
    # each answer carries the chance of the paragraph it was cut from, read alone
    paragraph = index.get(best.chunk_id).hit.text
    assert best.answers == pytest.approx(
        float(answers(RETENTION_QUESTION, [paragraph])[0]), abs=1e-4
    )
    assert all(a.answers is None for a in plain.answers)
    assert {a.chunk_id for a in result.answers} == {a.chunk_id for a in plain.answers}


def test_reranked_lets_the_model_lift_a_paragraph_it_is_sure_of(monkeypatch):
    # lexkb.answers exports the function extract under the module's name
    module = importlib.import_module("lexkb.answers.extract")
    spans = [module.Span(f"c{i}", "d", None, None, "d", 0, 1, f"s{i}", 1.0, 1.0) for i in range(5)]
    paragraphs = {f"c{i}": f"paragraph {i}" for i in range(5)}
    read = []

    def chances(question, texts):
        read.extend(texts)
        return np.array([0.0, 0.9, 0.1, 0.1, 0.1])

    monkeypatch.setattr(module, "answer_chances", chances)
    order = [s.text for s in module.reranked("q", spans, paragraphs)]
    # the paragraphs are what the model reads; its first, second as given, overtakes the first
    assert read == [f"paragraph {i}" for i in range(5)]
    assert order[0] == "s1" and sorted(order) == [f"s{i}" for i in range(5)]


def test_extract_picks_the_sentence_of_a_paragraph_the_model_reads_as_the_answer():
    module = importlib.import_module("lexkb.answers.extract")
    from lexkb.core.vocabulary import ChunkLevel
    from lexkb.results import Hit

    text = (
        "The firm keeps its records at its head office in London. "
        "The firm must keep each record for at least seven years after the end of the year."
    )
    hit = Hit("p1", "d", "d", ChunkLevel.PARAGRAPH, None, [], None, 1.0, text)
    single = Hit("p2", "d", "d", ChunkLevel.PARAGRAPH, None, [], None, 1.0, "One sentence only.")
    split = text.index(" The firm must") + 1

    def candidates(first: float, second: float):
        return [
            module.BestSentence(hit, 0, split - 1, first),
            module.BestSentence(hit, split, len(text), second),
            module.BestSentence(single, 0, len(single.text), 0.0),
        ]

    spans = [
        module._span(hit, 0, split - 1, 0.0, 1.0, "sentence"),
        module._span(single, 0, len(single.text), 0.0, 1.0, "sentence"),
    ]
    question = "How long must the firm keep its records?"
    # At equal scores the sentence the model reads as saying how long wins, whole.
    chosen = module.chosen_sentences(question, spans, candidates(0.0, 0.0))
    assert chosen[0].text == text[split:] == text[chosen[0].start : chosen[0].end]
    assert chosen[0].chunk_id == "p1" and chosen[1] == spans[1]
    # A chance (at most 1) does not overturn a sentence score far ahead.
    kept = module.chosen_sentences(question, spans, candidates(5.0, 0.0))
    assert kept[0].text == text[: split - 1]


def test_extract_says_no_answer_when_nothing_addresses_it(index):
    result = extract(index, "What is the capital requirement for insurance brokers?",
                     document="Records Retention Act", min_relevance=0.5)  # fmt: skip
    assert result.no_answer and result.answers == [] and "relevance" in result.reason


# ask -------------------------------------------------------------------------------------------
def test_ask_answers_extractively_with_verified_citations(index):
    answer = ask(index, RETENTION_QUESTION, cache=None)
    assert answer.mode in (DIRECT, "QUALIFIED") and answer.generated_by == "extractive"
    assert SEVEN_YEARS in answer.answer and "[1]" in answer.answer
    assert answer.sources[0].number == 1 and "§ 103" in answer.sources[0].citation
    assert all(s.verdict == "supported" for s in answer.sentences)
    assert answer.verification["supported"] == answer.verification["sentences"] >= 1
    assert 0 < answer.confidence <= 1 and not answer.from_cache


def test_ask_refuses_and_abstains(index):
    refused = ask(index, "What will the regulator change next year?", cache=None)
    assert refused.mode == ABSTAIN and refused.abstention_reason == "predictive"
    assert refused.answer == "" and len(refused.suggestions) == 3 and refused.sources == []
    out = ask(index, "What is the penalty for speeding on a German autobahn?", cache=None)
    assert out.mode == ABSTAIN and out.abstention_reason == "out_of_scope"


def test_cache_hits_then_clears_on_a_new_snapshot(index):
    cache = AnswerCache()
    first = ask(index, RETENTION_QUESTION, cache=cache)
    again = ask(
        index, "  how LONG must records of client-money reconciliations be kept ", cache=cache
    )
    assert not first.from_cache and again.from_cache and again.answer == first.answer
    assert (
        cache.get(AnswerCache.key(RETENTION_QUESTION, None, index.version), "other", 3600) is None
    )
    assert not ask(index, RETENTION_QUESTION, cache=cache).from_cache


def test_history_is_kept_in_the_named_file(index, tmp_path):
    path = tmp_path / "turns.json"
    ask(index, RETENTION_QUESTION, history=path, cache=None)
    follow = ask(index, "and for audit files?", history=path, cache=None)
    turns = json.loads(path.read_text())
    assert [t["question"] for t in turns] == [RETENTION_QUESTION, "and for audit files?"]
    assert turns[0]["mode"] != ABSTAIN and turns[1]["mode"] == follow.mode


class FakeChat:
    """An OpenAI-compatible /v1/chat/completions that replies with `reply`, where "{cited}"
    becomes the chunk id of the prompt's paragraph that says "seven years"."""

    def __init__(self, reply: str) -> None:
        self.prompts: list[str] = []
        outer = self

        class Handler(JSONHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                prompt = body["messages"][-1]["content"]
                outer.prompts.append(prompt)
                paragraphs = re.findall(r'<paragraph id="([^"]+)"[^>]*>([^<]*)<', prompt)
                cited = next(i for i, text in paragraphs if "seven years" in text)
                text = reply.format(cited=cited)
                self._send(200, {"model": "fake-1", "choices": [{"message": {"content": text}}]})

        self._server = LocalServer(Handler)
        self.url = f"{self._server.root}/v1"

    def close(self) -> None:
        self._server.close()


@pytest.fixture()
def chat(monkeypatch):
    servers = []

    def start(reply: str) -> FakeChat:
        server = FakeChat(reply)
        servers.append(server)
        monkeypatch.setenv("LEXKB_LLM_URL", server.url)
        return server

    yield start
    for server in servers:
        server.close()


def test_llm_answer_is_cited_verified_and_unsupported_sentences_dropped(index, chat):
    hit = index.search(RETENTION_QUESTION, k=1).hits[0]
    sentence = next(s for s in hit.text.split(". ") if "seven years" in s)
    server = chat(sentence.strip(" .") + ". [{cited}] The Moon is made of cheese. [{cited}]")
    answer = ask(index, RETENTION_QUESTION, cache=None)
    assert answer.generated_by == "llm:fake-1"
    assert "<context" in server.prompts[0] and RETENTION_QUESTION in server.prompts[0]
    assert "seven years" in answer.answer and "cheese" not in answer.answer
    assert answer.verification["dropped"] == 1 and answer.verification["supported"] == 1


def test_llm_failure_falls_back_to_extractive_with_a_warning(index, monkeypatch):
    monkeypatch.setenv("LEXKB_LLM_URL", "http://127.0.0.1:9/v1")
    answer = ask(index, RETENTION_QUESTION, cache=None)
    assert answer.generated_by == "extractive" and SEVEN_YEARS in answer.answer
    assert any("answered extractively" in w for w in answer.warnings)


def test_cli_ask_prints_numbered_citations_and_mode(built_root):
    run = subprocess.run(
        [LEXKB, "ask", RETENTION_QUESTION, "--index", str(built_root)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    first = run.stdout.splitlines()[0]
    assert first.startswith(("[DIRECT]", "[QUALIFIED]")) and "[1]" in first
    assert "  [1] Records Retention Act" in run.stdout
    refused = subprocess.run(
        [LEXKB, "ask", "Should we outsource compliance?", "--json", "--index", str(built_root)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert refused.returncode == 1
    payload = json.loads(refused.stdout)
    assert payload["mode"] == ABSTAIN and payload["abstention_reason"] == "advice"


def test_inputs_are_bounded(index):
    from lexkb.limits import QueryError

    too_long = "records " * index.limits.max_query_chars
    for call in (
        lambda: evidence(index, too_long, hits=[]),
        lambda: ask(index, too_long, cache=None),
        lambda: extract(index, too_long),
        lambda: check_question(index, too_long),
    ):
        with pytest.raises(QueryError):
            call()


def test_a_sentence_reached_twice_is_said_once_citing_both(index):
    """Issue 58 item 4: never the same sentence twice. The same words from two paragraphs (one
    definition inserted by two amending provisions) are one sentence citing both."""
    from lexkb.answers.ask import distinct

    first, second = index.search("client money", k=2, mode="keyword").hits
    said = "“Client money” means money held for a client."
    drafts = [
        (said, [first]),
        ("Another sentence.", [first]),
        ("“Client  money” means money held for a client.", [second]),
    ]
    kept = distinct(drafts)
    assert [text for text, _ in kept] == [said, "Another sentence."]
    assert [h.chunk_id for h in kept[0][1]] == [first.chunk_id, second.chunk_id]
    # The same paragraph reached twice is cited once.
    assert [h.chunk_id for h in distinct([(said, [first]), (said, [first])])[0][1]] == [
        first.chunk_id
    ]


def test_a_qualified_answer_names_the_question_words_its_sources_never_say(index):
    """Issue 58 item 4: a flagged answer says why it may not answer: the question's rare words
    the provisions quoted do not use, as the question wrote them; framing words and the
    sources' own names aside."""
    from lexkb.answers.plain import qualified, unsaid

    texts = ["Client money must be reconciled each business day."]
    missing = unsaid(
        "How long must the Fund Manager keep reconciliation records?",
        texts,
        index.term_idf,
        ["Lexkb Rulebook, Rule 4.3.1"],
    )
    assert "long" not in missing and "must" not in missing
    assert missing and all(w in ("Fund", "Manager", "keep", "records") for w in missing)
    assert unsaid("Must client money be reconciled?", texts, index.term_idf) == []
    said = qualified(["A, Rule 1", "A, Rule 2"], 0.5, ["records"])
    assert "(they do not say 'records')" in said and "read them" in said
    assert "(it does not say 'fees' or 'audit')" in qualified(["A, Rule 1"], 0.5, ["fees", "audit"])
