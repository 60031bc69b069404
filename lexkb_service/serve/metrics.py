"""What operators watch, at /metrics in Prometheus' text format: requests and their latency by
route, answers by mode and abstention reason, confidence and authority of what was cited,
sentences by verification verdict, cache hits, and the snapshot served.

Prometheus' Python client has no quantiles in its Summary, so besides the histogram (for
PromQL's histogram_quantile) a collector publishes p50 / p90 / p99 of each route's last
WINDOW requests as `lexkb_request_latency_seconds{route, quantile}`: what an operator reads
without a Prometheus server. Everything is registered in a registry of the app's own, so two
apps in one process (the tests) do not share counts.

Every label comes from a closed set, whatever clients send: a request's route is the template
of the app route its path matches (lexkb_service.serve.access_rules.RouteTable, which the gate
asks once a request for the route's access and its label:
"/api/v1/conversations/{conversation_id}", never the id), and any other path is "unknown",
refused or not. A label made from a raw path let one client grow the process by 94 MB and
/metrics to 55 MB (20,000 requests to distinct paths, each refused with 421): each new label is
a series kept for the process's life, in the counter, the histogram's 16 buckets and the
quantiles' window.
"""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
WINDOW = 1000
QUANTILES = (0.5, 0.9, 0.99)
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
SHARE_BUCKETS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
# The route label of every path that matches none of the app's routes.
UNKNOWN_ROUTE = "unknown"


class _Quantiles(Collector):
    """p50 / p90 / p99 of each route's last WINDOW latencies."""

    def __init__(self) -> None:
        self._seen: dict[str, deque[float]] = defaultdict(lambda: deque(maxlen=WINDOW))
        self._lock = threading.Lock()

    def observe(self, route: str, seconds: float) -> None:
        with self._lock:
            self._seen[route].append(seconds)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            "lexkb_request_latency_seconds",
            f"latency quantiles of each route's last {WINDOW} requests",
            labels=["route", "quantile"],
        )
        with self._lock:
            seen = {route: np.array(values) for route, values in self._seen.items() if values}
        for route, values in sorted(seen.items()):
            for q in QUANTILES:
                family.add_metric([route, str(q)], float(np.quantile(values, q)))
        yield family


class _Read(Collector):
    """One counter whose value is read from elsewhere at each collection."""

    def __init__(self, name: str, documentation: str, read: Callable[[], float]) -> None:
        self.name, self.documentation, self.read = name, documentation, read

    def collect(self) -> Iterator[CounterMetricFamily]:
        yield CounterMetricFamily(self.name, self.documentation, value=self.read())


class Metrics:
    """The service's metrics, in a registry of its own."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "lexkb_requests", "requests by route and status", ["route", "status"], registry=r
        )
        self.latency = Histogram(
            "lexkb_request_seconds", "request latency", ["route"], buckets=LATENCY_BUCKETS,
            registry=r,
        )  # fmt: skip
        self.quantiles = _Quantiles()
        r.register(self.quantiles)
        self.answers = Counter(
            "lexkb_answers", "answers by mode and abstention reason", ["mode", "reason"],
            registry=r,
        )  # fmt: skip
        self.cache_hits = Counter("lexkb_answer_cache_hits", "answers from the cache", registry=r)
        self.confidence = Histogram(
            "lexkb_answer_confidence", "answers' confidence", buckets=SHARE_BUCKETS, registry=r
        )
        self.authority = Counter(
            "lexkb_answer_sources", "sources cited by authority level", ["authority"], registry=r
        )
        self.verification = Counter(
            "lexkb_answer_sentences", "answer sentences by verification verdict", ["verdict"],
            registry=r,
        )  # fmt: skip
        self.snapshot = Gauge(
            "lexkb_snapshot_info", "the snapshot served (1 for its version)", ["version"],
            registry=r,
        )  # fmt: skip
        self._served: str | None = None
        self.rate_limited = Counter(
            "lexkb_rate_limited", "asks refused by the rate limit", registry=r
        )

    def counted_by(self, name: str, documentation: str, read: Callable[[], float]) -> None:
        """A counter kept by another part of the service (refusals counted where they are
        made, for the API and MCP alike), read when /metrics is asked for."""
        self.registry.register(_Read(name, documentation, read))

    def request(self, route: str, status: int, seconds: float) -> None:
        """Count one request; `route` is a label from RouteTable, never a raw path."""
        self.requests.labels(route, str(status)).inc()
        self.latency.labels(route).observe(seconds)
        self.quantiles.observe(route, seconds)

    def answer(self, answer: Mapping[str, Any]) -> None:
        """Count what an answer was: mode, reason, confidence, sources' authority, verdicts."""
        self.answers.labels(answer["mode"], answer.get("abstention_reason") or "").inc()
        if answer.get("from_cache"):
            self.cache_hits.inc()
        self.confidence.observe(float(answer.get("confidence") or 0.0))
        for source in answer.get("sources", []):
            self.authority.labels(source.get("authority_level") or "unknown").inc()
        for sentence in answer.get("sentences", []):
            self.verification.labels(sentence.get("verdict") or "unknown").inc()

    def serving(self, version: str) -> None:
        """Called on every request: the gauge changes only when the snapshot does."""
        if version != self._served:
            self._served = version
            self.snapshot.clear()
            self.snapshot.labels(version).set(1)

    def text(self) -> bytes:
        return generate_latest(self.registry)
