"""The six real documents of ../shared/data/realdocs built together: every unit cited as its
family cites it, by the document's short name; readable keys with the file-name keys still
resolving; references that name a document, or a kind of unit, kept to it, and one that fits
several documents said to be ambiguous; types, authority and dates read from the documents
themselves. Skips without the reference data."""

from __future__ import annotations

import re
from datetime import date

import polars as pl
import pytest

from lexkb.core.vocabulary import ChunkLevel, MatchKind

# Document key -> the short name its units are cited by, and how its family names a unit.
CITED = {
    "dora": ("DORA", ("Article ", "Recital ")),
    "bribery-act-2010": ("Bribery Act 2010", ("section ", "Schedule ")),
    "ifrs-16-leases": ("IFRS 16", ("paragraph ",)),
    "usc17": ("17 U.S.C.", ("§ ",)),
    "nda": ("NDA", ("clause ",)),
    "compto-aml-policy": ("AML Policy", ("section ",)),
}
# A paragraph with no number of its own, placed by its page and position.
POSITIONAL = re.compile(r"^(?:p\. \d+ )?¶ \d+$")


@pytest.fixture(scope="module")
def six(realdocs_built):
    from lexkb import Index

    return Index.open(realdocs_built[0])


def test_keys_are_readable_and_titles_stay_whole(six):
    documents = {d["document_key"]: d for d in six.documents()}
    assert set(documents) == set(CITED)
    # The document view keeps the full title; citations use the short name.
    assert documents["dora"]["title"].startswith("REGULATION (EU) 2022/2554 OF THE EUROPEAN")
    assert len(documents["dora"]["title"]) > 200


def _chunks(six) -> pl.DataFrame:
    return pl.read_parquet(six.snapshot.table_path("chunks"))


def test_no_citation_is_longer_than_its_short_name_and_reference(six):
    chunks = _chunks(six)
    rows = [
        row
        for row, level in enumerate(chunks["chunk_level"])
        if level in (ChunkLevel.PARAGRAPH, ChunkLevel.SECTION)
    ]
    assert len(rows) > 3900
    for row in rows:
        hit = six.hit(chunks["chunk_id"][row])
        name, kinds = CITED[hit.document_key]
        assert hit.document_title == name
        if hit.ref is None:
            assert hit.citation in (name, f"{name}, p. {hit.page}"), hit
            continue
        cited = hit.cited_ref
        assert cited.startswith(kinds) or POSITIONAL.match(cited), (hit.ref, cited)
        joiner = " " if name.endswith("U.S.C.") else ", "
        assert hit.citation == f"{name}{joiner}{cited}"
        assert len(hit.citation) <= len(name) + len(cited) + 2


def test_every_citation_finds_its_unit_again(six):
    chunks = _chunks(six).filter(
        pl.col("chunk_level").is_in([ChunkLevel.PARAGRAPH, ChunkLevel.SECTION])
        & pl.col("ref").is_not_null()
    )
    for chunk_id in chunks["chunk_id"]:
        hit = six.hit(chunk_id)
        found = six.get(hit.citation)
        assert found.match == MatchKind.EXACT, (hit.citation, found.reason)
        assert (found.hit.document_key, found.hit.ref) == (hit.document_key, hit.ref)


def test_file_name_keys_still_resolve(six):
    assert six.get("CELEX_32022R2554_EN_TXT Article 19(4)").hit.citation == "DORA, Article 19(4)"
    assert six.get("asset_00100_ukpga_20100023_en 7(1)").hit.document_key == "bribery-act-2010"
    document, _ = six.document_paragraphs("asset_00100_ukpga_20100023_en")
    assert document["document_key"] == "bribery-act-2010"
    hits = six.search("customer due diligence", k=5, filters={"document": "Compto AML Policy"})
    assert hits.hits and {h.document_key for h in hits} == {"compto-aml-policy"}


@pytest.mark.parametrize(
    ("asked", "citation"),
    [
        ("nda Section 4.2", "NDA, clause 4.2"),  # the document's own key, lower case
        ("NDA clause 4.2", "NDA, clause 4.2"),
        ("clause 4.2", "NDA, clause 4.2"),  # no Act's section 4(2): clauses are a contract's
        ("paragraph 7", "IFRS 16, paragraph 7"),
        ("Bribery Act section 7", "Bribery Act 2010, section 7"),
        ("17 U.S.C. § 117", "17 U.S.C. § 117"),  # the "17" of 17 U.S.C. is not read in "117"
    ],
)
def test_a_reference_is_kept_to_the_document_and_kind_it_names(six, asked, citation):
    found = six.get(asked)
    assert found.match == MatchKind.EXACT and found.hit.citation == citation, found.reason


def test_a_named_document_without_the_unit_is_never_another_documents(six):
    found = six.get("nda section 7")
    assert found.match != MatchKind.EXACT and (found.hit is None or found.hit.document_key == "nda")


def test_a_reference_that_fits_several_documents_is_ambiguous(six):
    found = six.get("section 7")
    assert found.match == MatchKind.AMBIGUOUS and found.hit is None and not found.found
    candidates = {h.citation for h in found.alternatives}
    assert candidates == {"Bribery Act 2010, section 7", "AML Policy, section 7"}
    assert all(c in found.reason for c in candidates)
    # Every unit it names, for tools that take a reference (hop refuses such a start).
    assert {h.document_key for h in six.resolve("section 7")} == {
        "bribery-act-2010",
        "compto-aml-policy",
    }


def test_a_claim_cited_to_an_ambiguous_reference_names_each_candidate(six):
    from lexkb.answers.claims import verify_citations

    claim = "A commercial organisation is guilty of failing to prevent bribery."
    checked = verify_citations(six, [{"ref": "section 7", "claim": claim}]).citations[0]
    assert (checked.verdict, checked.lookup_match) == ("ambiguous", "ambiguous")
    assert set(checked.closest) == {"Bribery Act 2010, section 7", "AML Policy, section 7"}
    picked = verify_citations(six, [{"ref": "Bribery Act 2010, section 7", "claim": claim}])
    assert picked.citations[0].lookup_match == "exact"


def test_types_authority_and_dates_come_from_the_documents(six):
    documents = {d["document_key"]: d for d in six.documents()}
    stated = {
        key: (d["document_type"], d["authority_level"], d["published"], d["effective"])
        for key, d in documents.items()
    }
    assert stated == {
        "dora": ("regulation", "primary", "2022-12-14", "2025-01-17"),
        "bribery-act-2010": ("act", "primary", "2010-04-08", None),
        "ifrs-16-leases": ("standard", "standard", None, "2019-01-01"),
        "usc17": ("code", "primary", None, None),
        "nda": ("contract", "contract", None, None),
        "compto-aml-policy": ("policy", "internal", None, "2024-12-01"),
    }


def test_date_and_type_filters_find_documents(six):
    since = six.search("requirements", k=50, filters={"start": date(2024, 6, 1)})
    assert {h.document_key for h in since} == {"dora", "compto-aml-policy"}
    standards = six.search("lease term", k=10, filters={"document_type": "standard"})
    assert standards.hits and {h.document_key for h in standards} == {"ifrs-16-leases"}


def test_low_authority_fires_on_a_companys_policy(six):
    from lexkb.answers.evidence import EvidenceSettings, evidence

    strict = EvidenceSettings(min_authority=0.6)
    question = "Who is the AML Compliance Officer and what are their duties?"
    judged = evidence(six, question, filters={"document": "compto-aml-policy"}, settings=strict)
    assert (judged.mode, judged.reason) == ("ABSTAIN", "low_authority")
    act = {"document": "bribery-act-2010"}
    question = "When is a commercial organisation guilty of failing to prevent bribery?"
    law = evidence(six, question, filters=act, settings=strict)
    assert law.reason != "low_authority" and law.authority == 1.0


def test_the_build_says_what_a_catalog_would_add(realdocs_built):
    _, report = realdocs_built
    assert report["catalog_would_add"] == {
        "dates": ["nda", "usc17"],
        "source_url": sorted(CITED),
    }


@pytest.mark.build
def test_a_catalog_keyed_by_the_file_name_overrides_what_the_document_states(tmp_path):
    import shutil

    from lexkb import Index
    from pipelines.in_process import run_build
    from tests.conftest import shared_file

    folder = tmp_path / "sources"
    folder.mkdir()
    shutil.copy(shared_file("realdocs", "asset_00100_ukpga_20100023_en.pdf"), folder)
    (folder / "catalog.yaml").write_text(
        "documents:\n"
        "  asset_00100_ukpga_20100023_en:\n"
        "    short_name: BA\n"
        "    document_type: statute\n"
        "    authority_level: secondary\n"
        "    published: 2010-07-01\n"
        "    refers_to: [asset_00100_ukpga_20100023_en]\n"
        "aliases:\n"
        "  the Bribery Statute: asset_00100_ukpga_20100023_en\n",
        encoding="utf-8",
    )
    run_build([folder], tmp_path / "root", embedder="none")
    index = Index.open(tmp_path / "root")
    (document,) = index.documents()
    assert document["document_key"] == "ba"  # the catalog's short name, made a key
    stated = (document["document_type"], document["authority_level"], document["published"])
    assert stated == ("statute", "secondary", "2010-07-01")
    assert document["refers_to"] == ["ba"]
    # The catalog's alias, written for the file-name key, names the document; a statute's
    # units have no kind lexkb knows, so they are cited as printed.
    assert index.get("the Bribery Statute 7(1)").hit.citation == "BA, 7(1)"
