"""`lexkb serve` and `lexkb mcp`, the service's commands, through a named seam.

The query library imports nothing of the service (`lexkb_service`: MCP, the JSON API, the page
and their runtime): the service offers each command as an entry point in the group
`lexkb.service` (pyproject.toml), a function that fills in the command's parser, and this module
loads it only when that command runs. `lexkb --help` lists both commands either way. The wheel
carries the service's code, but its libraries (FastAPI, the MCP SDK, uvicorn, ...) are the extra
`serve`: where they are absent, running a service command says in one line what to install.
tests/test_layering.py keeps the arrow from pointing up again.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, entry_points, requires, version

GROUP = "lexkb.service"
EXTRA = "serve"
# Each command the service offers, with its line in `lexkb --help`: the command is listed in an
# install without the service too, so that running it can say what to install.
COMMANDS = {
    "serve": "one service on one port: the web page (/), the JSON API (/api/v1), MCP (/mcp), /metrics",
    "mcp": "serve the index's tools over MCP: stdio, or streamable HTTP",
}
INSTALL_SERVICE = (
    "the service is not installed here (this is an install of the query library alone): "
    f"install lexkb with its extra, `pip install 'lexkb[{EXTRA}]'`"
)

AddIndex = Callable[[argparse.ArgumentParser], None]
Configure = Callable[[argparse.ArgumentParser, AddIndex], None]

# A requirement's distribution name, and the marker that puts it in the extra.
_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_IN_EXTRA = re.compile(rf"""extra\s*==\s*["']{EXTRA}["']""")


def missing_libraries() -> list[str]:
    """The extra's distributions that are not installed here. Checked before the service's
    code loads: its modules import their libraries lazily, so a partial install would otherwise
    fail halfway through a command rather than before it."""
    try:
        declared = requires("lexkb") or []
    except PackageNotFoundError:  # a source tree never installed: its entry points are absent
        return []
    missing = []
    for requirement in declared:
        named = _NAME.match(requirement)
        if named and _IN_EXTRA.search(requirement.partition(";")[2]):
            try:
                version(named.group(1))
            except PackageNotFoundError:
                missing.append(named.group(1))
    return missing


def configure(name: str) -> Configure:
    """The service's function that fills in command `name`'s parser, as the installed package
    declares it; a ValueError naming what to install where the service's libraries are absent."""
    found = entry_points(group=GROUP, name=name)
    if not found:
        raise ValueError(INSTALL_SERVICE)
    if missing := missing_libraries():
        raise ValueError(f"{INSTALL_SERVICE}; missing: {', '.join(missing)}")
    try:
        command: Configure = next(iter(found)).load()
        return command
    except ModuleNotFoundError as absent:
        raise ValueError(f"{INSTALL_SERVICE}; missing: {absent.name}") from None


def add_commands(
    command: Callable[[str, str], argparse.ArgumentParser],
    with_index: AddIndex,
    running: str | None,
) -> None:
    """List the service's commands on the CLI's subparsers, and fill in the one that runs
    (`running`, the command line's first word) from the service. The others stay empty: their
    options are the service's, read only when one of them runs."""
    for name, help in COMMANDS.items():
        parser = command(name, help)
        if name == running:
            configure(name)(parser, with_index)
