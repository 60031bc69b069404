"""The calls lexkb makes to another machine (the LLM endpoint, Brave, Voyage AI), against servers
on 127.0.0.0/8 that answer like broken or hostile ones: no key follows a redirect to another
host, no call outlives its deadline, and every bad reply is an error or a warning with a
one-line reason, never an exception of the transport's own."""

from __future__ import annotations

import ipaddress
import os
import socket
import subprocess

import pytest

from lexkb.answers.ask import ask
from lexkb.answers.external.llm import LLMError, chat
from lexkb.answers.external.web import web_search
from lexkb.limits import QueryError
from tests.service.test_cli import LEXKB
from tests.support.hostile_http import (
    COMPLETION,
    FOREIGN,
    LLM_FAULTS,
    OTHER_HOST,
    WEB_FAULTS,
    HostileServer,
    call_within,
    hang,
    json_reply,
    redirect,
    trickle,
)

LLM_KEY = "llm-key-must-stay-home"
BRAVE_KEY = "brave-key-must-stay-home"
VOYAGE_KEY = "voyage-key-must-stay-home"
QUESTION = "How long must records of client money reconciliations be kept?"
MESSAGES = [{"role": "user", "content": "How long are records kept?"}]
# A client without a deadline fails a test after this many seconds instead of hanging it.
PATIENCE = 6.0


def _loopback(name: str) -> bool:
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def looked_up(monkeypatch) -> list[str]:
    """No test here may reach past this machine: a lookup of any other host fails and is
    recorded, so a test can also assert that none was even tried."""
    tried: list[str] = []
    real = socket.getaddrinfo

    def loopback_only(host, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else str(host)
        if not _loopback(name):
            tried.append(name)
            raise socket.gaierror(socket.EAI_NONAME, "the test allows loopback hosts only")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", loopback_only)
    return tried


@pytest.fixture()
def llm(monkeypatch):
    """Points LEXKB_LLM_URL at a server, with a key and a one-second deadline."""
    monkeypatch.setenv("LEXKB_LLM_API_KEY", LLM_KEY)
    monkeypatch.setenv("LEXKB_LLM_TIMEOUT", "1")
    monkeypatch.delenv("LEXKB_LLM_MODEL", raising=False)

    def point(server: HostileServer) -> None:
        monkeypatch.setenv("LEXKB_LLM_URL", f"{server.root}/v1")

    return point


@pytest.fixture()
def brave(monkeypatch):
    monkeypatch.setenv("BRAVE_API_KEY", BRAVE_KEY)

    def point(server: HostileServer) -> None:
        monkeypatch.setenv("BRAVE_SEARCH_URL", f"{server.root}/res/v1/web/search")

    return point


def _one_line_error(outcome: object, kind: type[Exception]) -> str:
    assert isinstance(outcome, kind), f"expected {kind.__name__}, got {outcome!r}"
    message = str(outcome)
    assert message and "\n" not in message and "\r" not in message
    return message


# LLM ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("status", [301, 302, 307])
def test_llm_redirect_to_another_host_is_refused_and_the_key_stays(llm, status):
    with (
        HostileServer(json_reply(COMPLETION), host=OTHER_HOST) as other,
        HostileServer(redirect(status, f"{other.root}/v1/chat/completions")) as endpoint,
    ):
        llm(endpoint)
        _, outcome = call_within(PATIENCE, lambda: chat(MESSAGES))
    message = _one_line_error(outcome, LLMError)
    assert f"HTTP {status}" in message and OTHER_HOST in message and "not" in message
    assert other.requests == []
    assert endpoint.requests[0].headers["authorization"] == f"Bearer {LLM_KEY}"


@pytest.mark.parametrize("kind", ["silent", "trickling"])
def test_llm_call_ends_at_its_deadline(llm, kind):
    with HostileServer(hang if kind == "silent" else trickle(0.5)) as endpoint:
        llm(endpoint)
        took, outcome = call_within(PATIENCE, lambda: chat(MESSAGES))
    message = _one_line_error(outcome, LLMError)
    assert took < 2.5 and "within 1 s" in message


@pytest.mark.parametrize("fault", LLM_FAULTS, ids=list(LLM_FAULTS))
def test_a_bad_llm_reply_is_an_llm_error(llm, fault):
    with HostileServer(LLM_FAULTS[fault]) as endpoint:
        llm(endpoint)
        took, outcome = call_within(PATIENCE, lambda: chat(MESSAGES))
    message = _one_line_error(outcome, LLMError)
    assert message.startswith("chat endpoint failed") and took < 2.5


def test_llm_settings_that_cannot_work_are_refused_before_any_request(llm, monkeypatch):
    with HostileServer(json_reply(COMPLETION)) as endpoint:
        llm(endpoint)
        monkeypatch.setenv("LEXKB_LLM_TIMEOUT", "soon")
        message = _one_line_error(call_within(PATIENCE, lambda: chat(MESSAGES))[1], LLMError)
        assert "LEXKB_LLM_TIMEOUT" in message
        monkeypatch.setenv("LEXKB_LLM_TIMEOUT", "1")
        port = endpoint.root.rsplit(":", 1)[1]
        monkeypatch.setenv("LEXKB_LLM_URL", f"http://user:hunter2@127.0.0.1:{port}/v1")
        message = _one_line_error(call_within(PATIENCE, lambda: chat(MESSAGES))[1], LLMError)
        assert "password" in message and "hunter2" not in message
        llm(endpoint)
        monkeypatch.setenv("LEXKB_LLM_API_KEY", LLM_KEY + "\r\nX-Injected: 1")
        message = _one_line_error(call_within(PATIENCE, lambda: chat(MESSAGES))[1], LLMError)
        assert LLM_KEY not in message
    assert endpoint.requests == []


ASK_FAULTS = ["null content", "bad status line", "reset connection", "deeply nested JSON"]


@pytest.mark.parametrize("fault", [*ASK_FAULTS, "redirect"])
def test_ask_answers_extractively_and_says_why_when_the_llm_fails(index, llm, fault):
    with (
        HostileServer(json_reply(COMPLETION), host=OTHER_HOST) as other,
        HostileServer(
            redirect(302, f"{other.root}/v1/chat/completions")
            if fault == "redirect"
            else LLM_FAULTS[fault]
        ) as endpoint,
    ):
        llm(endpoint)
        _, answer = call_within(60, lambda: ask(index, QUESTION, cache=None))
    assert not isinstance(answer, BaseException), repr(answer)
    assert answer.generated_by == "extractive" and FOREIGN not in answer.answer
    fallback = [w for w in answer.warnings if "answered extractively" in w]
    assert len(fallback) == 1 and "\n" not in fallback[0]
    if fault == "redirect":
        assert OTHER_HOST in fallback[0] and other.requests == []


def test_cli_ask_prints_the_fallback_and_its_reason_not_a_traceback(built_root):
    with HostileServer(LLM_FAULTS["integer content"]) as endpoint:
        env = {**os.environ, "LEXKB_LLM_URL": f"{endpoint.root}/v1", "LEXKB_LLM_TIMEOUT": "2"}
        run = subprocess.run(
            [LEXKB, "ask", QUESTION, "--index", str(built_root)],
            capture_output=True, text=True, timeout=300, env=env,
        )  # fmt: skip
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    assert "answered extractively" in run.stdout and "is int, not text" in run.stdout


# Brave -------------------------------------------------------------------------------------
@pytest.mark.parametrize("status", [302, 307])
def test_web_redirect_to_another_host_is_a_warning_and_the_key_stays(brave, status):
    results = {"web": {"results": [{"url": "https://evil.example/", "title": "Evil"}]}}
    with (
        HostileServer(json_reply(results), host=OTHER_HOST) as other,
        HostileServer(redirect(status, f"{other.root}/res/v1/web/search")) as endpoint,
    ):
        brave(endpoint)
        _, found = call_within(PATIENCE, lambda: web_search(["client money", "retention"]))
    assert not isinstance(found, BaseException), repr(found)
    assert found.results == [] and len(found.warnings) == 2
    assert all(f"HTTP {status}" in w and OTHER_HOST in w for w in found.warnings)
    assert other.requests == []
    assert endpoint.requests[0].headers["x-subscription-token"] == BRAVE_KEY


@pytest.mark.parametrize("fault", WEB_FAULTS, ids=list(WEB_FAULTS))
def test_a_bad_brave_reply_is_one_warning_per_query(brave, fault):
    with HostileServer(WEB_FAULTS[fault]) as endpoint:
        brave(endpoint)
        took, found = call_within(PATIENCE, lambda: web_search(["client money", "retention"]))
    assert not isinstance(found, BaseException), repr(found)
    assert found.results == [] and len(found.warnings) == 2 and took < 2.5
    assert all("\n" not in w for w in found.warnings)
    assert "client money" in found.warnings[0] and "retention" in found.warnings[1]


def test_web_search_ends_within_its_timeout_however_slow_the_endpoint(brave):
    with HostileServer(trickle(0.5)) as endpoint:
        brave(endpoint)
        took, found = call_within(
            PATIENCE, lambda: web_search(["client money", "retention"], timeout=1.0)
        )
    assert not isinstance(found, BaseException), repr(found)
    assert took < 2.5 and len(found.warnings) == 2
    assert "client money" in found.warnings[0] and "retention" in found.warnings[1]


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost.evil.example/search",
        "http://127.0.0.1@evil.example/search",
        "http://127.0.0.1.evil.example/search",
        "http://[::1]@evil.example/search",
        "http://evil.example/search",
        "ftp://127.0.0.1/search",
        "https://user:hunter2@api.search.brave.com/res/v1/web/search",
    ],
)
def test_the_web_endpoint_check_reads_the_host_not_a_prefix(brave, looked_up, monkeypatch, url):
    monkeypatch.setenv("BRAVE_SEARCH_URL", url)
    with pytest.raises(QueryError) as refused:
        web_search(["client money"])
    assert looked_up == [] and "hunter2" not in str(refused.value)


def test_the_web_endpoint_may_be_https_anywhere_or_http_on_this_machine(brave):
    from lexkb.answers.external.web import endpoint

    allowed = {
        "https://api.search.brave.com/res/v1/web/search": "api.search.brave.com",
        "http://localhost:8/s": "localhost",
        "http://127.8.9.10/s": "127.8.9.10",
        "http://[::1]:8/s": "::1",
    }
    assert {url: endpoint(url).host for url in allowed} == allowed
    results = {"web": {"results": [{"url": "https://a.example/x", "title": "client money"}]}}
    with HostileServer(json_reply(results), host=OTHER_HOST) as local:
        brave(local)
        found = web_search(["client money"])
    assert [r.url for r in found.results] == ["https://a.example/x"] and found.warnings == []
    assert local.requests[0].headers["x-subscription-token"] == BRAVE_KEY


# Voyage AI ---------------------------------------------------------------------------------
@pytest.mark.parametrize("status", [302, 307])
def test_voyage_redirect_is_refused_and_neither_texts_nor_key_leave(status):
    from lexkb.core.embed.embedders import EmbedderError, VoyageEmbedder

    vectors = {"object": "list", "model": "voyage-law-2", "usage": {"total_tokens": 1},
               "data": [{"object": "embedding", "embedding": [0.5] * 8, "index": 0}]}  # fmt: skip
    with (
        HostileServer(json_reply(vectors), host=OTHER_HOST) as other,
        HostileServer(redirect(status, f"{other.root}/v1/embeddings")) as endpoint,
    ):
        embedder = VoyageEmbedder(
            api_key=VOYAGE_KEY, base_url=f"{endpoint.root}/v1", max_retries=2, sleep=lambda s: None
        )
        _, outcome = call_within(PATIENCE, lambda: embedder.embed_documents(["confidential"]))
    message = _one_line_error(outcome, EmbedderError)
    assert "redirect" in message and OTHER_HOST in message
    assert other.requests == [] and len(endpoint.requests) == 1
