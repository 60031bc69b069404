"""Python source read as a syntax tree by the tests that check the code itself.

CPython 3.11.7 keeps the AST constructor's recursion depth per interpreter, not per thread, so
an `ast.parse` that meets another thread's (a server or worker left running by an earlier test)
can fail with "AST constructor recursion depth mismatch" (fixed in 3.11.8). The source is fine;
parsing it again succeeds."""

from __future__ import annotations

import ast

ATTEMPTS = 5


def parse(source: str) -> ast.Module:
    for attempt in range(ATTEMPTS):
        try:
            return ast.parse(source)
        except SystemError:
            if attempt == ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")
