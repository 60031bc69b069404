"""The OpenAPI document at /api/v1/openapi.json: FastAPI's description of the routes and their
request bodies, the key they take (`securitySchemes`), and each response described by the JSON
Schema that the CLI's `--json` and the MCP tools are tested against (lexkb/schemas), so the API
cannot document one shape and send another (tests/service/test_serve_api.py validates every
response against it).

The schema files refer to each other by file name ("hit.json", "ask.json#/$defs/..."); here each
becomes a component and each reference a pointer to it."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

import lexkb
from lexkb_service.mcp.access import Access
from lexkb_service.serve.access_rules import declarations

# The schemas are the query library's (its `--json` outputs), carried in its package.
SCHEMAS = Path(lexkb.__file__).resolve().parent / "schemas"
# (method, path) -> the schema of its 200 response: "file" or "file#/$defs/name".
RESPONSES = {
    ("post", "/api/v1/search"): "search",
    ("get", "/api/v1/get"): "get",
    ("post", "/api/v1/hop"): "serve#/$defs/hop",
    ("get", "/api/v1/documents"): "api-v1#/$defs/document_page",
    ("get", "/api/v1/documents/{document}/tree"): "export",
    ("get", "/api/v1/snapshots"): "api-v1#/$defs/snapshot_page",
    ("get", "/api/v1/snapshots/diff"): "api-v1#/$defs/diff",
    ("get", "/api/v1/snapshots/diff/{part}"): "api-v1#/$defs/diff_page",
    ("get", "/api/v1/answers/{answer_id}"): "api-v1#/$defs/turn",
    ("delete", "/api/v1/answers/{answer_id}"): "serve#/$defs/deleted",
    ("get", "/api/v1/conversations"): "api-v1#/$defs/conversation_page",
    ("get", "/api/v1/conversations/{conversation_id}"): "api-v1#/$defs/conversation",
    ("delete", "/api/v1/conversations/{conversation_id}"): "serve#/$defs/deleted",
    ("get", "/api/v1/conversations/{conversation_id}/turns"): "api-v1#/$defs/turn_page",
    ("post", "/api/v1/feedback"): "api-v1#/$defs/feedback",
    ("get", "/api/v1/feedback"): "api-v1#/$defs/feedback_page",
    ("get", "/api/v1/feedback/{feedback_id}"): "api-v1#/$defs/feedback",
    ("post", "/api/v1/verify/citations"): "verify-citations",
    ("post", "/api/v1/verify/entities"): "verify-entities",
    ("get", "/api/v1/me"): "serve#/$defs/me",
    ("get", "/api/v1/admin/feedback"): "api-v1#/$defs/feedback_page",
    ("get", "/api/v1/admin/answers"): "api-v1#/$defs/trace_page",
}
# What is made is answered 201 with its Location: (method, path) -> the schema of its body.
CREATED = {
    ("post", "/api/v1/ask"): "api-v1#/$defs/turn",
    ("post", "/api/v1/conversations/{conversation_id}/ask"): "api-v1#/$defs/turn",
    ("post", "/api/v1/conversations"): "api-v1#/$defs/conversation",
    ("post", "/api/v1/feedback"): "api-v1#/$defs/feedback",
}
# 404s with a body of their own: a reference that names nothing, or units of several documents
# (ambiguous, the candidates in `alternatives`), to `get` and `hop` alike.
NOT_FOUND = {
    ("get", "/api/v1/get"): "api-v1#/$defs/unknown_reference",
    ("post", "/api/v1/hop"): "api-v1#/$defs/unknown_reference",
}
SECURITY = {
    "apiKey": {
        "type": "http",
        "scheme": "bearer",
        "description": "an API key (lk_...) from `lexkb serve keys add NAME`. On a loopback "
        "address without --require-keys, a request without one is the local user.",
    }
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


def _response(schema: str, description: str, **headers: str) -> dict[str, Any]:
    described = {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": pointer(schema, "")}}},
    }
    if headers:
        described["headers"] = {
            name: {"description": meaning, "schema": {"type": "string"}}
            for name, meaning in headers.items()
        }
    return described


def _described(method: str, path: str, operation: dict[str, Any]) -> None:
    """The replies of one operation: each success with the schema its body follows, each
    refusal as an error."""
    responses = operation.setdefault("responses", {})
    if (method, path) in RESPONSES:
        described = responses.get("200", {}).get("description", "")
        responses["200"] = _response(RESPONSES[(method, path)], described or "OK")
    if (method, path) in CREATED:
        responses["201"] = _response(
            CREATED[(method, path)], "made", Location="where what was made is read"
        )
    for status, meaning in REFUSALS.items():
        responses[status] = _response("serve#/$defs/error", meaning)
    if (method, path) in NOT_FOUND:
        responses["404"] = _response(
            NOT_FOUND[(method, path)], "the reference names nothing, or several documents' units"
        )


def _declared_access(app: FastAPI) -> dict[tuple[str, str], Access]:
    """(method, path) -> the access each documented route declares (access_rules): the same
    declaration the gate refuses by, so the document cannot say one thing and the gate do
    another."""
    return {
        (method.strip().lower(), path): access
        for methods, path, access in declarations(app.routes)
        for method in methods.split(",")
    }


def _secured(operation: dict[str, Any], access: Access) -> None:
    """An open operation takes no key (`security: []`, overriding the document's default); each
    operation says which of OPEN, KEY and ADMIN it needs in `x-lexkb-access`, which OpenAPI's
    security requirement cannot tell apart for one bearer scheme."""
    operation["x-lexkb-access"] = access.value
    if access is Access.OPEN:
        operation["security"] = []


def document(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document, made once per app."""
    if app.openapi_schema:
        return app.openapi_schema
    spec = get_openapi(title=app.title, version=app.version, summary=app.summary, routes=app.routes)
    schemas = spec.setdefault("components", {}).setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    schemas.update(components())
    spec["components"]["securitySchemes"] = SECURITY
    spec["security"] = [{name: []} for name in SECURITY]
    access = _declared_access(app)
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            _described(method, path, operation)
            if (method, path) in access:
                _secured(operation, access[(method, path)])
    app.openapi_schema = spec
    return spec
