"""Settings come from the environment through one module, lexkb.core.environment.

Read from the source like tests/test_layering.py: any other module of the program (lexkb,
lexkb_service, transforms, assets, pipelines; not the benchmarks, training or the tests, which
are no service's settings) that reads `os.environ` or calls `os.getenv` fails here. Changing the
environment is no read of a setting and is allowed anywhere: a telemetry switch set before a
library's first import (`os.environ[NAME] = ...`, `setdefault`), variables set for one call and
put back (`update`, `pop`), and the environment copied for a child process (`{**os.environ, ...}`,
`os.environ.copy()`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.parsing import parse

REPO = Path(__file__).resolve().parents[1]
PROGRAM = ("lexkb", "lexkb_service", "transforms", "assets", "pipelines")
ENVIRONMENT_MODULE = REPO / "lexkb" / "core" / "environment.py"
# Methods of os.environ that change it or copy it for a child process.
CHANGES = {"setdefault", "update", "pop", "clear", "copy"}


def _is_os(node: ast.AST, attribute: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == attribute
        and isinstance(node.value, ast.Name)
        and node.value.id == "os"
    )


def environment_reads(source: str) -> list[int]:
    """The lines of `source` that read the environment rather than change or copy it."""
    tree = parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "os":
            if {alias.name for alias in node.names} & {"environ", "environb", "getenv", "getenvb"}:
                lines.append(node.lineno)
        elif _is_os(node, "getenv") or _is_os(node, "getenvb"):
            lines.append(node.lineno)
        elif _is_os(node, "environ") or _is_os(node, "environb"):
            parent = parents.get(node)
            changed = (
                isinstance(parent, ast.Attribute)
                and parent.attr in CHANGES
                or isinstance(parent, ast.Subscript)
                and isinstance(parent.ctx, ast.Store | ast.Del)
                or isinstance(parent, ast.Dict)
                and any(
                    key is None and value is node
                    for key, value in zip(parent.keys, parent.values, strict=True)
                )
            )
            if not changed:
                lines.append(node.lineno)
    return sorted(lines)


def test_only_the_environment_module_reads_the_environment():
    paths = [path for package in PROGRAM for path in (REPO / package).rglob("*.py")]
    assert ENVIRONMENT_MODULE in paths
    readers = {
        f"{path.relative_to(REPO)}:{line}"
        for path in paths
        if path != ENVIRONMENT_MODULE
        for line in environment_reads(path.read_text(encoding="utf-8"))
    }
    assert not readers, f"read settings through lexkb.core.environment: {sorted(readers)}"


@pytest.mark.parametrize(
    ("source", "reads"),
    [
        ("import os\nx = os.environ.get('A')", [2]),
        ("import os\nx = os.environ['A']", [2]),
        ("import os\nx = os.getenv('A', 'b')", [2]),
        ("import os\nx = 'A' in os.environ", [2]),
        ("import os\ndef f(e=os.environ): ...", [2]),
        ("from os import environ", [1]),
        ("import os\nos.environ['A'] = '1'\nos.environ.setdefault('B', '1')", []),
        ("import os\nos.environ.update(A='1')\nold = os.environ.pop('A', None)", []),
        ("import os\nenv = {**os.environ, 'A': '1'}\ncopy = os.environ.copy()", []),
    ],
)
def test_reads_are_told_from_changes(source, reads):
    assert environment_reads(source) == reads
