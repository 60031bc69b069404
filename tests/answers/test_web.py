"""web_search's real HTTP client against a stand-in for the Brave Search API on 127.0.0.1."""

from __future__ import annotations

import urllib.parse

import pytest

from lexkb.answers.external.web import web_search
from lexkb.limits import QueryError
from tests.support.http_fake import JSONHandler, LocalServer

KEY = "brave-test-key"
RESULTS = {
    "client money": [
        {"title": "Blog: money tips", "url": "https://blog.example.com/tips",
         "description": "Ten tips..."},
        {"title": "<strong>Client money</strong> rules", "url": "https://www.fsra.example/cass",
         "description": "The <strong>client money</strong> rules require a firm to reconcile "
                        "client money daily and keep records for six years."},
        {"title": "Not a link", "url": "javascript:alert(1)", "description": "client money"},
    ],
}  # fmt: skip


class FakeBrave:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict, str | None]] = []
        self.fail_with: int | None = None
        outer = self

        class Handler(JSONHandler):
            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(url.query))
                outer.requests.append((url.path, query, self.headers.get("X-Subscription-Token")))
                if self.headers.get("X-Subscription-Token") != KEY:
                    return self._send(401, {"error": "bad key"})
                if outer.fail_with:
                    return self._send(outer.fail_with, {"error": "down"})
                found = RESULTS.get(query["q"], [])[: int(query["count"])]
                self._send(200, {"type": "search", "web": {"results": found}})

        self._server = LocalServer(Handler)
        self.url = f"{self._server.root}/res/v1/web/search"

    def close(self) -> None:
        self._server.close()


@pytest.fixture()
def brave(monkeypatch):
    server = FakeBrave()
    monkeypatch.setenv("BRAVE_API_KEY", KEY)
    monkeypatch.setenv("BRAVE_SEARCH_URL", server.url)
    yield server
    server.close()


def test_results_are_ranked_cleaned_and_safe(brave):
    found = web_search(["client money"], max_results_per_query=5)
    assert [r.domain for r in found.results] == ["www.fsra.example", "blog.example.com"]
    best = found.results[0]
    assert best.title == "Client money rules" and "<strong>" not in best.snippet
    assert best.score > found.results[1].score
    path, query, token = brave.requests[0]
    assert path == "/res/v1/web/search" and query == {"q": "client money", "count": "5"}
    assert token == KEY


def test_preferred_domains_rise(brave):
    found = web_search(["client money"], preferred_domains=["blog.example.com"])
    plain = web_search(["client money"])
    boosted = {r.domain: r.score for r in found.results}
    base = {r.domain: r.score for r in plain.results}
    assert boosted["blog.example.com"] > base["blog.example.com"]
    assert boosted["www.fsra.example"] == base["www.fsra.example"]


def test_a_failed_query_is_a_warning_not_an_error(brave):
    brave.fail_with = 503
    found = web_search(["client money", "other"])
    assert found.results == [] and len(found.warnings) == 2 and "503" in found.warnings[0]


def test_no_key_no_request(brave, monkeypatch):
    monkeypatch.delenv("BRAVE_API_KEY")
    found = web_search(["client money"])
    assert found.results == [] and "BRAVE_API_KEY" in found.warnings[0]
    assert brave.requests == []


def test_bounds_and_endpoint(brave, monkeypatch):
    with pytest.raises(QueryError, match="from 1 to 20"):
        web_search(["client money"], max_results_per_query=50)
    with pytest.raises(QueryError):
        web_search([f"q{i}" for i in range(11)])
    monkeypatch.setenv("BRAVE_SEARCH_URL", "http://evil.example/search")
    with pytest.raises(QueryError, match="https"):
        web_search(["client money"])
