"""A client for an OpenAI-compatible chat endpoint (llama.cpp, vLLM, Ollama, a hosted API).

Used only when `LEXKB_LLM_URL` names the endpoint's base (".../v1"); lexkb answers offline and
extractively otherwise. `LEXKB_LLM_MODEL` picks the model (default "default") and
`LEXKB_LLM_API_KEY`, when set, is sent as a bearer token. `LEXKB_LLM_TIMEOUT` is the deadline of
a whole call in seconds (default 60): a model that has not answered by then, or that sends its
reply a byte at a time, ends the call. All four are read from the environment at each call and
never stored.

Every way a call can fail, a redirect (never followed: the key goes to the endpoint named and
nowhere else), the deadline, a reset connection, a reply that is not UTF-8 JSON, is too large, or
holds no text, is an `LLMError` with a one-line reason, on which `ask` answers extractively and
says why.
"""

from __future__ import annotations

import json
from typing import Any

from lexkb.answers.external import outbound
from lexkb.core import environment

MAX_RESPONSE_BYTES = 1_000_000
DEFAULT_TIMEOUT_SECONDS = 60.0
MAX_TIMEOUT_SECONDS = 3600.0
_MAX_MODEL_CHARS = 100


class LLMError(RuntimeError):
    """The endpoint could not be reached or answered with something other than a completion."""


def llm_url() -> str | None:
    url = environment.llm_url()
    return url.rstrip("/") or None


def timeout_seconds() -> float:
    """LEXKB_LLM_TIMEOUT, or the default when it is unset."""
    raw = environment.llm_timeout()
    if not raw:
        return DEFAULT_TIMEOUT_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds <= MAX_TIMEOUT_SECONDS:  # also false for NaN
        raise LLMError(
            f"LEXKB_LLM_TIMEOUT must be a number of seconds above 0 and up to "
            f"{MAX_TIMEOUT_SECONDS:g}, not {outbound.one_line(raw[:20])!r}"
        )
    return seconds


def chat(messages: list[dict[str, Any]], temperature: float = 0.0) -> tuple[str, str]:
    """(the reply's text, the model that wrote it) for `messages`."""
    url = llm_url()
    if url is None:
        raise LLMError("LEXKB_LLM_URL is not set")
    try:
        target = outbound.Target.parse(url, "LEXKB_LLM_URL").joined("chat/completions")
    except outbound.OutboundError as error:
        raise LLMError(str(error)) from error
    deadline = timeout_seconds()
    model = environment.llm_model()
    body = json.dumps({"model": model, "messages": messages, "temperature": temperature}).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if key := environment.llm_api_key():
        headers["Authorization"] = f"Bearer {key}"
    try:
        payload = outbound.request_json(
            "POST", target, headers, body, deadline=deadline, max_bytes=MAX_RESPONSE_BYTES
        )
    except outbound.OutboundError as error:
        raise LLMError(f"chat endpoint failed: {error}") from error
    return _content(payload), _model(payload, model)


def _content(payload: object) -> str:
    """choices[0].message.content, when it is text with something in it."""
    if not isinstance(payload, dict):
        raise LLMError(
            f"chat endpoint failed: the reply is a JSON {type(payload).__name__}, not an object"
        )
    where = "the reply's "
    try:
        for step, shown in (("choices", "choices"), (0, "[0]"), ("message", ".message"),
                            ("content", ".content")):  # fmt: skip
            where += shown
            payload = payload[step]  # type: ignore[index]
    except (KeyError, IndexError, TypeError) as error:
        raise LLMError(f"chat endpoint failed: {where} is missing") from error
    if not isinstance(payload, str):
        kind = "null" if payload is None else type(payload).__name__
        raise LLMError(f"chat endpoint failed: {where} is {kind}, not text")
    if not payload.strip():
        raise LLMError(f"chat endpoint failed: {where} is empty")
    return payload


def _model(payload: object, asked: str) -> str:
    """The model the reply names, when that is a short printable name; else the one asked for."""
    named = payload.get("model") if isinstance(payload, dict) else None
    if isinstance(named, str) and 0 < len(named) <= _MAX_MODEL_CHARS and named.isprintable():
        return named
    return asked
