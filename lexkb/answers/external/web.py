"""web_search: Brave Search results for what the index does not hold, ranked for a citation.

The only tool that leaves the machine, and only when asked: the key is read from
`BRAVE_API_KEY` in the environment at each call (never stored), and without it the tool returns
no results and a warning. The endpoint must be https, or http on this machine (a test's server on
127.0.0.0/8, localhost or ::1), judged on the parsed URL's scheme and host, never a prefix. Calls
go through `outbound`: no redirect is followed (the key goes to the endpoint and nowhere else),
`timeout` bounds the whole call, and replies are bounded in size. A failed query, whatever the
reply (an error, a redirect, the deadline, a reply that is not a JSON object of results), is one
warning; the other queries still run.
Results are ranked by the share of the query's terms in title and snippet, a bonus for
preferred domains (regulators' own sites, say), and snippet quality (long enough to quote, not
cut off). Web results are not sources of the snapshot: they carry no ref and no content hash.
"""

from __future__ import annotations

import html
import re
import urllib.parse
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from lexkb import defaults
from lexkb import limits as check
from lexkb.answers.external import outbound
from lexkb.core import environment
from lexkb.core.text.tokenize import tokenize

BRAVE_URL = "https://api.search.brave.com/res/v1/web/search"
MAX_RESPONSE_BYTES = 2_000_000
MAX_RESULTS_PER_QUERY = 20
DOMAIN_BONUS = 0.3
_TAG = re.compile(r"<[^>]{0,200}>")


@dataclass(frozen=True)
class WebResult:
    query: str
    title: str
    url: str
    domain: str
    snippet: str
    score: float


@dataclass(frozen=True)
class WebResults:
    results: list[WebResult]
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _plain(text: str) -> str:
    return " ".join(html.unescape(_TAG.sub("", text or "")).split())


def _snippet_quality(snippet: str) -> float:
    """1 for a snippet of 80-400 characters that ends a sentence; less when short or cut."""
    length = len(snippet)
    quality = min(1.0, length / 80) if length < 80 else (1.0 if length <= 400 else 0.8)
    if snippet.endswith(("...", "…")):
        quality -= 0.2
    return max(0.0, quality)


def score(query: str, title: str, snippet: str, domain: str, preferred: Sequence[str]) -> float:
    terms = set(tokenize(query))
    found = set(tokenize(f"{title} {snippet}"))
    overlap = len(terms & found) / len(terms) if terms else 0.0
    bonus = DOMAIN_BONUS if any(domain == d or domain.endswith("." + d) for d in preferred) else 0
    return round(overlap + bonus + 0.2 * _snippet_quality(snippet), 4)


def endpoint(url: str) -> outbound.Target:
    """The search endpoint, when it is https or http on this machine; else a QueryError."""
    try:
        target = outbound.Target.parse(url, "the web search endpoint")
    except outbound.OutboundError as error:
        raise check.QueryError(str(error)) from error
    if target.scheme != "https" and not target.loopback:
        raise check.QueryError(
            f"the web search endpoint must be https (or http on this machine), not "
            f"{target.scheme} on {target.host}"
        )
    return target


def _fetch(
    target: outbound.Target, query: str, count: int, key: str, seconds: float
) -> list[object]:
    """The reply's web results for `query` (an OutboundError for a failed call or a reply that
    is not a JSON object holding a list of them)."""
    base, _, given = target.path.partition("?")
    params = urllib.parse.urlencode(
        [*urllib.parse.parse_qsl(given), ("q", query), ("count", count)]
    )
    at = outbound.Target(target.scheme, target.host, target.port, f"{base}?{params}")
    headers = {"Accept": "application/json", "X-Subscription-Token": key}
    payload = outbound.request_json(
        "GET", at, headers, deadline=seconds, max_bytes=MAX_RESPONSE_BYTES
    )
    if not isinstance(payload, dict):
        raise outbound.OutboundError(f"the reply is a JSON {type(payload).__name__}, not an object")
    web = payload.get("web")
    if web is None:
        return []
    if not isinstance(web, dict):
        raise outbound.OutboundError(f"the reply's web is a {type(web).__name__}, not an object")
    results = web.get("results")
    if results is None:
        return []
    if not isinstance(results, list):
        raise outbound.OutboundError(
            f"the reply's web.results is a {type(results).__name__}, not a list"
        )
    return results


def _result(query: str, item: object, preferred: Sequence[str]) -> WebResult | None:
    """One result from a reply's item; None for an item that is not an object of text fields."""
    if not isinstance(item, dict):
        return None
    link, title, snippet = (item.get(name) or "" for name in ("url", "title", "description"))
    if not all(isinstance(value, str) for value in (link, title, snippet)):
        return None
    title, snippet = _plain(title), _plain(snippet)
    try:
        domain = urllib.parse.urlsplit(link).hostname or ""
    except ValueError:
        return None
    return WebResult(
        query, title, link, domain, snippet, score(query, title, snippet, domain, preferred)
    )


def web_search(
    queries: Sequence[str],
    max_results_per_query: int = defaults.WEB_RESULTS_PER_QUERY,
    preferred_domains: Sequence[str] = (),
    url: str | None = None,
    timeout: float = 10.0,
    limits: check.QueryLimits = check.DEFAULT_LIMITS,
) -> WebResults:
    """Search the web for each query (Brave Search API; `url` or BRAVE_SEARCH_URL overrides the
    endpoint), all within `timeout` seconds. Results of all queries, best first, with duplicates
    by URL removed."""
    queries = check.items(queries, "queries", 10)
    if not queries:
        raise check.QueryError("queries is empty")
    queries = [check.text(q, "query", limits.max_query_chars) for q in queries]
    count = check.count(max_results_per_query, "max_results_per_query", 1, MAX_RESULTS_PER_QUERY)
    key = environment.brave_api_key()
    if not key:
        return WebResults([], ["web search is off: BRAVE_API_KEY is not set; no results"])
    target = endpoint(url or environment.brave_search_url() or BRAVE_URL)
    clock = outbound.Clock(timeout)
    results: dict[str, WebResult] = {}
    warnings = []
    for query in queries:
        if clock.left() <= 0:
            warnings.append(f"web search for {query!r} skipped: the {timeout:g} s deadline passed")
            continue
        try:
            items = _fetch(target, query, count, key, clock.left())
        except outbound.OutboundError as error:
            warnings.append(f"web search for {query!r} failed: {error}")
            continue
        found = [_result(query, item, preferred_domains) for item in items[:count]]
        if skipped := sum(1 for r in found if r is None):
            warnings.append(
                f"web search for {query!r}: {skipped} of {len(found)} results were not objects "
                "of text fields and were skipped"
            )
        for result in found:
            if result is None or not result.url.startswith(("https://", "http://")):
                continue
            if result.url not in results or results[result.url].score < result.score:
                results[result.url] = result
    ranked = sorted(results.values(), key=lambda r: (-r.score, r.url))
    return WebResults(ranked, warnings)
