"""Asks through every door of `lexkb serve` count against one hourly allowance and leave one
record, and only asks that are answered count; the longest accepted questions and claims are
answered, not failed. The real CLI process over real HTTP, MCP with the SDK's client.

- MCP's `ask` under `lexkb serve` is the API's ask: the same key's allowance (with
  `--asks-per-hour 3`, API and MCP asks together stop at 3) and the same trace store.
- An ask refused (a filter naming no document: 400) uses none of the allowance.
- The answer cache is per key: a key's answer comes `from_cache` only when that key asked the
  same question before (it told one key that another had asked it), through either door.
- A question of 1,900 characters (2,000 are accepted) is asked, searched with rerank and asked
  over MCP; a claim of 1,998 characters is verified: each answered, none a 500.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lexkb_service.mcp.ratelimit import RateLimit
from tests.support.serve_process import Served, add_key, call, start

QUESTION = "How long must client money reconciliation records be kept?"
VIA_MCP = "What must a firm keep about client money reconciliations?"
# 1,900 characters of a question, within the documented 2,000 (a pair model reads 256 tokens).
LONG_QUESTION = (
    ("How long must a firm keep the records of each client money reconciliation it makes, "
     "and who may inspect them, ") * 20
)[:1899] + "?"  # fmt: skip
LONG_CLAIM = "a " * 999


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("serve-asks") / "serve.db"


@pytest.fixture(scope="module")
def keys(store: Path) -> dict[str, str]:
    names = ("carol", "dave", "erin", "frank", "grace", "admin")
    return {name: add_key(store, name, admin=name == "admin") for name in names}


@pytest.fixture(scope="module")
def served(built_root: Path, store: Path, keys: dict[str, str]) -> Iterator[Served]:
    server = start(built_root, store, "--require-keys", "--asks-per-hour", "3")
    yield server
    server.stop()


def mcp_calls(served: Served, key: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Each (tool, arguments) called in turn in one MCP session with `key`: the results."""
    from mcp import Client

    async def session() -> list[Any]:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        headers = {"Authorization": f"Bearer {key}"}
        async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
            transport = streamable_http_client(f"{served.url}/mcp", http_client=http)
            async with Client(transport) as client:
                return [await client.call_tool(tool, arguments) for tool, arguments in calls]

    return asyncio.run(session())


def _text(result: Any) -> str:
    return " ".join(getattr(part, "text", "") for part in result.content)


def test_mcp_asks_count_against_the_keys_allowance_and_are_recorded(served, keys):
    carol = keys["carol"]
    assert call(served, "POST", "/api/v1/ask", {"question": QUESTION}, key=carol).status == 201
    (answered,) = mcp_calls(served, carol, [("ask", {"question": VIA_MCP})])
    assert not answered.is_error, _text(answered)
    assert call(served, "GET", "/api/v1/me", key=carol).body["asks_remaining"] == 1
    assert answered.structured_content["mode"] in ("DIRECT", "QUALIFIED", "ABSTAIN")
    assert call(served, "POST", "/api/v1/ask", {"question": QUESTION}, key=carol).status == 201

    # The allowance is spent whichever door asks next.
    (over,) = mcp_calls(served, carol, [("ask", {"question": VIA_MCP})])
    assert over.is_error and "over 3 asks an hour" in _text(over)
    refused = call(served, "POST", "/api/v1/ask", {"question": QUESTION}, key=carol)
    assert refused.status == 429 and int(refused.headers["retry-after"]) > 0
    assert call(served, "GET", "/api/v1/me", key=carol).body["asks_remaining"] == 0

    # The MCP ask is recorded under carol's key, with its trace, like the API's.
    traces = call(served, "GET", "/api/v1/admin/answers", key=keys["admin"]).body["items"]
    mine = [t for t in traces if t["question"] in (QUESTION, VIA_MCP)]
    assert [t["question"] for t in mine].count(VIA_MCP) == 1 and len(mine) == 3
    assert len({t["owner"] for t in mine}) == 1
    trace = next(t for t in mine if t["question"] == VIA_MCP)
    assert trace["answer"] == answered.structured_content
    # ... and its answer takes feedback from that key alone.
    feedback = {"answer_id": trace["answer_id"], "rating": "positive"}
    assert call(served, "POST", "/api/v1/feedback", feedback, key=carol).status == 201
    assert call(served, "POST", "/api/v1/feedback", feedback, key=keys["dave"]).status == 404


def test_an_ask_refused_for_a_bad_filter_costs_nothing(served, keys):
    dave = keys["dave"]
    bad = {"question": QUESTION, "filters": {"document": "no-such-document"}}
    for _ in range(4):
        refused = call(served, "POST", "/api/v1/ask", bad, key=dave)
        assert refused.status == 400 and "no-such-document" in refused.error
    (tool,) = mcp_calls(served, dave, [("ask", bad)])
    assert tool.is_error and "no-such-document" in _text(tool)
    assert call(served, "GET", "/api/v1/me", key=dave).body["asks_remaining"] == 3
    statuses = [
        call(served, "POST", "/api/v1/ask", {"question": QUESTION}, key=dave).status
        for _ in range(4)
    ]
    assert statuses == [201, 201, 201, 429]


def test_the_answer_cache_tells_no_key_what_another_asked(served, keys):
    frank, grace = keys["frank"], keys["grace"]
    question = {"question": "Who may inspect client money reconciliation records?"}
    first = call(served, "POST", "/api/v1/ask", question, key=frank)
    again = call(served, "POST", "/api/v1/ask", question, key=frank)
    assert first.status == again.status == 201, (first.body, again.body)
    assert (first.body["answer"]["from_cache"], again.body["answer"]["from_cache"]) == (
        False,
        True,
    )
    # Another key asking the same question gets an answer of its own, through either door;
    # its second ask, through the other door, is its own cached answer.
    (via_mcp,) = mcp_calls(served, grace, [("ask", question)])
    assert not via_mcp.is_error, _text(via_mcp)
    assert via_mcp.structured_content["from_cache"] is False
    via_api = call(served, "POST", "/api/v1/ask", question, key=grace)
    assert via_api.status == 201 and via_api.body["answer"]["from_cache"] is True
    assert via_api.body["answer"]["answer"] == first.body["answer"]["answer"]


def test_the_longest_questions_and_claims_are_answered(served, keys):
    erin = keys["erin"]
    assert len(LONG_QUESTION) == 1900 and len(LONG_CLAIM) == 1998
    asked = call(served, "POST", "/api/v1/ask", {"question": LONG_QUESTION}, key=erin)
    assert asked.status == 201, asked.body
    assert asked.body["answer"]["mode"] in ("DIRECT", "QUALIFIED", "ABSTAIN")
    found = call(
        served, "POST", "/api/v1/search", {"query": LONG_QUESTION, "rerank": True}, key=erin
    )
    assert found.status == 200, found.body
    assert found.body["hits"] and all(h["answers"] is not None for h in found.body["hits"])
    checked = call(
        served, "POST", "/api/v1/verify/citations",
        {"citations": [{"claim": LONG_CLAIM, "ref": "§ 103(b)"}]}, key=erin,
    )  # fmt: skip
    assert checked.status == 200, checked.body
    assert checked.body["citations"][0]["verdict"]

    results = mcp_calls(
        served,
        erin,
        [
            ("ask", {"question": LONG_QUESTION}),
            ("search", {"query": LONG_QUESTION, "rerank": True}),
            ("verify_citations", {"citations": [{"claim": LONG_CLAIM, "ref": "§ 103(b)"}]}),
        ],
    )
    assert [r.is_error for r in results] == [False] * 3, [_text(r) for r in results]
    # Two asks answered: two of the three counted.
    assert call(served, "GET", "/api/v1/me", key=erin).body["asks_remaining"] == 1


def test_the_allowance_is_given_back_when_the_ask_fails():
    limit = RateLimit(2)
    with limit.spending("k") as wait:
        assert wait == 0
    with pytest.raises(RuntimeError), limit.spending("k") as wait:
        assert wait == 0
        raise RuntimeError("the ask failed")
    assert limit.remaining("k") == 1
    with limit.spending("k") as wait:
        assert wait == 0
    with limit.spending("k") as wait:
        assert wait > 0  # over: nothing was taken, so nothing is given back either
    assert limit.remaining("k") == 0
