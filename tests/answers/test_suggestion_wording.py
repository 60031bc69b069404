"""The questions a refusal suggests read as questions: a heading's numbering is gone, a roman
chapter number too ("CHAPTER III ICT-related ..."), a heading that is only a reference once its
numbering is gone ("Article 3, paragraph 14") suggests nothing, and a document with a long
title is named by its short name, so that a suggestion stays one line."""

from __future__ import annotations

from lexkb.answers import guardrails
from lexkb.results import Hit


def _hit(heading: str, document_key: str = "records-retention-act") -> Hit:
    return Hit("chk-x", document_key, "Records Retention Act", "paragraph", None, [heading], None,
               None, "text")  # fmt: skip


def test_numbering_and_references_are_not_subjects(index):
    hits = [_hit("Article 3, paragraph 14"), _hit("CHAPTER III ICT-related risk management")]
    found = guardrails.suggestions(index, "anything", hits=hits, n=2)
    assert found[0] == "What does Records Retention Act say about ICT-related risk management?"
    assert not any("paragraph 14" in s or "about ," in s or "III" in s for s in found), found
    # Words that only look like roman numbers stay.
    assert guardrails._heading(_hit("Civil liability")) == "Civil liability"


def test_a_long_title_gives_way_to_the_short_name(index, monkeypatch):
    rulebook = _hit("4.3 Reconciliation", "lrb-chapter-4-client-assets")
    title = next(
        d["title"] for d in index.documents() if d["document_key"] == rulebook.document_key
    )
    assert f"What does {title} say about Reconciliation?" in guardrails.suggestions(
        index, "anything", hits=[rulebook], n=1
    )
    monkeypatch.setattr(guardrails, "LONG_TITLE", len(title) - 1)
    assert guardrails.suggestions(index, "anything", hits=[rulebook], n=1) == [
        "What does LRB say about Reconciliation?"
    ]
