"""Documents whose keys are numbers (passage files "3.json" and "32.json", as ObliQA ships its
rulebooks): a reference's dotted number is never read as a document and a unit, so "clause
3.2.1" is no `exact` match for document "3"'s unit "2.1" or document "32"'s unit "1"."""

from __future__ import annotations

import json

import pytest

from lexkb import Index
from lexkb.results import MatchKind

pytestmark = pytest.mark.build


def _passages(document: int, texts: dict[str, str]) -> list[dict]:
    return [
        {"ID": f"{document}-{ref}", "DocumentID": document, "PassageID": ref, "Passage": text}
        for ref, text in texts.items()
    ]


@pytest.fixture(scope="module")
def numbered(tmp_path_factory: pytest.TempPathFactory) -> Index:
    from pipelines.in_process import run_build

    corpus = tmp_path_factory.mktemp("numbered")
    units = {
        "1": "Application of these rules to every firm.",
        "2.1": "A firm must keep client money apart from its own money.",
        "3.2.1": "A firm must reconcile client money every business day.",
    }
    for document in (3, 32):
        (corpus / f"{document}.json").write_text(json.dumps(_passages(document, units)))
    root = tmp_path_factory.mktemp("numbered-index")
    run_build([corpus], root, embedder="none")
    return Index.open(root)


def test_a_dotted_number_is_not_a_document_and_a_unit(numbered: Index):
    for asked in ("clause 3.2.1", "paragraph 3.2.1", "3.2.1"):
        found = numbered.get(asked)
        assert found.match == MatchKind.AMBIGUOUS, (asked, found.reason)
        assert {h.ref for h in found.alternatives} == {"3.2.1"}
    # Named, each document's own unit is found exactly.
    found = numbered.get("3.2.1 of 32")
    assert found.match == MatchKind.EXACT and found.hit.ref == "3.2.1"


def test_a_claim_cited_to_an_ambiguous_reference_is_ambiguous_not_found(numbered: Index):
    """A citation that fits units of several documents is neither checked against a guess nor
    reported as naming nothing: `ambiguous`, with each candidate named, and it supports
    nothing; named, the same unit is read."""
    from lexkb.answers.claims import verify_citations
    from lexkb.core.vocabulary import Verdict

    claim = "A firm must reconcile client money every business day."
    checked = verify_citations(numbered, [{"ref": "clause 3.2.1", "claim": claim}])
    (match,) = checked.citations
    assert match.verdict == Verdict.AMBIGUOUS and match.lookup_match == MatchKind.AMBIGUOUS
    assert len(match.closest) == 2 and checked.score == 0.0
    named = verify_citations(numbered, [{"ref": "3.2.1 of 32", "claim": claim}])
    assert named.citations[0].verdict == Verdict.SUPPORTED
