"""The page of `lexkb serve` past its first version, in headless Chromium against real servers:
the viewer opens a link at its passage (the tree scrolled to it, the quoted words marked, its
neighbours and enclosing unit one click away, a PDF's printed page); a link the served snapshot
no longer matches says so and offers the unit by its reference; no tab scrolls sideways on a
phone; answers keep their lists' lines, suggest one-line questions and show a cited passage on
hover; search has modes, authority and party filters, more results and marked terms, and an
unknown section says so; ask takes a document filter; placeholders come from the index served;
a reload keeps the conversation.

A second index, `later`, is built from other files: the sample Act with § 103(b) reworded (the
later snapshot a bookmark meets), the Data Handling Regulation, and a real contract from CUAD
(read in place from the reference data; its part is skipped when that is absent)."""

from __future__ import annotations

import re
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.conftest import CORPUS, SHARED
from tests.service.conftest import CHROMIUM
from tests.support.serve_process import Served, call, start

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
PDF = "lsa-230-audit-documentation"
LIST_QUESTION = "What additional purposes does audit documentation serve?"
CONTRACT = (
    SHARED / "cuad" / "txt" / "GRIDIRONBIONUTRIENTS,INC_02_05_2020-EX-10.3-SUPPLY AGREEMENT.txt"
)
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}


@pytest.fixture(scope="module")
def served(built_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = start(built_root, tmp_path_factory.mktemp("viewer") / "serve.db")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def later(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    from pipelines.in_process import run_build

    folder = tmp_path_factory.mktemp("later")
    corpus = folder / "corpus"
    corpus.mkdir()
    for name in ("catalog.yaml", "data-handling-regulation.md"):
        shutil.copy(CORPUS / name, corpus / name)
    act = (CORPUS / "records-retention-act.txt").read_text(encoding="utf-8")
    assert "not less than seven years" in act
    reworded = act.replace("not less than seven years", "not less than ten years")
    (corpus / "records-retention-act.txt").write_text(reworded, encoding="utf-8")
    sources = [corpus, *([CONTRACT] if CONTRACT.exists() else [])]
    run_build(sources, folder / "index", embedder="none")
    server = start(folder / "index", folder / "serve.db")
    yield server
    server.stop()


def ready(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("body[data-ready]")


def result_links(page) -> list[str]:
    """The search results' links, as the address bar would show them."""
    return page.eval_on_selector_all(
        "#search-results a.cite", "(links) => links.map((a) => a.hash)"
    )


def paragraphs(node: dict) -> Iterator[dict]:
    yield from node.get("paragraphs", [])
    for section in node.get("sections", []):
        yield from paragraphs(section)


# ---- 5: the viewer -------------------------------------------------------------------------


def test_a_link_opens_the_tree_at_its_unit_with_neighbours_and_the_unit_around(served, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 600})
    page = context.new_page()
    try:
        tree = call(served, "GET", f"/api/v1/documents/{PDF}/tree").body
        last = list(paragraphs(tree))[-1]["chunk_id"]
        found = call(served, "GET", f"/api/v1/get?reference={last}").body
        ready(page, f"{served.url}/#documents/{PDF}/{last}")
        page.wait_for_selector("#doc-tree a[aria-current]")
        top, bottom, pane_top, pane_bottom, scrolled, height, shown = page.evaluate(
            """() => { const t = document.getElementById('doc-tree');
            const a = t.querySelector('a[aria-current]').getBoundingClientRect();
            const b = t.getBoundingClientRect();
            return [a.top, a.bottom, b.top, b.bottom, t.scrollTop, t.scrollHeight, t.clientHeight]; }"""
        )
        assert height > shown, "the tree fits its pane: nothing to scroll to"
        assert scrolled > 0 and pane_top <= top and bottom <= pane_bottom
        assert page.inner_text("#paragraph h3") == found["hit"]["citation"]

        page.click(".neighbours a[rel=prev]")
        page.wait_for_selector(f"#paragraph h3:text-is('{found['previous']['citation']}')")
        page.click(".neighbours a[rel=next]")
        page.wait_for_selector(f"#paragraph h3:text-is('{found['hit']['citation']}')")
        page.click(".neighbours a:has-text('↑')")
        page.wait_for_selector(f"#paragraph h3:text-is('{found['section']['citation']}')")
        assert found["hit"]["text"] in page.inner_text("#paragraph .text")
    finally:
        context.close()


def test_a_checked_claim_opens_at_the_sentence_it_rests_on(served, page):
    claim = "Client money reconciliation records must be kept for two years."
    verdict = call(
        served,
        "POST",
        "/api/v1/verify/citations",
        {"citations": [{"claim": claim, "ref": "§ 103(b)"}]},
    ).body["citations"][0]
    ready(page, served.url + "/#check")
    page.fill("#check-claim", claim)
    page.fill("#check-ref", "§ 103(b)")
    page.click("#check-form button")
    page.click("#check-result a:has-text('open it at this sentence')")
    page.wait_for_selector("#paragraph mark")
    text = page.inner_text("#paragraph .text")
    marked = page.inner_text("#paragraph mark")
    assert marked == verdict["best_sentence"]
    assert text.index(marked) == verdict["sentence_start"] and "seven years" in marked
    assert page.errors == []


def test_a_pdf_unit_shows_its_page_as_printed(served, page, shots):
    three = call(served, "GET", f"/api/v1/get?reference={quote('LSA 230, para. 3')}").body["hit"]
    # As an answer's [1] links it, with the words the answer quoted.
    words = quote("Audit documentation serves a number of additional purposes")
    ready(page, f"{served.url}/#documents/{PDF}/{three['chunk_id']}?quote={words}")
    assert page.inner_text("#paragraph mark").startswith("Audit documentation serves")
    page.click("#paragraph summary:has-text('Page 1 as printed')")
    page.wait_for_function("() => document.querySelector('.source-page img')?.naturalWidth > 500")
    assert page.get_attribute(".source-page img", "src").startswith("data:image/png;base64,")
    page.screenshot(path=str(shots / "viewer.png"))
    # The next unit opens at its page too, once the reader opened one.
    page.click(".neighbours a[rel=next]")
    page.wait_for_function("() => document.querySelector('.source-page img')?.naturalWidth > 500")
    assert page.errors == []  # a CSP refusal of the image would be reported here

    route = f"{served.url}/api/v1/documents/{PDF}/pages/1"
    with urllib.request.urlopen(route) as image:
        assert image.headers["content-type"] == "image/png"
        assert image.read(8) == b"\x89PNG\r\n\x1a\n"
        assert "max-age" in image.headers["cache-control"]
        tag = image.headers["etag"]
    again = urllib.request.Request(route, headers={"If-None-Match": tag})
    with pytest.raises(urllib.error.HTTPError) as unchanged:
        urllib.request.urlopen(again)
    assert unchanged.value.code == 304
    assert call(served, "GET", f"/api/v1/documents/{PDF}/pages/3").status == 404
    assert call(served, "GET", "/api/v1/documents/records-retention-act/pages/1").status == 404
    assert call(served, "GET", f"/api/v1/documents/{PDF}/pages/0").status == 422
    policy = call(served, "GET", "/").headers["content-security-policy"]
    assert "img-src 'self' data:;" in policy and "unsafe" not in policy and "blob:" not in policy
    spec = call(served, "GET", "/api/v1/openapi.json").body
    described = spec["paths"]["/api/v1/documents/{document}/pages/{page}"]["get"]["responses"]
    assert "image/png" in described["200"]["content"]


def test_choosing_another_document_leaves_no_paragraph_of_the_last(served, page):
    ready(page, served.url + "/#search")
    page.fill("#search-q", "client money reconciliation records")
    page.press("#search-q", "Enter")
    page.locator("#search-results a.cite", has_text="§ 103(b)").first.click()
    page.wait_for_selector("#paragraph h3:has-text('§ 103(b)')")
    page.select_option("#doc-select", PDF)
    page.wait_for_selector("#paragraph h3:text-is('LSA 230 Audit Documentation')")
    assert "seven years" not in page.inner_text("#paragraph")
    assert page.errors == []


def test_on_a_phone_a_tapped_result_opens_at_its_paragraph(served, browser, shots):
    context = browser.new_context(**PHONE)
    page = context.new_page()
    try:
        ready(page, served.url + "/#search")
        page.fill("#search-q", "client money reconciliation records")
        page.press("#search-q", "Enter")
        page.locator("#search-results a.cite", has_text="§ 103(b)").first.tap()
        page.wait_for_selector("#paragraph h3:has-text('§ 103(b)')")
        place = page.evaluate(
            """() => [document.getElementById('paragraph').getBoundingClientRect().top,
            document.getElementById('doc-tree').getBoundingClientRect().top, innerHeight]"""
        )
        paragraph_top, tree_top, height = place
        assert 0 <= paragraph_top < height / 2 and paragraph_top < tree_top
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.screenshot(path=str(shots / "viewer-phone.png"))
    finally:
        context.close()


# ---- 6: links the served snapshot no longer matches ----------------------------------------


def test_a_stale_link_says_so_and_offers_the_unit_by_its_reference(served, page, shots):
    ready(page, served.url + "/#documents/usc17/chk-doesnotexist")
    page.wait_for_selector("#paragraph .notice")
    page.wait_for_selector("#doc-tree .error")
    assert "does not hold" in page.inner_text("#paragraph .notice")
    assert "no document called 'usc17'" in page.inner_text("#doc-tree")
    assert page.crashes == []

    reference = quote("Records Retention Act, § 103(b)")
    page.goto(f"{served.url}/#documents/records-retention-act/chk-doesnotexist?ref={reference}")
    page.wait_for_selector("#paragraph a:has-text('open Records Retention Act, § 103(b)')")
    page.screenshot(path=str(shots / "viewer-stale.png"))
    page.click("#paragraph a:has-text('open Records Retention Act')")
    page.wait_for_selector("#paragraph h3:text-is('Records Retention Act, § 103(b)')")
    assert page.locator("#paragraph .notice").count() == 0
    assert page.crashes == []


def test_a_link_to_text_reworded_in_a_later_snapshot_says_so(served, later, page):
    ready(page, served.url + "/#search")
    page.fill("#search-q", "client money reconciliation records")
    page.press("#search-q", "Enter")
    link = page.locator("#search-results a.cite", has_text="§ 103(b)").first.get_attribute("href")
    assert "hash=" in link and "ref=" in link

    ready(page, later.url + "/" + link)
    notice = page.wait_for_selector("#paragraph .notice")
    assert "has changed since this link was made" in notice.inner_text()
    assert "ten years" in page.inner_text("#paragraph .text")
    page.click("#paragraph .notice a")
    page.wait_for_selector("#paragraph h3:text-is('Records Retention Act, § 103(b)')")
    page.wait_for_function("() => !document.querySelector('#paragraph .notice')")
    assert page.crashes == []


# ---- 7: a phone's width --------------------------------------------------------------------


def test_no_tab_scrolls_sideways_on_a_phone(served, browser):
    turn = call(served, "POST", "/api/v1/ask", {"question": LIST_QUESTION}).body
    call(served, "POST", "/api/v1/feedback", {"answer_id": turn["answer_id"], "rating": "positive"})
    three = call(served, "GET", f"/api/v1/get?reference={quote('LSA 230, para. 3')}").body["hit"]
    context = browser.new_context(**PHONE)
    page = context.new_page()
    try:
        for where, shown in [
            ("#snapshots", "#snapshot-rows tr"),
            ("#admin", "#feedback-rows tr"),
            (f"#documents/{PDF}/{three['chunk_id']}", "#paragraph h3"),
            ("#check", "#check-form"),
        ]:
            ready(page, f"{served.url}/{where}")
            page.wait_for_selector(shown)
            assert page.evaluate("[document.documentElement.scrollWidth, innerWidth]") == [
                390,
                390,
            ], where
    finally:
        context.close()


# ---- 8: answers, search, ask ---------------------------------------------------------------


def test_an_answer_keeps_its_list_lines_shows_a_cited_passage_and_survives_a_reload(served, page):
    ready(page, served.url + "/#ask")
    page.fill("#ask-q", LIST_QUESTION)
    page.press("#ask-q", "Enter")
    page.wait_for_selector(".turn .answer a")
    lines = page.evaluate(
        """() => { const p = document.querySelector('.turn .answer');
        const node = [...p.childNodes].find((n) => n.nodeType === 3 && n.data.includes('(b)'));
        const top = (label) => { const r = document.createRange(); const at = node.data.indexOf(label);
          r.setStart(node, at); r.setEnd(node, at + 3); return r.getBoundingClientRect().top; };
        return [top('(a)'), top('(b)'), top('(c)')]; }"""
    )
    assert lines[0] < lines[1] < lines[2], "the lettered points run together on one line"

    page.hover(".turn .answer a")
    peek = page.wait_for_selector(".peek:not([hidden]) mark")
    assert "Audit documentation serves" in peek.inner_text()
    assert "LSA 230" in page.inner_text(".peek:not([hidden]) strong")

    conversation = page.evaluate("location.hash")
    assert re.fullmatch(r"#ask/[\w-]+", conversation)
    page.reload()
    page.wait_for_selector(".turn .answer")
    assert page.locator(".turn").count() == 1 and LIST_QUESTION in page.inner_text(".turn")
    assert page.errors == []


def test_suggestions_are_one_left_aligned_line_each(served, page):
    ready(page, served.url + "/#ask")
    page.fill("#ask-q", "what is the weather in Paris tomorrow?")
    page.press("#ask-q", "Enter")
    page.wait_for_selector(".suggestions button")
    shapes = page.evaluate(
        """() => [...document.querySelectorAll('.suggestions button')].map((b) => {
        const style = getComputedStyle(b);
        return [b.textContent, style.textAlign, b.clientHeight / parseFloat(style.lineHeight)]; })"""
    )
    assert len(shapes) == 3
    for text, align, lines in shapes:
        assert re.fullmatch(r"What does [^,?]+ say about [A-Za-z][^?]*\?", text), text
        assert align == "left" and lines < 1.9, (text, align, lines)


def test_search_modes_filters_more_results_and_marked_terms(served, page):
    spec = call(served, "GET", "/api/v1/openapi.json").body
    mode = spec["components"]["schemas"]["SearchRequest"]["properties"]["mode"]["anyOf"][0]
    ready(page, served.url + "/#search")
    options = page.eval_on_selector_all("#search-mode option", "(os) => os.map((o) => o.value)")
    assert options == ["", *mode["enum"]]

    page.fill("#search-q", "records")
    page.press("#search-q", "Enter")
    page.wait_for_selector("#search-status:has-text('10 results')")
    marks = page.locator("#search-results mark").all_text_contents()
    assert marks and all(m.lower().startswith("record") for m in marks)
    page.click("#search-more")
    page.wait_for_function("() => document.querySelectorAll('#search-results li').length > 10")

    page.select_option("#search-mode", "keyword")
    page.select_option("#f-authority", "secondary")
    page.press("#search-q", "Enter")
    page.wait_for_selector("#search-status:has-text('(keyword)')")
    found = result_links(page)
    assert found and all(h.startswith(f"#documents/{PDF}/") for h in found)

    page.fill("#f-section", "Nonexistent heading")
    page.press("#search-q", "Enter")
    page.wait_for_selector("#search-status.error")
    assert "no section is numbered or headed 'Nonexistent heading'" in page.inner_text(
        "#search-status"
    )
    assert page.crashes == []


def test_ask_takes_a_document_filter(served, page):
    sent: list[dict] = []
    page.on(
        "request",
        lambda r: sent.append(r.post_data_json) if r.url.endswith("/ask") else None,
    )
    ready(page, served.url + "/#ask")
    page.select_option("#ask-document", "records-retention-act")
    page.fill("#ask-q", "How long must records be kept?")
    page.press("#ask-q", "Enter")
    page.wait_for_selector(".turn .badge")
    assert sent[-1]["filters"] == {"document": "records-retention-act"}
    sources = page.locator(".turn .sources a").all_text_contents()
    assert sources and all(s.startswith("Records Retention Act") for s in sources)


def test_placeholders_and_parties_come_from_the_index_served(later, page):
    ready(page, later.url + "/")
    page.wait_for_function(
        "() => document.getElementById('check-ref').placeholder.startsWith('e.g.')"
    )
    shown = page.evaluate(
        "['search-q', 'ask-q', 'check-claim', 'check-ref', 'f-section']"
        ".map((id) => document.getElementById(id).placeholder)"
    )
    documents = call(later, "GET", "/api/v1/documents").body["items"]
    subjects = {t for d in documents for t in d["tags"]} | {d["title"] for d in documents}
    assert any(s in shown[0] for s in subjects), shown
    # Nothing of the sample corpus's other documents, which this index does not hold.
    assert not any(w in " ".join(shown).lower() for w in ("client money", "lsa 230", "rulebook"))
    example = shown[3].removeprefix("e.g. ")
    assert call(later, "GET", f"/api/v1/get?reference={quote(example)}").body["found"], example

    parties = sorted({p for d in documents for p in d["parties"]})
    if not parties:
        pytest.skip(f"reference data not present: {CONTRACT}")
    listed = page.eval_on_selector_all("#parties option", "(os) => os.map((o) => o.value)")
    assert listed == parties
    page.fill("#search-q", "supply products")
    page.fill("#f-party", parties[0])
    page.press("#search-q", "Enter")
    page.wait_for_selector("#search-results li")
    keys = {d["document_key"] for d in documents if parties[0] in d["parties"]}
    found = result_links(page)
    assert found and all(h.split("/")[1] in keys for h in found), found
    page.fill("#f-party", "Nobody Ltd")
    page.press("#search-q", "Enter")
    page.wait_for_selector("#search-status.error:has-text('no document names a party like')")

    # The law a contract chooses, offered and filtered on the same way.
    laws = sorted({d["governing_law"] for d in documents if d.get("governing_law")})
    listed = page.eval_on_selector_all("#laws option", "(os) => os.map((o) => o.value)")
    assert listed == laws and laws, (listed, laws)
    page.fill("#f-party", "")
    page.fill("#f-law", laws[0])
    page.press("#search-q", "Enter")
    page.wait_for_selector("#search-results li")
    keys = {d["document_key"] for d in documents if d.get("governing_law") == laws[0]}
    found = result_links(page)
    assert found and all(h.split("/")[1] in keys for h in found), found
    page.fill("#f-law", "Atlantis")
    page.press("#search-q", "Enter")
    page.wait_for_selector("#search-status.error:has-text('no contract is governed by the law')")
