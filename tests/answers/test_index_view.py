"""The seam between the answer tools and the index: `IndexView` lists what lexkb/answers reads of
an Index, Index has each member with a signature the tools can call, and the tools read nothing
else. Python checks none of this when it runs, so it is checked here from the source."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from lexkb.answers.index_view import IndexView
from lexkb.index import Index
from tests.support.parsing import parse

ANSWERS = Path(__file__).resolve().parents[2] / "lexkb" / "answers"
P = inspect.Parameter


def _members() -> dict[str, object]:
    """The Protocol's own members: its methods and properties, then its data attributes."""
    found = {n: v for n, v in vars(IndexView).items() if not n.startswith("_")}
    found.update({n: None for n in IndexView.__annotations__})
    return found


def _instance_attributes() -> set[str]:
    """What Index.__init__ sets on `self`."""
    init = parse(inspect.getsource(Index.__init__).strip().replace("\n    ", "\n"))
    return {
        t.attr
        for node in ast.walk(init)
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"
    }


def _compatible(wanted: inspect.Signature, offered: inspect.Signature) -> list[str]:
    """Why a call the Protocol allows would fail on Index (empty when none would)."""
    problems = []
    have = offered.parameters
    positional = [
        p for p in have.values() if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)
    ]
    for i, (name, p) in enumerate(wanted.parameters.items()):
        q = have.get(name)
        if q is None:
            problems.append(f"no parameter {name!r}")
            continue
        if p.kind == P.POSITIONAL_OR_KEYWORD and (i >= len(positional) or positional[i] is not q):
            problems.append(f"{name!r} is not positional number {i}")
        if p.kind == P.KEYWORD_ONLY and q.kind not in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY):
            problems.append(f"{name!r} cannot be passed by keyword")
        if p.default is not P.empty and q.default is P.empty:
            problems.append(f"{name!r} has no default on Index")
    for name, q in have.items():
        if name not in wanted.parameters and q.default is P.empty and q.kind in (
            P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY
        ):  # fmt: skip
            problems.append(f"Index requires {name!r}, which the Protocol never passes")
    return problems


def test_index_has_every_member_of_the_view_with_a_compatible_signature():
    members = _members()
    attributes = _instance_attributes()
    assert {"search", "limits", "version", "term_idf"} <= members.keys()
    problems = {}
    for name, member in members.items():
        offered = inspect.getattr_static(Index, name, None)
        if member is None:
            if name not in attributes and not isinstance(offered, property):
                problems[name] = "Index has no such attribute"
        elif isinstance(member, property):
            if not isinstance(offered, property):
                problems[name] = "not a property of Index"
        elif not callable(offered) or isinstance(offered, property):
            problems[name] = "not a method of Index"
        elif found := _compatible(inspect.signature(member), inspect.signature(offered)):
            problems[name] = found
    assert problems == {}


def test_the_signature_check_catches_a_mismatch():
    def wanted(self, query: str, *, k: int = 1) -> None: ...
    def renamed(self, text: str, k: int = 1) -> None: ...
    def demanding(self, query: str, k: int, today: object) -> None: ...

    assert _compatible(inspect.signature(wanted), inspect.signature(wanted)) == []
    assert "no parameter 'query'" in _compatible(
        inspect.signature(wanted), inspect.signature(renamed)
    )
    assert len(_compatible(inspect.signature(wanted), inspect.signature(demanding))) == 2


def _sources() -> list[tuple[str, ast.Module]]:
    return [
        (str(p.relative_to(ANSWERS)), parse(p.read_text())) for p in sorted(ANSWERS.rglob("*.py"))
    ]


def test_the_answer_tools_read_only_what_the_view_lists():
    members = _members()
    used: dict[str, set[str]] = {}
    for name, tree in _sources():
        for node in ast.walk(tree):
            value = node.value if isinstance(node, ast.Attribute) else None
            if isinstance(value, ast.Name) and value.id == "index":
                used.setdefault(node.attr, set()).add(name)
    assert len(used) >= 15, "the scan found the tools' reads of the index"
    assert {n: files for n, files in used.items() if n not in members} == {}
    assert set(members) - set(used) == set(), "the view lists only what the tools use"


def test_every_index_parameter_of_the_answer_tools_is_typed_as_the_view():
    untyped = []
    for name, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                a = node.args
                for arg in a.posonlyargs + a.args + a.kwonlyargs:
                    annotation = ast.unparse(arg.annotation) if arg.annotation else None
                    if arg.arg == "index" and annotation != "IndexView":
                        untyped.append(f"{name}:{node.lineno} {node.name} ({annotation})")
    assert untyped == []
