"""A damaged relevance model under `lexkb serve`: refused by its hash check (rightly), and
then every tool that reads it degrades with a warning instead of failing or staying silent.
The real CLI process over real HTTP, MCP with the SDK's client; the process reads its models
from a folder where relevance.onnx has one byte changed (a sitecustomize points it there).

- /api/v1/search with rerank: 200 with the search's own hits and a warning that says the
  relevance model could not be used and why (it was a plain-text 500).
- /api/v1/ask, and MCP's ask, evidence and check_question: a warning that the check that a
  source answers the question was skipped (it was skipped silently).
- MCP's extract: its answers, unreranked, with the warning (the call failed).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lexkb.core.judge.shipped import MODELS
from tests.service.test_serve_asks import _text
from tests.support.serve_process import Served, call, start

QUESTION = "How long must client money reconciliation records be kept?"
SAID = "the relevance model could not be used (relevance.onnx is not the model shipped"
SITECUSTOMIZE = """\
import os
from pathlib import Path

import lexkb.core.judge.shipped as shipped

shipped.MODELS = Path(os.environ["LEXKB_TEST_MODELS"])
"""


@pytest.fixture(scope="module")
def served(built_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    work = tmp_path_factory.mktemp("serve-degraded")
    models = work / "models"
    models.mkdir()
    (models / "support.onnx").symlink_to(MODELS / "support.onnx")
    damaged = bytearray((MODELS / "relevance.onnx").read_bytes())
    damaged[len(damaged) // 2] ^= 0xFF
    (models / "relevance.onnx").write_bytes(bytes(damaged))
    (work / "site").mkdir()
    (work / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE)
    server = start(
        built_root, work / "serve.db", PYTHONPATH=str(work / "site"),
        LEXKB_TEST_MODELS=str(models),
    )  # fmt: skip
    yield server
    server.stop()


def _warned(warnings: list[str], consequence: str) -> None:
    assert any(w.startswith(SAID) and consequence in w for w in warnings), warnings
    assert not any(str(MODELS.parent) in w or "/tmp" in w for w in warnings), warnings


def test_a_reranked_search_answers_unreranked_with_a_warning(served: Served):
    plain = call(served, "POST", "/api/v1/search", {"query": QUESTION})
    found = call(served, "POST", "/api/v1/search", {"query": QUESTION, "rerank": True})
    assert found.status == 200, found.body
    assert found.headers["content-type"] == "application/json"
    assert [h["chunk_id"] for h in found.body["hits"]] == [
        h["chunk_id"] for h in plain.body["hits"]
    ]
    assert all(h["answers"] is None for h in found.body["hits"])
    _warned(found.body["warnings"], "search's own order")
    assert plain.body["warnings"] == []


def test_asks_say_the_answered_check_was_skipped(served: Served):
    asked = call(served, "POST", "/api/v1/ask", {"question": QUESTION})
    assert asked.status == 201, asked.body
    _warned(asked.body["answer"]["warnings"], "was skipped")
    again = call(served, "POST", "/api/v1/ask", {"question": QUESTION})  # from the cache: once
    assert again.body["answer"]["warnings"] == asked.body["answer"]["warnings"]


def test_mcp_tools_degrade_with_a_warning(served: Served):
    calls = [
        ("extract", {"question": QUESTION}),
        ("search", {"query": QUESTION, "rerank": True}),
        ("evidence", {"query": QUESTION}),
        ("check_question", {"question": QUESTION}),
        ("ask", {"question": QUESTION}),
    ]
    results = _local_mcp(served, calls)
    assert [r.is_error for r in results] == [False] * len(calls), [_text(r) for r in results]
    extracted, searched, judged, checked, asked = (r.structured_content for r in results)
    assert extracted["answers"] and not extracted["no_answer"]
    _warned(extracted["warnings"], "not reordered")
    _warned(searched["warnings"], "search's own order")
    for payload in (judged, checked, asked):
        _warned(payload["warnings"], "was skipped")


def _local_mcp(served: Served, calls):
    """The calls in one MCP session as the single local user (no key, on loopback)."""
    import asyncio

    from mcp import Client

    async def session():
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        async with httpx2.AsyncClient(timeout=120) as http:
            transport = streamable_http_client(f"{served.url}/mcp", http_client=http)
            async with Client(transport) as client:
                return [await client.call_tool(tool, arguments) for tool, arguments in calls]

    return asyncio.run(session())


def test_an_unexpected_failure_is_a_json_500():
    """Whatever a route raises that no handler names is answered as JSON, never Starlette's
    plain-text "Internal Server Error" (what a damaged model gave before), and names nothing
    of what failed: that goes to the server's log."""
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from lexkb_service.serve.errors import add_error_handlers

    app = FastAPI()
    add_error_handlers(app)

    @app.get("/boom")
    def boom() -> None:
        raise RuntimeError("/srv/secret/path is broken")

    reply = TestClient(app, raise_server_exceptions=False).get("/boom")
    assert reply.status_code == 500
    assert reply.headers["content-type"] == "application/json"
    assert "error" in reply.json() and "/srv/secret" not in reply.text
