"""Each tool's defaults and bounds are stated once, in its request model (lexkb.requests): the
MCP tools' published schemas, the JSON API's bodies in the OpenAPI document, the CLI's options,
`Index` and the answer tools must agree with the models, and no module may write a model's
default again as a number of its own."""

from __future__ import annotations

import argparse
import ast
import asyncio
import inspect
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from lexkb import answers
from lexkb.answers.external.web import web_search
from lexkb.cli.main import build_parser
from lexkb.index import Index
from lexkb.request_types import Relation
from lexkb.requests import BY_TOOL, Request
from lexkb_service.mcp.server import build_server
from lexkb_service.mcp.tools import TOOLS
from lexkb_service.serve import models, v1, v1_people
from lexkb_service.serve.openapi import document
from tests.support.parsing import parse

REPO = Path(__file__).resolve().parents[1]

# CLI option (command, dest) -> the tool and field whose default it takes.
CLI = {
    ("search", "k"): ("search", "limit"),
    ("search-batch", "k"): ("search", "limit"),
    ("hop", "max_hops"): ("hop", "max_hops"),
    ("hop", "decay"): ("hop", "decay"),
    ("hop", "k"): ("hop", "limit"),
    ("context", "max_tokens"): ("format_context", "max_tokens"),
    ("verify-entities", "threshold"): ("verify_entities", "threshold"),
    ("verify-citations", "threshold"): ("verify_citations", "threshold"),
    ("verify-relations", "max_hops"): ("verify_relations", "max_hops"),
    ("verify-relations", "threshold"): ("verify_relations", "threshold"),
    ("web-search", "max_results"): ("web_search", "max_results_per_query"),
    ("extract", "k"): ("extract", "limit"),
}
# The Python functions behind the tools: (function, parameter) -> tool and field.
PYTHON: dict[tuple[Callable[..., Any], str], tuple[str, str]] = {
    (Index.search, "k"): ("search", "limit"),
    (Index.hop, "max_hops"): ("hop", "max_hops"),
    (Index.hop, "decay"): ("hop", "decay"),
    (Index.hop, "k"): ("hop", "limit"),
    (answers.format_context, "max_tokens"): ("format_context", "max_tokens"),
    (answers.verify_entities, "threshold"): ("verify_entities", "threshold"),
    (answers.verify_citations, "threshold"): ("verify_citations", "threshold"),
    (answers.verify_relations, "max_hops"): ("verify_relations", "max_hops"),
    (answers.verify_relations, "threshold"): ("verify_relations", "threshold"),
    (web_search, "max_results_per_query"): ("web_search", "max_results_per_query"),
    (answers.extract, "k"): ("extract", "limit"),
}
# Names other surfaces give a field: the CLI's and Index's `k`, the CLI's `max_results`.
ALIASES = {"k": "limit", "max_results": "max_results_per_query"}


def default(tool: str, field: str) -> Any:
    return BY_TOOL[tool].model_fields[field].default


def defaults(model: type[Request]) -> dict[str, Any]:
    return {n: f.default for n, f in model.model_fields.items() if not f.is_required()}


def test_every_tool_has_a_request_model():
    assert {tool.name for tool in TOOLS} == set(BY_TOOL)
    numbers = {n for model in BY_TOOL.values() for n, v in defaults(model).items() if v}
    assert {"limit", "threshold", "max_tokens", "max_hops", "decay"} <= numbers


def test_mcp_schemas_are_the_request_models():
    listed = asyncio.run(build_server("unused", current=object()).list_tools())
    assert {tool.name for tool in listed} == set(BY_TOOL)
    for tool in listed:
        schema = BY_TOOL[tool.name].model_json_schema()
        published = tool.input_schema
        assert published["properties"] == schema.get("properties", {}), tool.name
        assert published.get("required", []) == schema.get("required", []), tool.name
        assert published.get("$defs", {}) == schema.get("$defs", {}), tool.name
    search = next(tool for tool in listed if tool.name == "search").input_schema
    assert search["properties"]["limit"]["default"] == default("search", "limit")


def test_a_tool_called_from_python_takes_the_models_defaults():
    called = {}

    class Recording:
        version = "v"

        def hop(self, start: str, **arguments: Any) -> list:
            called.update(arguments)
            return []

    hop = next(tool.function for tool in TOOLS if tool.name == "hop")
    hop(Recording(), "LSA 230 8")
    assert called == {
        "max_hops": default("hop", "max_hops"),
        "decay": default("hop", "decay"),
        "k": default("hop", "limit"),
    }


def test_the_api_bodies_are_the_request_models():
    for name in ("SearchRequest", "HopRequest", "AskRequest"):
        assert getattr(models, name) is BY_TOOL[name.removesuffix("Request").lower()]
    assert models.VerifyCitationsRequest is BY_TOOL["verify_citations"]
    assert models.VerifyEntitiesRequest is BY_TOOL["verify_entities"]
    api = FastAPI()
    for routes in (v1.router, v1_people.router):
        api.include_router(routes)
    spec = document(api)
    by_name = {model.__name__: model for model in BY_TOOL.values()}
    checked = set()
    for path in spec["paths"].values():
        for operation in path.values():
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            name = body["schema"].get("$ref", "").rsplit("/", 1)[-1] if body else ""
            if name in by_name:
                component = spec["components"]["schemas"][name]["properties"]
                published = {k: v["default"] for k, v in component.items() if "default" in v}
                stated = {k: v for k, v in defaults(by_name[name]).items() if v is not None}
                assert published == stated, name
                checked.add(name)
    assert {"SearchRequest", "HopRequest", "VerifyCitationsRequest"} <= checked


def _options(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.Action]]:
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command, sub in commands.choices.items():
        for action in sub._actions:
            yield command, action


def test_cli_defaults_are_the_request_models():
    commands = {command for command, _ in CLI}
    seen = set()
    for command, action in _options(build_parser()):
        key = (command, action.dest)
        if key in CLI:
            assert action.default == default(*CLI[key]), key
            seen.add(key)
        elif command in commands and action.dest != "help":
            # Every number an option of a tool's command defaults to is one of the model's.
            number = isinstance(action.default, int | float) and not isinstance(
                action.default, bool
            )
            assert not number, f"{key} defaults to {action.default}, not a request's default"
        if key == ("verify-relations", "relation_type"):
            assert action.default == Relation.model_fields["relation_type"].default
    assert seen == set(CLI)


@pytest.mark.parametrize(
    ("function", "name"), list(PYTHON), ids=lambda v: getattr(v, "__qualname__", v)
)
def test_index_and_answer_defaults_are_the_request_models(function, name):
    parameter = inspect.signature(function).parameters[name]
    assert parameter.default == default(*PYTHON[(function, name)])


def _numeric_defaults(tree: ast.AST) -> Iterator[tuple[str, ast.expr]]:
    """Every (name, default) a module writes: parameters' defaults, class fields' values, and
    argparse's `default=` (named by the option's last flag)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = node.args
            positional = arguments.posonlyargs + arguments.args
            pairs = zip(
                positional[len(positional) - len(arguments.defaults) :],
                arguments.defaults,
                strict=True,
            )
            keyword = zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
            for argument, value in [*pairs, *keyword]:
                if value is not None:
                    yield argument.arg, value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
            yield node.target.id, node.value
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            flags = [a.value for a in node.args if isinstance(a, ast.Constant)]
            for keyword in node.keywords:
                if keyword.arg == "default" and flags and isinstance(flags[-1], str):
                    yield flags[-1].lstrip("-").replace("-", "_"), keyword.value


def test_no_module_writes_a_models_default_again():
    stated = {
        (name, value)
        for model in BY_TOOL.values()
        for name, value in defaults(model).items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }
    assert ("threshold", 0.75) in stated
    restated = []
    for path in sorted([*(REPO / "lexkb").rglob("*.py"), *(REPO / "lexkb_service").rglob("*.py")]):
        if path.name == "defaults.py" and path.parent.name == "lexkb":
            continue  # where the numbers are written, once
        tree = parse(path.read_text(encoding="utf-8"))
        for name, node in _numeric_defaults(tree):
            literal = isinstance(node, ast.Constant) and not isinstance(node.value, bool)
            if literal and (ALIASES.get(name, name), node.value) in stated:
                restated.append(f"{path.relative_to(REPO)}:{node.lineno} {name}={node.value}")
    assert not restated, "defaults written again (use lexkb.defaults): " + ", ".join(restated)
