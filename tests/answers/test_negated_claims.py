"""A denied claim and the support model: the polarity rule (issue 46) catches a denial the
model reads as weak support, and never overrules the model's own reading elsewhere (issue 57,
where it had cost ContractNLI 9 points of macro-F1 on pairs and 18 over whole NDAs)."""

from __future__ import annotations

from lexkb.answers.claims import judge
from lexkb.answers.passages.document_verdict import document_verdict
from lexkb.core.vocabulary import Verdict
from lexkb.results import Hit
from tests.conftest import shared_file

DEFENCE = (
    "But it is a defence for C to prove that C had in place adequate procedures designed to "
    "prevent persons associated with C from undertaking such conduct."
)
DENIED = (
    "It is no defence for a commercial organisation that it had adequate procedures in place "
    "to prevent bribery."
)


def _paragraph(text: str, chunk_id: str = "p") -> Hit:
    """A paragraph of no document in particular: only its words are judged."""
    fields = {"document_title": None, "ref": None, "section_path": [], "page": None}
    return Hit(chunk_id, "d", chunk_level="paragraph", score=None, text=text, **fields)


def test_a_claim_denying_what_its_paragraph_affirms_is_contradicted():
    verdict = judge(DENIED, _paragraph(DEFENCE))
    assert verdict["verdict"] == Verdict.CONTRADICTED
    assert verdict["conflict"] == "polarity"
    assert verdict["words"] == ["is no defence", "is a defence"]


def test_a_denial_in_one_paragraph_does_not_decide_a_whole_document():
    """Another paragraph that states the claim outweighs one read against it by rule, as an
    exception does its rule; only a quantity in conflict decides a document alone."""
    stated = _paragraph(
        "It is no defence for a commercial organisation that it had adequate procedures in "
        "place to prevent bribery by persons associated with it.",
        "stated",
    )
    judged = [(_paragraph(DEFENCE, "defence"), judge(DENIED, _paragraph(DEFENCE, "defence")))]
    judged.append((stated, judge(DENIED, stated)))
    assert judged[0][1]["conflict"] == "polarity"
    hit, verdict = document_verdict(DENIED, judged)
    assert verdict["verdict"] == Verdict.SUPPORTED and hit.chunk_id == "stated"


def test_the_rule_leaves_the_support_models_reading_of_contract_pairs_alone():
    """ContractNLI dev pairs of two hypotheses whose NDAs deny in lists and negative subjects
    ("shall not copy, ... or (b) use"; "Nothing ... shall be construed as granting"): the
    rule overrules none of them where the model reads the hypothesis confidently."""
    from evaluation_data.contractnli import dev_pairs

    asked = {
        "Agreement shall not grant Receiving Party any right to Confidential Information.",
        "Receiving Party shall not use any Confidential Information for any purpose other than "
        "the purposes stated in Agreement.",
    }
    pairs = [
        p
        for p in dev_pairs(shared_file("contractnli", "dev.json").parents[1])
        if p.hypothesis in asked
    ]
    assert len(pairs) > 60
    overruled = [
        (p.label, verdict["entailment"])
        for p in pairs
        if (verdict := judge(p.hypothesis, _paragraph(p.premise))).get("conflict") == "polarity"
        and verdict["entailment"] >= 0.9
    ]
    assert overruled == []
