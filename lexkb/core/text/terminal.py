"""Text on its way to a terminal. Document text and what services send back may hold control
characters (escape sequences that move the cursor, recolour or retitle the terminal); both the
query commands and the build's report print through `safe`."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def safe(text: str) -> str:
    """`text` with every control character but tab and newline shown as a visible code."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
