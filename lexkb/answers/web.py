"""web_search: Brave Search results for what the index does not hold, ranked for a citation.

The only tool that leaves the machine, and only when asked: the key is read from
`BRAVE_API_KEY` in the environment at each call (never stored), and without it the tool returns
no results and a warning. A failed query is a warning too; the other queries still run.
Results are ranked by the share of the query's terms in title and snippet, a bonus for
preferred domains (regulators' own sites, say), and snippet quality (long enough to quote, not
cut off). Web results are not sources of the snapshot: they carry no ref and no content hash.
"""

from __future__ import annotations

import html
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from lexkb import limits as check
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

    def to_dict(self) -> dict:
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


def _fetch(url: str, query: str, count: int, key: str, timeout: float) -> dict:
    request = urllib.request.Request(
        f"{url}?{urllib.parse.urlencode({'q': query, 'count': count})}",
        headers={"Accept": "application/json", "X-Subscription-Token": key},
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - https or a test's 127.0.0.1
        body = response.read(MAX_RESPONSE_BYTES + 1)
    if len(body) > MAX_RESPONSE_BYTES:
        raise ValueError(f"response over {MAX_RESPONSE_BYTES:,} bytes")
    return json.loads(body)


def web_search(
    queries: Sequence[str],
    max_results_per_query: int = 5,
    preferred_domains: Sequence[str] = (),
    url: str | None = None,
    timeout: float = 10.0,
    limits: check.QueryLimits = check.DEFAULT_LIMITS,
) -> WebResults:
    """Search the web for each query (Brave Search API; `url` or BRAVE_SEARCH_URL overrides the
    endpoint). Results of all queries, best first, with duplicates by URL removed."""
    queries = check.items(queries, "queries", 10)
    if not queries:
        raise check.QueryError("queries is empty")
    queries = [check.text(q, "query", limits.max_query_chars) for q in queries]
    count = check.count(max_results_per_query, "max_results_per_query", 1, MAX_RESULTS_PER_QUERY)
    key = os.environ.get("BRAVE_API_KEY")
    if not key:
        return WebResults([], ["web search is off: BRAVE_API_KEY is not set; no results"])
    endpoint = url or os.environ.get("BRAVE_SEARCH_URL") or BRAVE_URL
    if not endpoint.startswith(("https://", "http://127.0.0.1", "http://localhost")):
        raise check.QueryError("the web search endpoint must be https (or a local test server)")
    results: dict[str, WebResult] = {}
    warnings = []
    for query in queries:
        try:
            payload = _fetch(endpoint, query, count, key, timeout)
        except (urllib.error.URLError, OSError, ValueError) as exc:
            status = getattr(exc, "code", None)
            warnings.append(f"web search for {query!r} failed: {status or exc}")
            continue
        for item in ((payload.get("web") or {}).get("results") or [])[:count]:
            link = str(item.get("url") or "")
            if not link.startswith(("https://", "http://")):
                continue
            title = _plain(item.get("title", ""))
            snippet = _plain(item.get("description", ""))
            domain = urllib.parse.urlsplit(link).hostname or ""
            result = WebResult(
                query, title, link, domain, snippet,
                score(query, title, snippet, domain, preferred_domains),
            )  # fmt: skip
            if link not in results or results[link].score < result.score:
                results[link] = result
    ranked = sorted(results.values(), key=lambda r: (-r.score, r.url))
    return WebResults(ranked, warnings)
