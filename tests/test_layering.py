"""The house's floors (docs/architecture.md): every import points down, none runs in a circle,
no room is over MAX_LINES, and a query's walk from the CLI stays in the query module's rooms,
loading neither the build nor the service. Training, the benchmarks and the data they share are
held to their own arrows the same way.

The graph is read from the source (every `import`, also inside functions; not those under
`if TYPE_CHECKING:`, which never run), so an arrow that only a rarely used command takes is
caught too. `from package import name` points at `package.name` when that is a module."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.parsing import parse

REPO = Path(__file__).resolve().parents[1]
PACKAGES = (
    "lexkb",
    "lexkb_service",
    "transforms",
    "assets",
    "pipelines",
    "evaluation_data",
    "training",
    "benchmarks",
    "tests/support",
)
MAX_LINES = 600
# A benchmark is one measurement's script, read top to bottom as its report is; the limit holds
# the rooms of the program, the data module and training (benchmarks/citation_libraries.py,
# adapters for five outside parsers, is 698 lines).
NO_LINE_LIMIT = {"benchmarks"}

# What each floor may import. The ground floor (lexkb.core) stands on nothing of ours; the query
# module (the rest of lexkb) and transforms stand on it side by side; the service
# (lexkb_service) on the query module; assets on transforms; pipelines on assets.
ALLOWED = {
    "core": {"core"},
    "query": {"core", "query"},
    "service": {"core", "query", "service"},
    "transforms": {"core", "transforms"},
    "assets": {"core", "transforms", "assets"},
    "pipelines": {"core", "transforms", "assets", "pipelines"},
    # Outside the program. The data sets lexkb is trained and measured on are read by one
    # package that stands on nothing of ours, so training and the benchmarks read them alike;
    # training stands on lexkb (the embedder, and a contract's paragraphs as `Index` gives
    # them) and that package, never on a benchmark; the benchmarks measure everything,
    # training's models and data included, and borrow the tests' helpers (servers in child
    # processes, hostile files), nothing else of the tests.
    "evaluation_data": {"evaluation_data"},
    "training": {"core", "query", "training", "evaluation_data"},
    "tests.support": {"core", "query", "tests.support"},
    "benchmarks": {
        "core",
        "query",
        "service",
        "transforms",
        "assets",
        "pipelines",
        "evaluation_data",
        "training",
        "tests.support",
        "benchmarks",
    },
}


def floor(module: str) -> str:
    if module == "lexkb.core" or module.startswith("lexkb.core."):
        return "core"
    if module == "tests.support" or module.startswith("tests.support."):
        return "tests.support"
    top = module.split(".")[0]
    return {"lexkb": "query", "lexkb_service": "service"}.get(top, top)


# What benchmarks write (their indexes, the fresh venvs benchmarks/query_install.py makes) is
# no module of the repository's, though it lies under one of its packages.
OUTPUT = REPO / "benchmarks" / "out"


def modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            if path.is_relative_to(OUTPUT):
                continue
            parts = path.relative_to(REPO).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node but those under `if TYPE_CHECKING:`."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for child in node.orelse for n in [child, *_runtime_nodes(child)])
            continue
        yield node
        yield from _runtime_nodes(node)


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ours that `name` imports."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in _runtime_nodes(parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            targets = [
                f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def test_every_import_points_down(graph):
    upward = sorted(
        f"{a} ({floor(a)}) -> {b} ({floor(b)})"
        for a, targets in graph.items()
        for b in targets
        if floor(b) not in ALLOWED[floor(a)]
    )
    assert upward == []


def test_no_circle(graph):
    """Tarjan's strongly connected components: any of more than one module is a circle."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []

    def visit(node: str) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in order:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], order[nxt])
        if low[node] == order[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in order:
            visit(node)
    assert circles == []


def test_the_graph_sees_an_upward_arrow(tmp_path):
    """The reader itself: a function-level import of the pipeline from the query module is
    found, one under TYPE_CHECKING is not."""
    source = tmp_path / "probe.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from assets import index_tables\n"
        "def f():\n    from pipelines import in_process\n    from lexkb.core.store import schema\n"
    )
    known = {
        "pipelines.in_process": source,
        "lexkb.core.store.schema": source,
        "assets.index_tables": source,
    }
    found = imports("lexkb.probe", source, known)
    assert found == {"pipelines.in_process", "lexkb.core.store.schema"}


def test_the_graph_reads_training_and_the_benchmarks(graph):
    """Their arrows are in the graph the two tests above read: training's to the shared data,
    a benchmark's to another benchmark and to training."""
    assert "evaluation_data.cuad" in graph["training.cuad_examples"]
    assert "evaluation_data.questions" in graph["training.examples"]
    assert {"benchmarks.obliqa", "evaluation_data.obliqa"} <= graph["benchmarks.line_vectors"]
    assert "training.cuad_examples" in graph["benchmarks.clause_model"]
    assert "tests.support.serve_process" in graph["benchmarks.serve"]


def test_the_graph_reads_the_service(graph):
    """The service's arrows are in the graph: down to the query module, and inside itself."""
    assert "lexkb.request_types" in graph["lexkb_service.serve.api"]
    assert "lexkb_service.mcp.admission" in graph["lexkb_service.cli"]


def test_no_room_over_the_limit():
    over = {
        str(path.relative_to(REPO)): n
        for name, path in modules().items()
        if floor(name) not in NO_LINE_LIMIT
        and (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert over == {}


# The top-level modules of the build and of the service (ours and their libraries): what the
# fresh interpreters below must not hold.
BUILD = ("transforms", "assets", "pipelines", "dagster", "unstructured", "dbt")
SERVICE = (
    "lexkb_service",
    "fastapi",
    "starlette",
    "mcp",
    "uvicorn",
    "prometheus_client",
    "httptools",
    "pypdfium2",
)


def _loaded_after(code: str) -> list[str]:
    """The modules of the build and of the service, and the query module's index and answer
    tools, that a fresh interpreter holds after `code`."""
    probe = (
        f"{code}\nimport sys\nprint(sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{BUILD + SERVICE!r} or m == 'lexkb.index' or m.startswith('lexkb.answers')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    )
    return ast.literal_eval(done.stdout.strip().splitlines()[-1])


def test_the_ground_floor_loads_nothing_above_it():
    loaded = _loaded_after(
        "import lexkb.core.store.snapshot, lexkb.core.store.index_root, lexkb.core.text.refs, "
        "lexkb.core.clauses.labels, lexkb.core.embed.embedders, lexkb.core.vocabulary"
    )
    assert loaded == []


def test_the_library_loads_nothing_of_the_service():
    """A program that opens an index and asks it (the Python API, the request models, the CLI's
    parser) loads neither lexkb_service nor any library of the extra `serve`: the query-only
    install (tests/test_query_install.py) runs without them."""
    loaded = _loaded_after(
        "import lexkb, lexkb.index, lexkb.answers.ask, lexkb.requests, lexkb.cli.main\n"
        "lexkb.cli.main.build_parser()"
    )
    assert "lexkb.answers.ask" in loaded  # the probe saw the library
    assert [m for m in loaded if m.split(".")[0] != "lexkb"] == []


def test_the_build_loads_no_answer_tools():
    """transforms.structure.clauses labels contracts with the ground floor's rule, not lexkb.answers."""
    loaded = _loaded_after(
        "import transforms.structure.clauses, transforms.publishing.publish, transforms.reading.metadata"
    )
    assert [m for m in loaded if m.startswith("lexkb")] == []


def test_a_query_from_the_cli_stays_in_the_query_module(built_root):
    """search, get, hop, documents, export, snapshots list and ask, run through the CLI's main in
    one process, load nothing of the build and nothing of the service."""
    root = str(built_root)
    commands = [
        ["search", "client money", "--index", root, "-k", "2"],
        ["get", "Rule 4.3.1 of the Lexkb Rulebook", "--index", root],
        ["hop", "Rule 4.3.1 of the Lexkb Rulebook", "--index", root, "-k", "3"],
        ["documents", "--index", root],
        ["export", "LSA 230", "--index", root],
        ["snapshots", "list", "--index", root],
        ["ask", "How long must client money records be kept?", "--index", root],
    ]
    code = (
        "import contextlib, io\nfrom lexkb.cli.main import main\n"
        f"for argv in {commands!r}:\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        assert main(argv) in (0, 1), argv\n"
    )
    loaded = _loaded_after(code)
    assert {"lexkb.index", "lexkb.answers.ask"} <= set(loaded)  # the commands ran
    assert [m for m in loaded if m.split(".")[0] != "lexkb"] == []
