"""The page of `lexkb serve` as a person uses it, in headless Chromium (Debian's `chromium`,
driven by Playwright; skipped where it is not installed): search with a filter, follow a
citation, ask and continue, give feedback, check a claim, snapshots, the admin page (each
ask's text searched and its candidates with their scores), a listing longer than a page; on a
desk screen and a phone's, by keyboard, and without layout shifts.

Screenshots go to the test's folder, or to $LEXKB_SCREENSHOTS when set (docs/screenshots is
made that way); Chromium and the page come from tests/service/conftest.py."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from lexkb.defaults import PAGE
from lexkb_service.client import Client
from tests.service.conftest import CHROMIUM
from tests.support.serve_process import Served, call, start

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
QUESTION = "How long must client money reconciliation records be kept?"
TRACED = "How often must client money be reconciled?"  # asked once: searched, not cached
# Layout shifts summed as Chromium reports them (the Cumulative Layout Shift of web vitals).
WATCH_SHIFTS = """
window.__shift = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    if (entry.hadRecentInput) continue;
    window.__shift += entry.value;
    window.__shifted = (window.__shifted || []).concat((entry.sources || []).map((s) => s.node && s.node.id || s.node && s.node.className));
  }
}).observe({type: "layout-shift", buffered: true});
"""


@pytest.fixture(scope="module")
def served(built_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    server = start(built_root, tmp_path_factory.mktemp("ui") / "serve.db")
    yield server
    server.stop()


def test_search_with_a_filter_then_follow_a_citation(served, page, shots):
    page.goto(served.url + "/")
    page.evaluate(WATCH_SHIFTS)
    page.wait_for_selector("body[data-ready]")
    # By keyboard: the search box takes focus and Enter submits.
    page.focus("#search-q")
    page.keyboard.type("client money reconciliation records")
    page.select_option("#f-document", "records-retention-act")
    page.focus("#search-q")
    page.keyboard.press("Enter")
    page.wait_for_selector("#search-results li")
    citations = page.locator("#search-results a.cite").all_text_contents()
    assert citations and all(c.startswith("Records Retention Act") for c in citations)
    assert "seven years" in page.locator("#search-results").inner_text()
    page.screenshot(path=str(shots / "search.png"))

    page.locator("#search-results a.cite", has_text="§ 103(b)").first.click()
    page.wait_for_selector("#paragraph h3")
    assert page.inner_text("#paragraph h3") == "Records Retention Act, § 103(b)"
    assert "§ 103 Retention periods" in page.inner_text("#doc-tree")
    assert "Copy citation" in page.inner_text("#paragraph")
    page.screenshot(path=str(shots / "document.png"))
    # What it cites is one click away.
    page.locator("#paragraph a", has_text="4.4.1").first.click()
    page.wait_for_selector("#paragraph h3:has-text('4.4.1')")
    assert "six years" in page.inner_text("#paragraph")
    assert page.evaluate("window.__shift") < 0.1, page.evaluate("window.__shifted")
    assert page.errors == []


def test_ask_continue_and_give_feedback(served, page, shots):
    page.goto(served.url + "/#ask")
    page.wait_for_selector("body[data-ready]")
    page.fill("#ask-q", QUESTION)
    page.press("#ask-q", "Enter")
    page.wait_for_selector(".turn .badge")
    turn = page.locator(".turn").first
    assert turn.locator(".badge").first.inner_text() in ("DIRECT", "QUALIFIED")
    assert "seven years" in turn.inner_text()
    assert "Records Retention Act, § 103(b)" in turn.locator(".sources").inner_text()
    turn.locator("summary", has_text="Verification").click()
    assert "supported" in turn.locator(".verify").inner_text()

    turn.locator(".feedback input").fill("cites the Act")
    turn.locator(".feedback button", has_text="Not helpful").click()
    page.wait_for_selector(".feedback [role=status]:has-text('saved')")
    stored = call(served, "GET", "/api/v1/admin/feedback").body["items"]
    assert stored[0]["rating"] == "negative" and stored[0]["comment"] == "cites the Act"

    page.fill("#ask-q", "what is the weather in Paris tomorrow?")
    page.press("#ask-q", "Enter")
    page.wait_for_selector(".turn:nth-of-type(2) .badge")
    second = page.locator(".turn").nth(1)
    assert second.locator(".badge").first.inner_text() == "ABSTAIN"
    assert "No answer:" in second.inner_text()
    page.screenshot(path=str(shots / "ask.png"), full_page=True)

    # The answer's [1] opens the paragraph it cites.
    turn.locator(".answer a").first.click()
    page.wait_for_selector("#paragraph h3")
    assert page.inner_text("#paragraph h3") == "Records Retention Act, § 103(b)"
    conversations = call(served, "GET", "/api/v1/conversations").body["items"]
    assert conversations[0]["turn_count"] == 2
    assert page.errors == []


def test_check_a_claim_shows_the_verdict_and_its_sentence(served, page, shots):
    page.goto(served.url + "/#check")
    page.wait_for_selector("body[data-ready]")
    page.fill("#check-claim", "Client money reconciliation records must be kept for two years.")
    page.fill("#check-ref", "§ 103(b)")
    page.click("#check-form button")
    page.wait_for_selector("#check-result .badge")
    assert page.inner_text("#check-result .badge") == "contradicted"
    assert "seven years" in page.inner_text("#check-result blockquote")
    page.screenshot(path=str(shots / "check.png"))
    assert page.errors == []


def test_snapshots_and_admin(served, page, shots):
    call(served, "POST", "/api/v1/ask", {"question": TRACED})
    page.goto(served.url + "/#snapshots")
    page.wait_for_selector("#snapshot-rows tr")
    assert "served" in page.inner_text("#snapshot-rows")
    page.click("#diff-form button")
    page.wait_for_selector("#diff-result li")
    assert "chunks added: 0" in page.inner_text("#diff-result")
    page.screenshot(path=str(shots / "snapshots.png"))
    page.click("a[data-tab=admin]")
    page.wait_for_selector("#traces details")
    assert QUESTION in page.inner_text("#traces")
    # The newest ask's trace: the text it searched, and each candidate with its scores.
    trace = page.locator("#traces details").first
    trace.locator("summary").click()
    assert trace.locator(".searched").inner_text() == TRACED
    candidates = trace.locator(".candidates tbody tr")
    assert candidates.count() > 0
    citation, score, relevance, _ = candidates.first.locator("td").all_inner_texts()
    assert citation and re.fullmatch(r"-?[\d.]+(e[-+]\d+)?", score), score
    assert re.fullmatch(r"\d\.\d\d|—", relevance), relevance
    page.screenshot(path=str(shots / "admin.png"))
    assert page.errors == []


def test_readable_on_a_phone(served, browser, shots):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    try:
        page.goto(served.url + "/#search")
        page.wait_for_selector("body[data-ready]")
        page.fill("#search-q", "records")
        page.press("#search-q", "Enter")
        page.wait_for_selector("#search-results li")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.goto(served.url + "/#documents/records-retention-act")
        page.wait_for_selector("#doc-tree a")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.screenshot(path=str(shots / "phone.png"), full_page=True)
    finally:
        context.close()


# Document records as the listing gives them, and the example question the ask box shows.
APOLLOS = {
    "document_key": "apollos-msa", "number": "apollos-msa", "document_type": "contract",
    "title": "Master Services Agreement — The Apollos Project", "short_name": None,
    "aliases": [], "tags": [],
}  # fmt: skip
DHR = {
    "document_key": "data-handling-regulation", "number": "data-handling-regulation",
    "document_type": "regulation", "title": "Data Handling Regulation", "short_name": "DHR",
    "aliases": ["Regulation 1/2026"], "tags": ["data protection", "records"],
}  # fmt: skip
DORA = {
    "document_key": "dora", "number": "dora", "document_type": "regulation",
    "title": "Regulation (EU) 2022/2554 of the European Parliament and of the Council on "
    "digital operational resilience for the financial sector", "short_name": "DORA",
    "aliases": [], "tags": ["ICT risk"],
}  # fmt: skip
KEYED = {
    "document_key": "CELEX_32022R2554_EN_TXT", "number": "CELEX_32022R2554_EN_TXT",
    "document_type": None, "title": "CELEX_32022R2554_EN_TXT", "short_name": None,
    "aliases": [], "tags": ["ICT risk"],
}  # fmt: skip
NEUTRAL = "Ask a question about the documents served"
EXAMPLES = [
    ([APOLLOS], "e.g. What does the Master Services Agreement say about termination?"),
    ([DHR], "e.g. What does the Data Handling Regulation say about data protection?"),
    ([DORA], "e.g. What does DORA say about ICT risk?"),
    ([KEYED, APOLLOS], "e.g. What does the Master Services Agreement say about termination?"),
    ([APOLLOS, DHR], "e.g. What does the Data Handling Regulation say about data protection?"),
    ([KEYED], NEUTRAL),
    ([], NEUTRAL),
]


def test_the_ask_box_suggests_a_question_a_person_would_ask(served, page):
    # Before: "What does apollos-msa say about Master Services Agreement — The Apollos Project?"
    page.goto(served.url + "/#ask")
    page.wait_for_selector("body[data-ready]")
    for documents, expected in EXAMPLES:
        said = page.evaluate("(documents) => askExample(documents)", documents)
        assert said == expected, documents
    shown = page.get_attribute("#ask-q", "placeholder")
    keys = [d["document_key"] for d in call(served, "GET", "/api/v1/documents").body["items"]]
    assert shown.startswith("e.g. What does the ") and shown.endswith("?"), shown
    assert "—" not in shown and not any(key in shown for key in keys), shown
    assert page.errors == []


# Each header cell's words, and how many lines each is drawn on (more than one: split inside).
SPLIT_WORDS = """
() => [...document.querySelectorAll("#view-admin th")].filter((th) => th.getClientRects().length)
  .flatMap((th) => {
    const text = th.firstChild, found = [];
    for (const word of text.data.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(text, word.index);
      range.setEnd(text, word.index + word[0].length);
      const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
      if (lines.size > 1) found.push(word[0]);
    }
    return found;
  })
"""


def test_the_admin_tables_keep_their_headers_whole_on_a_phone(served, browser):
    # Before: "Confidence" and "Relevance" broke mid-word at 390 px.
    api = Client(served.url)
    turn = api.ask("Which records of client money reconciliations must a firm keep?")  # not cached
    api.give_feedback(turn["answer_id"], "positive", "a comment long enough to need the room")
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    try:
        page.goto(served.url + "/#admin")
        page.wait_for_selector("#feedback-rows tr")
        page.wait_for_selector("#traces details")
        page.locator("#traces details summary").first.click()
        page.wait_for_selector("#traces details[open] .candidates th")
        headers = page.locator("#view-admin th:visible").all_inner_texts()
        assert {"Confidence", "Sources", "Candidate", "Relevance"} <= set(headers), headers
        assert page.evaluate(SPLIT_WORDS) == []
        # The page does not scroll sideways: a table wider than the screen scrolls in its box.
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        context.close()


def test_the_page_asks_for_a_key_when_the_service_needs_one(built_root, tmp_path, page):
    from tests.support.serve_process import add_key

    store = tmp_path / "keys.db"
    key = add_key(store, "erin")
    server = start(built_root, store, "--require-keys")
    try:
        page.goto(server.url + "/")
        page.wait_for_selector("#key-form:not([hidden])")
        page.fill("#key-input", key)
        page.press("#key-input", "Enter")
        page.wait_for_selector("#served:has-text('erin')")
        assert page.is_hidden("#key-form")
    finally:
        server.stop()


def test_a_listing_longer_than_a_page_has_more(served, page):
    api = Client(served.url)
    for n in range(PAGE + 1):
        api.create_conversation(f"listed {n}")
    total = len(list(api.every(api.list_conversations)))
    assert PAGE < total <= 2 * PAGE
    page.goto(served.url + "/#ask")
    page.wait_for_selector("body[data-ready]")
    page.click("summary:has-text('My conversations')")
    page.wait_for_function(
        f"() => document.querySelectorAll('#conversations li').length === {PAGE}"
    )
    page.click("#conversations-more")
    page.wait_for_function(
        f"() => document.querySelectorAll('#conversations li').length === {total}"
    )
    assert page.is_hidden("#conversations-more")
    assert page.errors == []
