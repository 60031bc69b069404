"""`lexkb build`, the one command that runs the pipeline, through a named seam.

The query module imports nothing of the build (`transforms`, `assets`, `pipelines`): the build
offers its command as the entry point `build` in the group `lexkb.pipeline` (pyproject.toml),
and this module loads it by that name only when someone runs `lexkb build`. Every other command
starts without the pipeline's libraries, and a machine that only serves snapshots needs none of
them: the wheel carries the query module alone (pyproject.toml). tests/test_layering.py keeps
the arrow from pointing up again.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from importlib.metadata import entry_points

GROUP = "lexkb.pipeline"
NAME = "build"


# What to do where the build is absent: a query-only install carries the query module alone.
INSTALL_BUILD = (
    "the build is not installed here (this is a query-only install of lexkb): build from a "
    "lexkb checkout with its extra, `pip install -e '.[build]'` (or the README's first command)"
)


def build_command() -> Callable[[argparse.Namespace], int]:
    """The pipeline's `build` command, as the installed package declares it. The entry point
    is declared by every install, but its code (the repository's pipelines/) and libraries
    (the extra `build`) are only where the build was installed."""
    found = entry_points(group=GROUP, name=NAME)
    if not found:
        raise ValueError(INSTALL_BUILD)
    try:
        command: Callable[[argparse.Namespace], int] = next(iter(found)).load()
        return command
    except ModuleNotFoundError as missing:
        raise ValueError(f"{INSTALL_BUILD}; missing: {missing.name}") from None


def cmd_build(args: argparse.Namespace) -> int:
    return build_command()(args)
