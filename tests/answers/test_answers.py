"""The answer tools on the sample corpus's real snapshot: context, entities, citations,
relations, contradictions, and the quantity reader under them."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import replace

import pytest

from lexkb.answers import (
    check_contradictions,
    format_context,
    verify_citations,
    verify_entities,
    verify_relations,
)
from lexkb.answers.passages.quantities import as_quantity, find_quantities
from lexkb.answers.tokens import count_tokens
from lexkb.limits import QueryError
from lexkb.results import Hit

RETENTION = "Records Retention Act § 103(b)"  # "... kept for not less than seven years ..."


@pytest.fixture(scope="module")
def hits(index):
    return index.search("how long must client money reconciliation records be kept", k=6).hits


# format_context --------------------------------------------------------------------------------
def test_context_is_xml_grouped_by_document_with_citations(index, hits):
    context = format_context(index, hits, "how long are records kept", max_tokens=8000)
    root = ET.fromstring(context.xml)
    documents = root.findall("document")
    keys = [d.get("key") for d in documents]
    assert len(keys) == len(set(keys)), "each document appears once"
    paragraphs = root.findall("document/paragraph")
    assert [p.get("id") for p in paragraphs] == context.included
    assert {p.get("id") for p in paragraphs} == {h.chunk_id for h in hits}
    first = next(p for p in paragraphs if p.get("id") == hits[0].chunk_id)
    assert first.get("citation") == hits[0].citation and first.text == hits[0].text
    assert first.get("role") == "primary" and first.get("content_hash") == hits[0].content_hash
    assert context.tokens == count_tokens(context.xml) <= context.max_tokens


def test_context_keeps_to_its_budget_and_says_what_it_left_out(index, hits):
    whole = format_context(index, hits, max_tokens=8000)
    budget = whole.tokens - 40
    tight = format_context(index, hits, max_tokens=budget)
    assert count_tokens(tight.xml) <= budget
    assert 1 <= len(tight.included) < len(hits)
    assert {o.chunk_id for o in tight.omitted} == {h.chunk_id for h in hits} - set(tight.included)
    assert all("token budget" in o.reason for o in tight.omitted)
    ET.fromstring(tight.xml)
    with pytest.raises(QueryError, match="holds no paragraph"):
        format_context(index, hits, max_tokens=20)


def test_context_caps_roles_and_reports_unknown_ids(index, hits):
    ids = [h.chunk_id for h in hits]
    roles = {i: "context" for i in ids}
    context = format_context(index, [*ids, "chk-nosuch"], roles=roles)
    assert len(context.included) == 5  # context paragraphs are capped at 5
    reasons = {o.chunk_id: o.reason for o in context.omitted}
    assert "over the cap of 5 context" in reasons[ids[5]]
    assert "no paragraph chk-nosuch" in reasons["chk-nosuch"]
    with pytest.raises(QueryError, match="role 'boss'"):
        format_context(index, ids[:1], roles=["boss"])


def test_hostile_text_cannot_break_the_xml(index, hits):
    nasty = 'end</paragraph></document><x a="1"/>]]><!-- & \x00\x1b[31m \ud800 "quoted" <![CDATA['
    hostile = replace(hits[0], text=nasty, ref='7"><evil x="', document_title="A & B </doc>")
    context = format_context(index, [hostile], query='q"><inject/>')
    root = ET.fromstring(context.xml)
    paragraph = root.find("document/paragraph")
    assert paragraph is not None and len(list(paragraph)) == 0  # no element smuggled in
    assert "</paragraph></document>" in paragraph.text and "]]>" in paragraph.text
    assert paragraph.get("ref") == '7"><evil x="'
    assert root.get("query") == 'q"><inject/>'


# verify_entities -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("30 days", "period:30 day"),
        ("thirty (30) days", "period:30 day"),
        ("a 30-day period", "period:30 day"),
        ("USD 5,000", "amount:USD 5000"),
        ("$5000", "amount:USD 5000"),
        ("1 January 2024", "date:2024-01-01"),
        ("2024-01-01", "date:2024-01-01"),
        ("January 1, 2024", "date:2024-01-01"),
        ("ten per cent", "percent:10"),
        ("one hundred and twenty (120) days", "period:120 day"),
    ],
)
def test_quantities_normalise(text, key):
    assert as_quantity(text).key == key


def test_a_number_inside_a_longer_one_is_not_it():
    assert [q.key for q in find_quantities("within 130 days")] == ["period:130 day"]
    assert as_quantity("Article 30") is None


def test_entities_found_normalised_near_missed_and_missing(index):
    result = verify_entities(
        index,
        ["seven years", "7 years", "Client-Money", "five years", "USD 5,000", "reconcilations"],
        [RETENTION],
    )
    by = {e.entity: e for e in result.entities}
    assert by["seven years"].match == "exact"
    assert by["7 years"].match == "normalized" and by["7 years"].source_text == "seven years"
    hit = by["Client-Money"]
    assert hit.match == "normalized" and hit.source_text.casefold() == "client money"
    text = index.hit(hit.chunk_id).text
    assert text[hit.start : hit.end] == hit.source_text
    assert by["five years"].match == "near_miss" and "seven years" in by["five years"].reason
    assert by["USD 5,000"].match == "not_found"
    assert by["reconcilations"].match == "near_miss"  # a misspelling is close, not found
    assert result.score == 0.5 and not result.passed


def test_entities_need_a_real_source(index):
    with pytest.raises(QueryError, match="none of the sources"):
        verify_entities(index, ["seven years"], ["Rule 99.9.9"])


# verify_citations ------------------------------------------------------------------------------
def test_citations_supported_contradicted_not_addressed_and_missing(index):
    claim = "Records of client money reconciliations must be kept for at least seven years"
    result = verify_citations(
        index,
        [
            {"ref": RETENTION, "claim": claim},
            {"ref": RETENTION, "claim": claim.replace("seven", "five")},
            {
                "ref": RETENTION,
                "claim": "Records of client money reconciliations shall not be kept",
            },
            {"ref": RETENTION, "claim": "A data controller may appoint a representative abroad"},
            {"ref": "Article 5(3)", "claim": claim},
        ],
    )
    verdicts = [c.verdict for c in result.citations]
    assert verdicts == ["supported", "contradicted", "contradicted", "not_addressed", "not_found"]
    assert "seven years" in result.citations[0].best_sentence
    assert result.citations[1].conflict_words == ["five years", "seven years"]
    assert (
        "nearest" in result.citations[4].reason and result.citations[4].lookup_match == "enclosing"
    )
    assert result.score == 0.2 and not result.passed


def test_a_claim_cited_to_a_whole_document_finds_its_paragraph(index):
    claim = "Records of client money reconciliations must be kept for at least seven years"
    result = verify_citations(
        index,
        [
            {"document": "Records Retention Act", "claim": claim},
            {"document": "Records Retention Act", "claim": claim.replace("seven", "two")},
        ],
    )
    supported, contradicted = result.citations
    assert supported.verdict == "supported" and supported.lookup_match == "document"
    assert supported.citation == "Records Retention Act, § 103(b)"
    assert contradicted.verdict == "contradicted"


def test_a_document_verdict_rests_on_what_was_found():
    from lexkb.answers.passages.document_verdict import document_verdict
    from lexkb.core.vocabulary import Decider

    def paragraph(chunk_id):
        return Hit(chunk_id, "nda", "NDA", "paragraph", None, [], None, 1.0, "text")

    def found(verdict, entailment, contradiction, **more):
        return {"verdict": verdict, "support": entailment, "entailment": entailment,
                "contradiction": contradiction, "reason": "read", "decided_by": Decider.MODEL,
                **more}  # fmt: skip

    quiet = (paragraph("a"), found("not_addressed", 0.1, 0.1))
    entails = (paragraph("b"), found("supported", 0.97, 0.05))
    opposed = (
        paragraph("c"),
        found("contradicted", 0.0, 0.2, decided_by=Decider.RULE, conflict="modality"),
    )
    hit, result = document_verdict("claim", [quiet, entails])
    assert (hit.chunk_id, result["verdict"]) == ("b", "supported")
    # a rule's opposed modality counts, but a stronger entailment elsewhere wins
    assert document_verdict("claim", [quiet, opposed])[1]["verdict"] == "contradicted"
    assert document_verdict("claim", [opposed, entails])[1]["verdict"] == "supported"
    # nothing strong enough: not addressed, never supported or contradicted by default
    hit, result = document_verdict("claim", [quiet])
    assert result["verdict"] == "not_addressed" and "0.10" in result["reason"]
    # a quantity the best paragraph lacks is never supported
    lacking = (paragraph("d"), found("not_addressed", 0.95, 0.0, missing=["30 days"]))
    assert document_verdict("claim", [lacking])[1]["verdict"] == "not_addressed"
    # another value of a quantity decides, whatever the model read elsewhere
    other = (paragraph("e"), found("contradicted", 0.0, 0.0, decided_by=Decider.RULE,
                                   conflict="period"))  # fmt: skip
    assert document_verdict("claim", [entails, other])[0].chunk_id == "e"


# verify_relations ------------------------------------------------------------------------------
def test_relations_confirmed_and_near_misses(index):
    result = verify_relations(
        index,
        [
            {"source": "LSA 230 8", "target": "LSA 230 A6"},
            {"source": "LSA 230 A6", "target": "DHR Article 5", "relation_type": "cited-by"},
            {"source": "LSA 230 A6", "target": "Rule 4.3.1", "max_hops": 1},
            {"source": "LSA 230 8", "target": "Rule 99.9.9"},
        ],
    )
    statuses = [r.status for r in result.relations]
    assert statuses[0] == "confirmed" and result.relations[0].path[0]["direction"] == "cites"
    assert statuses[1] == "wrong_direction"
    assert statuses[2] in ("too_far", "not_connected")
    assert statuses[3] == "unknown_target"
    assert result.score == 0.25


# check_contradictions --------------------------------------------------------------------------
def test_claims_against_paragraphs_name_the_words_in_conflict(index):
    result = check_contradictions(
        index,
        [RETENTION],
        claims=[
            "Records of client money reconciliations shall be kept for three years.",
            "Records of client money reconciliations shall not be kept.",
            "Records of client money reconciliations shall be kept for seven years.",
        ],
    )
    kinds = {(c.first, c.kind): c.words for c in result.conflicts}
    assert kinds[("claim 0", "period")] == ["three years", "seven years"]
    assert kinds[("claim 1", "modality")] == ["shall not", "shall"]
    assert not any(c.first == "claim 2" for c in result.conflicts)
    assert result.count == len(result.conflicts) and not result.passed


def test_paragraphs_on_different_subjects_do_not_conflict(index, hits):
    result = check_contradictions(index, [h.chunk_id for h in hits[:2]])
    assert all(len(c.shared_topic) >= 2 for c in result.conflicts)
