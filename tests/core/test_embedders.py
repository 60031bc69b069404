"""The Voyage AI embedder through the real `voyageai` client, against a local HTTP server."""

from __future__ import annotations

import numpy as np
import pytest
import voyageai

from lexkb.core.embed.embedders import EmbedderError, VoyageEmbedder, batches
from tests.support.voyage_fake import DIMENSION, KEY, FakeVoyage, vector


@pytest.fixture()
def voyage():
    with FakeVoyage() as server:
        yield server


def _embedder(server: FakeVoyage, **kwargs) -> tuple[VoyageEmbedder, list[float]]:
    slept: list[float] = []
    embedder = VoyageEmbedder(
        api_key=kwargs.pop("api_key", KEY),
        base_url=server.base_url,
        sleep=slept.append,
        backoff_seconds=0.5,
        **kwargs,
    )
    return embedder, slept


def test_documents_and_queries_are_embedded_with_their_input_type(voyage):
    embedder, _ = _embedder(voyage)
    texts = ["Client money must be segregated.", "Records are kept for six years."]
    vectors = embedder.embed_documents(texts)
    assert vectors.shape == (2, DIMENSION) and vectors.dtype == np.float32
    assert np.allclose(vectors[1], vector(texts[1]), atol=1e-6)
    query = embedder.embed_query("how long are records kept?")
    assert query.shape == (DIMENSION,)
    assert [r["input_type"] for r in voyage.requests] == ["document", "query"]
    assert {r["model"] for r in voyage.requests} == {"voyage-law-2"}
    assert embedder.name == "voyage:voyage-law-2"


def test_batches_respect_the_count_and_token_limits(voyage):
    embedder, _ = _embedder(voyage)
    texts = [f"paragraph {i} on client money" for i in range(2_500)]
    vectors = embedder.embed_documents(texts)
    assert vectors.shape == (2_500, DIMENSION)
    assert [len(r["input"]) for r in voyage.requests] == [1000, 1000, 500]
    # Long texts: 120,000 tokens per request at 3 characters a token is 360,000 characters.
    spans = batches(["x" * 100_000] * 7, max_texts=1000, max_tokens=120_000)
    assert [len(s) for s in spans] == [3, 3, 1]
    assert batches([], 10, 10) == []


def test_rate_limits_and_outages_are_retried_with_backoff(voyage):
    embedder, slept = _embedder(voyage)
    voyage.failures = [429, 503, 429]
    vectors = embedder.embed_documents(["one text"])
    assert vectors.shape == (1, DIMENSION)
    assert len(voyage.requests) == 4
    assert slept == [0.5, 1.0, 2.0]


def test_retries_give_up_after_the_limit(voyage):
    embedder, slept = _embedder(voyage, max_retries=2)
    voyage.failures = [429] * 5
    with pytest.raises(voyageai.error.RateLimitError):
        embedder.embed_query("anything")
    assert len(voyage.requests) == 3 and slept == [0.5, 1.0]


def test_a_bad_key_fails_at_once_with_a_clear_error(voyage):
    embedder, slept = _embedder(voyage, api_key="wrong")
    with pytest.raises(EmbedderError, match="rejected VOYAGE_API_KEY"):
        embedder.embed_documents(["text"])
    assert len(voyage.requests) == 1 and slept == []


def test_no_key_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("VOYAGE_API_KEY", raising=False)
    with pytest.raises(EmbedderError, match="VOYAGE_API_KEY is not set"):
        VoyageEmbedder()
