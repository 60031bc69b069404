"""Search filters on document metadata from the sample catalog, alone and combined."""

from __future__ import annotations

from datetime import date

import pytest

from lexkb.cli.main import main

TODAY = date(2026, 11, 22)
QUERY = "records client money audit retention personal data"


def _documents(index, **filters) -> set[str]:
    hits = index.search(QUERY, k=100, filters=filters, today=TODAY)
    return {h.document_key for h in hits}


ALL = {
    "LKB-FAQ",
    "data-handling-regulation",
    "lrb-chapter-4-client-assets",
    "lsa-230-audit-documentation",
    "records-retention-act",
}


def test_the_query_reaches_every_document_unfiltered(index):
    assert _documents(index) == ALL


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"document_type": "rulebook"}, {"lrb-chapter-4-client-assets"}),
        (
            {"document_type": ["act", "Standard"]},
            {"records-retention-act", "lsa-230-audit-documentation"},
        ),
        ({"authority_level": "secondary"}, {"lsa-230-audit-documentation"}),
        (
            {"author": "Lexkb Authority"},
            {"LKB-FAQ", "data-handling-regulation", "lrb-chapter-4-client-assets"},
        ),
        (
            {"tags": "records"},
            {"data-handling-regulation", "records-retention-act", "lsa-230-audit-documentation"},
        ),
        ({"tags": ["records", "audit"]}, {"lsa-230-audit-documentation"}),
        ({"source": "https://lexkb.example/regulations"}, {"data-handling-regulation"}),
        ({"source": "records-retention"}, {"records-retention-act"}),
        (
            {"start": "2026-01-01"},
            {"LKB-FAQ", "data-handling-regulation", "lrb-chapter-4-client-assets"},
        ),
        ({"end": "2025-01-01"}, {"records-retention-act", "lsa-230-audit-documentation"}),
        (
            {"start": "2024-01-01", "end": "2026-02-28"},
            {"lsa-230-audit-documentation", "data-handling-regulation"},
        ),
        ({"period": "last_7_days"}, {"LKB-FAQ"}),
        ({"period": "yesterday"}, set()),
        (
            {"period": "last_365_days"},
            {"LKB-FAQ", "data-handling-regulation", "lrb-chapter-4-client-assets"},
        ),
        ({"deprecated": False}, ALL),
        ({"section": "4 CLIENT ASSETS > 4.3"}, {"lrb-chapter-4-client-assets"}),
        (
            {"document": ["LSA 230", "DHR"]},
            {"lsa-230-audit-documentation", "data-handling-regulation"},
        ),
    ],
)
def test_each_filter_alone(index, filters, expected):
    assert _documents(index, **filters) == expected


def test_filters_combine_with_and(index):
    assert _documents(
        index, author="Lexkb Authority", tags="client money", document_type="faq"
    ) == {"LKB-FAQ"}
    assert _documents(index, authority_level="primary", end="2026-02-01") == {
        "records-retention-act"
    }  # the rulebook is dated by its effective date, 2026-03-01
    assert _documents(index, tags="records", start="2024-01-01", document_type="standard") == {
        "lsa-230-audit-documentation"
    }
    assert (
        _documents(index, tags="records", period="last_365_days", document_type="standard") == set()
    )
    hits = index.search(
        QUERY, k=100, filters={"tags": "audit", "chunk_level": "section"}, today=TODAY
    )
    assert hits.hits and {h.chunk_level for h in hits} == {"section"}
    assert {h.document_key for h in hits} == {"lsa-230-audit-documentation"}


def test_results_carry_url_and_metadata(index):
    hit = index.search("segregation of client money", k=1, today=TODAY)[0]
    assert hit.source_url == "https://lexkb.example/rulebook/chapter-4"
    assert hit.metadata["document_type"] == "rulebook"
    assert hit.metadata["effective"] == "2026-03-01"
    assert hit.to_dict()["metadata"]["tags"] == ["client assets", "client money"]


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"period": "last_fortnight"}, "unknown period"),
        ({"start": "1 May 2024"}, "needs a date"),
        ({"colour": "red"}, "unknown filter"),
    ],
)
def test_bad_filter_values_are_clear_errors(index, filters, message):
    with pytest.raises(ValueError, match=message):
        index.search(QUERY, filters=filters, today=TODAY)


def test_cli_filters(built_root, capsys):
    code = main(
        [
            "search",
            QUERY,
            "--index",
            str(built_root),
            "--tag",
            "records",
            "--tag",
            "audit",
            "--json",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert '"lsa-230-audit-documentation"' in out and '"records-retention-act"' not in out
    assert main(["search", QUERY, "--index", str(built_root), "--start", "someday"]) == 2
