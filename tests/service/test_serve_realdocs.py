"""`lexkb serve` on real documents, over real HTTP: the six documents of ../shared/data/realdocs
built together (citations by short name, readable keys and file-name keys, an ambiguous
reference with its candidates, in the API, a claim check and the page; types and dates for the
filters), and the NDA built with the local model, whose governing-law clause the clause-type
filter finds. Skips without the reference data; the page's test without Chromium."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from urllib.parse import quote

import pytest

from tests.conftest import shared_file
from tests.service.conftest import CHROMIUM
from tests.service.test_serve_api import conforms
from tests.support.mcp_process import LEXKB, environment
from tests.support.serve_process import Served, call, start

CANDIDATES = {"Bribery Act 2010, section 7", "AML Policy, section 7"}
CLAIM = "A commercial organisation is guilty of failing to prevent bribery."


@pytest.fixture(scope="module")
def served(realdocs_built, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = start(realdocs_built[0], tmp_path_factory.mktemp("realdocs") / "serve.db")
    yield server
    server.stop()


def get(served: Served, reference: str):
    return call(served, "GET", f"/api/v1/get?reference={quote(reference)}")


def test_a_reference_that_fits_several_documents_is_ambiguous(served):
    spec = call(served, "GET", "/api/v1/openapi.json").body
    found = get(served, "section 7")
    assert found.status == 404
    conforms(spec, "get", "/api/v1/get", found)
    body = found.body
    assert (body["match"], body["found"], body["hit"]) == ("ambiguous", False, None)
    assert {h["citation"] for h in body["alternatives"]} == CANDIDATES
    # Each candidate is a link the page can open, and its citation finds it again.
    for candidate in body["alternatives"]:
        again = get(served, candidate["citation"]).body
        assert (again["match"], again["hit"]["chunk_id"]) == ("exact", candidate["chunk_id"])


def test_get_and_hop_answer_an_ambiguous_reference_alike(served):
    # Before: 404 from `get` and 400 from `hop` (its reason a sentence, no candidates).
    spec = call(served, "GET", "/api/v1/openapi.json").body
    found = get(served, "section 7")
    hopped = call(served, "POST", "/api/v1/hop", {"start": "section 7"})
    assert (found.status, hopped.status) == (404, 404)
    conforms(spec, "post", "/api/v1/hop", hopped)
    assert hopped.body == found.body
    assert (hopped.body["match"], hopped.body["error"]) == ("ambiguous", found.body["reason"])
    assert {h["citation"] for h in hopped.body["alternatives"]} == CANDIDATES
    # A candidate named is a start to walk from.
    walked = call(served, "POST", "/api/v1/hop", {"start": "Bribery Act 2010, section 7"})
    assert walked.status == 200 and walked.body["start"] == "Bribery Act 2010, section 7"


def test_a_reference_is_kept_to_the_document_it_names(served):
    exact = get(served, "nda Section 4.2").body
    assert exact["match"] == "exact" and exact["hit"]["citation"] == "NDA, clause 4.2"
    assert exact["hit"]["cited_ref"] == "clause 4.2" and exact["hit"]["ref"] == "Section 4.2"
    dora = get(served, "CELEX_32022R2554_EN_TXT Article 19(4)").body  # the file-name key
    assert dora["hit"]["citation"] == "DORA, Article 19(4)"
    assert dora["hit"]["document_key"] == "dora"
    assert all(len(h["citation"]) < 40 for h in dora["cited_by"] + dora["cites"])


def test_a_claim_check_names_each_candidate_of_an_ambiguous_reference(served):
    checked = call(
        served,
        "POST",
        "/api/v1/verify/citations",
        {"citations": [{"ref": "section 7", "claim": CLAIM}]},
    ).body["citations"][0]
    assert (checked["verdict"], checked["lookup_match"]) == ("ambiguous", "ambiguous")
    assert set(checked["closest"]) == CANDIDATES


def test_documents_by_readable_and_file_name_keys(served):
    listed = call(served, "GET", "/api/v1/documents").body["items"]
    types = {d["document_key"]: d["document_type"] for d in listed}
    assert types == {
        "dora": "regulation",
        "bribery-act-2010": "act",
        "ifrs-16-leases": "standard",
        "usc17": "code",
        "nda": "contract",
        "compto-aml-policy": "policy",
    }
    tree = call(served, "GET", "/api/v1/documents/asset_00100_ukpga_20100023_en/tree").body
    assert tree["document"]["document_key"] == "bribery-act-2010"
    labels = [p["label"] for s in tree["sections"] for p in _paragraphs(s)]
    assert "section 7(1)" in labels
    front = call(served, "GET", "/api/v1/documents/dora/tree").body["paragraphs"]
    # A paragraph placed only by its position ("p. 1 ¶ 8") has no label: its words name it.
    assert front and all(p["label"] is None for p in front if p["ref"].startswith("p. "))


def _paragraphs(section: dict) -> list[dict]:
    return section["paragraphs"] + [p for s in section["sections"] for p in _paragraphs(s)]


def test_search_filters_on_dates_and_types_read_from_the_documents(served):
    since = call(
        served, "POST", "/api/v1/search", {"query": "requirements", "limit": 50,
                                        "filters": {"date_range": {"start": "2024-06-01"}}},
    ).body  # fmt: skip
    assert {h["document_key"] for h in since["hits"]} == {"dora", "compto-aml-policy"}
    acts = call(
        served, "POST", "/api/v1/search", {"query": "bribery", "filters": {"document_type": "act"}}
    ).body
    assert acts["hits"] and {h["document_key"] for h in acts["hits"]} == {"bribery-act-2010"}


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_the_page_lets_the_person_pick_a_candidate(served, page):
    page.goto(served.url + "/#check")
    page.fill("#check-claim", CLAIM)
    page.fill("#check-ref", "section 7")
    page.click("#check-form button")
    page.wait_for_selector("#check-result button")
    offered = {b.inner_text() for b in page.locator("#check-result button").all()}
    assert offered == CANDIDATES
    page.locator("#check-result button", has_text="Bribery Act 2010").click()
    page.locator("#check-result p", has_text="reference matched exact").wait_for()
    assert page.input_value("#check-ref") == "Bribery Act 2010, section 7"
    assert "Cited paragraph: Bribery Act 2010, section 7" in page.inner_text("#check-result")
    assert not page.crashes


@pytest.fixture(scope="module")
def contract(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The NDA alone, built with the local model (its clause labels need its vectors)."""
    folder = tmp_path_factory.mktemp("nda")
    root = folder / "root"
    nda = str(shared_file("realdocs", "nda.pdf"))
    subprocess.run(
        [LEXKB, "build", nda, "--out", str(root), "--embedder", "local", "--quiet"],
        check=True,
        capture_output=True,
        env=environment(),
    )
    server = start(root, folder / "serve.db")
    yield server
    server.stop()


def test_the_clause_type_filter_finds_a_contracts_governing_law(contract: Served):
    # The page's own example: "construed in accordance with the Laws of Greece ... jurisdiction
    # ... Athens", a clause that never says "governing".
    found = call(
        contract, "POST", "/api/v1/search",
        {"query": "applicable law", "limit": 10, "filters": {"clause_type": "governing law"}},
    ).body  # fmt: skip
    assert [h["citation"] for h in found["hits"]] == ["NDA, clause 4.10"]
    assert "Laws of Greece" in found["hits"][0]["text"]
