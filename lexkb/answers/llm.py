"""A client for an OpenAI-compatible chat endpoint (llama.cpp, vLLM, Ollama, a hosted API).

Used only when `LEXKB_LLM_URL` names the endpoint's base (".../v1"); lexkb answers offline and
extractively otherwise. `LEXKB_LLM_MODEL` picks the model (default "default") and
`LEXKB_LLM_API_KEY`, when set, is sent as a bearer token. All three are read from the
environment at each call and never stored.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request

MAX_RESPONSE_BYTES = 1_000_000
TIMEOUT_SECONDS = 120


class LLMError(RuntimeError):
    """The endpoint could not be reached or answered with something other than a completion."""


def llm_url() -> str | None:
    url = os.environ.get("LEXKB_LLM_URL", "").strip()
    return url.rstrip("/") or None


def chat(messages: list[dict], temperature: float = 0.0) -> tuple[str, str]:
    """(the reply's text, the model that wrote it) for `messages`."""
    url = llm_url()
    if url is None:
        raise LLMError("LEXKB_LLM_URL is not set")
    if not url.startswith(("http://", "https://")):
        raise LLMError("LEXKB_LLM_URL must be an http(s) URL")
    model = os.environ.get("LEXKB_LLM_MODEL", "default")
    body = json.dumps({"model": model, "messages": messages, "temperature": temperature}).encode()
    headers = {"Content-Type": "application/json"}
    if key := os.environ.get("LEXKB_LLM_API_KEY"):
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(f"{url}/chat/completions", body, headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            payload = json.loads(response.read(MAX_RESPONSE_BYTES))
    except (urllib.error.URLError, TimeoutError, json.JSONDecodeError) as error:
        raise LLMError(f"chat endpoint failed: {error}") from error
    try:
        return payload["choices"][0]["message"]["content"], payload.get("model", model)
    except (KeyError, IndexError, TypeError) as error:
        raise LLMError("chat endpoint returned no choices[0].message.content") from error
