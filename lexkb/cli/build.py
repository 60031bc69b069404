"""`lexkb build`, the one command that runs the pipeline, through a named seam.

The query module imports nothing of the build (`transforms`, `assets`, `pipelines`): the build
offers its command as the entry point `build` in the group `lexkb.pipeline` (pyproject.toml),
and this module loads it by that name only when someone runs `lexkb build`. Every other command
starts without the pipeline's libraries, and a machine that only serves snapshots needs none of
them. tests/test_layering.py keeps the arrow from pointing up again.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from importlib.metadata import entry_points

GROUP = "lexkb.pipeline"
NAME = "build"


def build_command() -> Callable[[argparse.Namespace], int]:
    """The pipeline's `build` command, as the installed package declares it."""
    found = entry_points(group=GROUP, name=NAME)
    if not found:
        raise ValueError(
            f"the build is not installed here (no entry point {NAME!r} in {GROUP!r}): install "
            "lexkb with its pipeline, as the README's first command does"
        )
    return next(iter(found)).load()


def cmd_build(args: argparse.Namespace) -> int:
    return build_command()(args)
