"""The real MCP server (`lexkb mcp`) driven by the official `mcp` client, over stdio and HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from mcp import Client, StdioServerParameters
from referencing import Registry, Resource

from tests.conftest import REPO
from tests.support.next_snapshot import root_and_grown_corpus

LEXKB = str(REPO / ".venv" / "bin" / "lexkb")
TOOLS = {
    "search", "get", "hop", "documents", "format_context", "verify_entities",
    "verify_citations", "verify_relations", "check_contradictions", "web_search",
    "ask", "evidence", "extract", "check_question", "classify", "clusters",
}  # fmt: skip
SCHEMAS = REPO / "docs" / "schemas"


def stdio(root: Path, env: dict | None = None) -> StdioServerParameters:
    environment = {k: v for k, v in os.environ.items() if k != "BRAVE_API_KEY"}
    return StdioServerParameters(
        command=LEXKB, args=["mcp", "--index", str(root)], env={**environment, **(env or {})}
    )


def validate(name: str, document: dict) -> None:
    resources = []
    for path in SCHEMAS.glob("*.json"):
        schema = json.loads(path.read_text(encoding="utf-8"))
        resources += [(schema["$id"], Resource.from_contents(schema)),
                      (path.name, Resource.from_contents(schema))]  # fmt: skip
    schema = json.loads((SCHEMAS / f"{name}.json").read_text(encoding="utf-8"))
    Draft202012Validator(schema, registry=Registry().with_resources(resources)).validate(document)


async def call(client: Client, tool: str, **arguments) -> dict:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    return result.structured_content


async def refused(client: Client, tool: str, **arguments) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    return result.content[0].text


def test_stdio_tools_answer_from_the_snapshot(built_root):
    async def session() -> None:
        async with Client(stdio(built_root)) as client:
            listed = (await client.list_tools()).tools
            assert {t.name for t in listed} == TOOLS
            for tool in listed:
                assert tool.description, tool.name
                assert tool.input_schema["type"] == "object"
            search_schema = next(t for t in listed if t.name == "search").input_schema
            assert search_schema["properties"]["query"]["maxLength"] == 2000
            assert search_schema["properties"]["limit"]["maximum"] == 100

            found = await call(client, "search", query="client money reconciliation records",
                               limit=3, filters={"document_type": "act"})  # fmt: skip
            validate("search", found)
            assert found["hits"] and all(
                h["metadata"]["document_type"] == "act" for h in found["hits"]
            )
            first = found["hits"][0]
            assert first["citation"].startswith("Records Retention Act")
            assert 0 < first["relevance"] <= 1 and first["parent_chunk_id"]

            exact = await call(client, "get", reference="Article 5(1)(e)")
            validate("get", exact)
            assert exact["match"] == "contains" and exact["found"]
            missing = await call(client, "get", reference="Article 5(3)")
            assert missing["match"] == "enclosing" and not missing["found"]
            assert "does not exist" in missing["reason"]

            hops = await call(client, "hop", start="LSA 230 8", max_hops=2)
            assert any(r["hit"]["ref"] == "A6" for r in hops["results"])
            listing = await call(client, "documents")
            assert len(listing["documents"]) == 5

            ids = [h["chunk_id"] for h in found["hits"]]
            context = await call(client, "format_context", paragraphs=ids, max_tokens=2000)
            validate("context", context)
            assert ET.fromstring(context["xml"]).find("document/paragraph") is not None
            assert context["tokens"] <= 2000

            entities = await call(client, "verify_entities", entities=["seven years"],
                                  source_ids=[first["chunk_id"]])  # fmt: skip
            validate("verify-entities", entities)
            assert entities["passed"] and entities["entities"][0]["match"] == "exact"
            cited = await call(client, "verify_citations", citations=[
                {"paragraph_id": first["chunk_id"],
                 "claim": "Records of client money reconciliations must be kept for five years"}
            ])  # fmt: skip
            validate("verify-citations", cited)
            assert cited["citations"][0]["verdict"] == "contradicted"
            related = await call(
                client,
                "verify_relations",
                relations=[{"source": "LSA 230 8", "target": "LSA 230 A6"}],
            )
            validate("verify-relations", related)
            assert related["relations"][0]["status"] == "confirmed"
            conflicts = await call(client, "check_contradictions", paragraph_ids=ids[:2],
                                   claims=["Records of client money reconciliations shall not be kept."])  # fmt: skip
            validate("contradictions", conflicts)
            assert conflicts["count"] >= 1

            answer = await call(client, "ask",
                                question="How long must client money reconciliation records be kept?")  # fmt: skip
            validate("ask", answer)
            assert answer["mode"] in ("DIRECT", "QUALIFIED") and "seven years" in answer["answer"]
            assert answer["sources"][0]["citation"].startswith("Records Retention Act")
            refusal = await call(client, "check_question", question="Should we switch banks?")
            assert not refusal["allowed"] and len(refusal["suggestions"]) == 3
            judged = await call(client, "evidence", query="speeding fines on a German autobahn")
            assert judged["mode"] == "ABSTAIN" and judged["reason"] == "out_of_scope"
            spans = await call(client, "extract", question="How long are reconciliation records kept?",
                               document="Records Retention Act", limit=1)  # fmt: skip
            assert len(spans["answers"]) == 1 and "seven years" in spans["answers"][0]["text"]
            unlabelled = await call(client, "extract", question="How long are records kept?",
                                    document="Records Retention Act", clause_type="Governing Law")  # fmt: skip
            validate("extract", unlabelled)
            assert any("is labelled 'Governing Law'" in w for w in unlabelled["warnings"])
            labelled = await call(client, "classify", document="Records Retention Act",
                                  clause_types={"retention period": "how long records must be kept"})  # fmt: skip
            assert any("seven years" in c["text"] for c in labelled["clauses"])
            assert {c["clause_type"] for c in labelled["clauses"]} == {"retention period"}
            assert labelled["methods"] == {"retention period": "zero-shot"}
            fitted = await call(client, "classify", document="Records Retention Act",
                                clause_types=["Cap On Liability", "Governing Law"])  # fmt: skip
            validate("classify", fitted)
            assert fitted["methods"] == {"Cap On Liability": "fitted", "Governing Law": "fitted"}
            topics = await call(client, "clusters")
            assert len(topics["clusters"]) >= 2
            first_topic = topics["clusters"][0]["cluster_id"]
            within = await call(client, "search", query="records", mode="keyword",
                                filters={"cluster_id": first_topic})  # fmt: skip
            assert within["hits"]
            web = await call(client, "web_search", queries=["client money rules"])
            validate("web-search", web)
            assert web["results"] == [] and "BRAVE_API_KEY" in web["warnings"][0]

            prompts = (await client.list_prompts()).prompts
            assert [p.name for p in prompts] == ["cited_answer"]
            prompt = await client.get_prompt("cited_answer", {"question": "How long?"})
            text = prompt.messages[0].content.text
            assert "search" in text and "format_context" in text and "verify_citations" in text

    asyncio.run(session())


def test_bad_arguments_are_tool_errors_and_the_server_goes_on(built_root):
    async def session() -> None:
        async with Client(stdio(built_root)) as client:
            assert "at least 1 character" in await refused(client, "search", query="")
            assert "2000" in await refused(client, "search", query="x" * 5000)
            assert "100" in await refused(client, "search", query="client", limit=10**6)
            assert "conflicting filters" in await refused(
                client, "search", query="client",
                filters={"period": "last_7_days", "date_range": {"start": "2020-01-01"}},
            )  # fmt: skip
            assert "unknown document_type 'nosuch'" in await refused(
                client, "search", query="client", filters={"document_type": "nosuch"}
            )
            assert "extra" in (await refused(
                client, "search", query="client", filters={"colour": "red"}
            )).casefold()  # fmt: skip
            assert "decay" in await refused(client, "hop", start="LSA 230 8", decay=3)
            assert "no chunk or reference" in await refused(client, "hop", start="Rule 99.9.9")
            assert "none of the paragraphs" in await refused(
                client, "format_context", paragraphs=["chk-nosuch"]
            )
            assert "200" in await refused(
                client, "verify_entities", entities=["x"] * 500, source_ids=["Article 5"]
            )
            still = await call(client, "search", query="client money", limit=1)
            assert len(still["hits"]) == 1

    asyncio.run(session())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_http_transport_serves_the_same_tools(built_root):
    port = _free_port()
    server = subprocess.Popen(
        [LEXKB, "mcp", "--index", str(built_root), "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert server.poll() is None and time.monotonic() < deadline, "server did not start"
            time.sleep(0.2)

        async def session() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                assert {t.name for t in (await client.list_tools()).tools} == TOOLS
                found = await call(client, "get", reference="Rule 4.3.1")
                assert found["match"] == "exact" and found["hit"]["ref"] == "4.3.1"
                assert "2000" in await refused(client, "search", query="x" * 3000)
                assert (await call(client, "search", query="client money", limit=2))["hits"]

        asyncio.run(session())
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def test_a_new_snapshot_is_served_without_a_restart(built_root, tmp_path):
    from pipelines.in_process import run_build

    root, corpus = root_and_grown_corpus(built_root, tmp_path)

    async def session() -> None:
        async with Client(stdio(root)) as client:
            before = await call(client, "search", query="zephyrine return", mode="keyword")
            assert before["hits"] == []
            # Off the event loop, as a build from another process would be.
            await asyncio.to_thread(run_build, [corpus], root, embedder="none")
            after = await call(client, "search", query="zephyrine return", mode="keyword")
            assert after["snapshot_version"] != before["snapshot_version"]
            assert after["hits"][0]["document_title"] == "Zephyrine Notice"

    asyncio.run(session())


@pytest.mark.parametrize("bad", ["nohost", "127.0.0.1:notaport"])
def test_http_address_must_be_host_and_port(built_root, bad):
    done = subprocess.run(
        [LEXKB, "mcp", "--index", str(built_root), "--http", bad],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "HOST:PORT" in done.stderr
