"""Text embedders for dense retrieval: the same object embeds passages at build time and
queries at search time, so a snapshot records which one it used and refuses any other.

`VoyageEmbedder` calls Voyage AI through the `voyageai` client. Batches stay within the API's
limits on texts per request and tokens per request; tokens are estimated from characters (about
3 characters per token for legal English, on the safe side) because the client's exact counter
downloads a tokenizer. Rate limits and transient failures are retried with exponential backoff;
a rejected key fails at once with a clear message.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

VOYAGE_MAX_TEXTS = 1000
# Per-request token budgets published by Voyage AI (docs.voyageai.com/docs/embeddings).
VOYAGE_MAX_TOKENS = {"voyage-law-2": 120_000, "voyage-3": 120_000, "voyage-3-lite": 1_000_000}
CHARS_PER_TOKEN = 3.0


class EmbedderError(RuntimeError):
    """Embedding failed for a reason retrying will not fix (bad key, bad request)."""


class Embedder(Protocol):
    @property
    def name(self) -> str:
        """Provider and model, as recorded in the snapshot manifest ("voyage:voyage-law-2")."""

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


def batches(texts: Sequence[str], max_texts: int, max_tokens: int) -> list[range]:
    """Consecutive index ranges whose texts fit one request."""
    found, start, tokens = [], 0, 0.0
    for i, text in enumerate(texts):
        cost = len(text) / CHARS_PER_TOKEN + 1
        if i > start and (i - start >= max_texts or tokens + cost > max_tokens):
            found.append(range(start, i))
            start, tokens = i, 0.0
        tokens += cost
    if start < len(texts):
        found.append(range(start, len(texts)))
    return found


class VoyageEmbedder:
    def __init__(
        self,
        model: str = "voyage-law-2",
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 6,
        backoff_seconds: float = 1.0,
        timeout: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        import voyageai

        key = api_key or os.environ.get("VOYAGE_API_KEY")
        if not key:
            raise EmbedderError("VOYAGE_API_KEY is not set")
        self.model = model
        self._client = voyageai.Client(
            api_key=key,
            max_retries=0,
            timeout=timeout,
            base_url=base_url or os.environ.get("VOYAGE_BASE_URL"),
        )
        self._errors = voyageai.error
        self._max_retries = max_retries
        self._backoff = backoff_seconds
        self._sleep = sleep
        self.requests = 0

    @property
    def name(self) -> str:
        return f"voyage:{self.model}"

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        budget = VOYAGE_MAX_TOKENS.get(self.model, 120_000)
        parts = [
            self._embed([texts[i] for i in span], "document")
            for span in batches(texts, VOYAGE_MAX_TEXTS, budget)
        ]
        return np.vstack(parts) if parts else np.zeros((0, 0), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self._embed([text], "query")[0]

    def _embed(self, texts: list[str], input_type: str) -> np.ndarray:
        errors = self._errors
        retryable = (
            errors.RateLimitError,
            errors.ServiceUnavailableError,
            errors.ServerError,
            errors.Timeout,
            errors.APIConnectionError,
        )
        for attempt in range(self._max_retries + 1):
            try:
                self.requests += 1
                result = self._client.embed(
                    texts, model=self.model, input_type=input_type, truncation=True
                )
                return np.asarray(result.embeddings, dtype=np.float32)
            except errors.AuthenticationError as exc:
                raise EmbedderError(f"Voyage AI rejected VOYAGE_API_KEY: {exc}") from exc
            except (errors.InvalidRequestError, errors.MalformedRequestError) as exc:
                raise EmbedderError(f"Voyage AI refused the request: {exc}") from exc
            except retryable:
                if attempt == self._max_retries:
                    raise
                self._sleep(self._backoff * 2**attempt)
        raise AssertionError("unreachable")
