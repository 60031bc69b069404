"""The OpenAPI document at /api/openapi.json: FastAPI's description of the routes and their
request bodies, with each response described by the JSON Schema that the CLI's `--json` and the
MCP tools are tested against (lexkb/schemas), so the API cannot document one shape and send
another (tests/service/test_serve_api.py validates every response against it).

The schema files refer to each other by file name ("hit.json", "ask.json#/$defs/..."); here each
becomes a component and each reference a pointer to it."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"
# (method, path) -> the schema of its 200 response: "file" or "file#/$defs/name".
RESPONSES = {
    ("post", "/api/search"): "search",
    ("get", "/api/get"): "get",
    ("post", "/api/hop"): "serve#/$defs/hop",
    ("get", "/api/documents"): "serve#/$defs/documents",
    ("get", "/api/documents/{document}/tree"): "export",
    ("get", "/api/snapshots"): "serve#/$defs/snapshots",
    ("get", "/api/snapshots/diff"): "snapshots#/$defs/diff",
    ("post", "/api/ask"): "serve#/$defs/turn",
    ("post", "/api/conversations"): "serve#/$defs/conversation",
    ("get", "/api/conversations"): "serve#/$defs/conversations",
    ("get", "/api/conversations/{conversation_id}"): "serve#/$defs/conversation",
    ("delete", "/api/conversations/{conversation_id}"): "serve#/$defs/deleted",
    ("post", "/api/conversations/{conversation_id}/ask"): "serve#/$defs/turn",
    ("delete", "/api/answers/{answer_id}"): "serve#/$defs/deleted",
    ("post", "/api/feedback"): "serve#/$defs/feedback",
    ("post", "/api/verify/citations"): "verify-citations",
    ("post", "/api/verify/entities"): "verify-entities",
    ("get", "/api/me"): "serve#/$defs/me",
    ("get", "/api/admin/feedback"): "serve#/$defs/feedback_list",
    ("get", "/api/admin/answers"): "serve#/$defs/traces",
}
REFUSALS = {
    "400": "a bad argument",
    "401": "no API key, or one that is not valid",
    "403": "an admin route, or a browser origin not allowed",
    "404": "not found, or another key's",
    "413": "the body is too large",
    "422": "a body or parameter that does not fit its type",
    "409": "past what a key may keep (conversations): delete some first",
    "429": "past the ask limit, or the key's costly work in progress (Retry-After says when "
    "to retry)",
    "500": "an internal error (the server's log says what)",
    "503": "the store cannot be reached now (Retry-After says when to retry)",
}


def pointer(reference: str, within: str) -> str:
    """A reference of the schema files as an OpenAPI pointer: "hit.json" ->
    "#/components/schemas/hit", "#/$defs/x" in file `within` -> ".../within/$defs/x"."""
    target, _, fragment = reference.partition("#")
    name = target.removesuffix(".json") if target else within
    return f"#/components/schemas/{name}{fragment}"


def _rewritten(node: Any, within: str) -> Any:
    if isinstance(node, dict):
        return {
            key: pointer(value, within) if key == "$ref" else _rewritten(value, within)
            for key, value in node.items()
            if key not in ("$id", "$schema")
        }
    if isinstance(node, list):
        return [_rewritten(item, within) for item in node]
    return node


@cache
def components() -> dict[str, Any]:
    """Every schema file as a component named by its file's stem."""
    found = {}
    for path in sorted(SCHEMAS.glob("*.json")):
        found[path.stem] = _rewritten(json.loads(path.read_text(encoding="utf-8")), path.stem)
    return found


def _response(schema: str, description: str) -> dict:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": pointer(schema, "")}}},
    }


def document(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document, made once per app."""
    if app.openapi_schema:
        return app.openapi_schema
    spec = get_openapi(title=app.title, version=app.version, summary=app.summary, routes=app.routes)
    schemas = spec.setdefault("components", {}).setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    schemas.update(components())
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            if (method, path) in RESPONSES:
                described = responses.get("200", {}).get("description", "")
                responses["200"] = _response(RESPONSES[(method, path)], described or "OK")
            for status, meaning in REFUSALS.items():
                responses[status] = _response("serve#/$defs/error", meaning)
    app.openapi_schema = spec
    return spec
