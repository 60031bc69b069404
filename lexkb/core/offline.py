"""Libraries whose telemetry lexkb switches off where it first loads them, never at import time.

onnxruntime's official builds write a device id and queue usage events under
~/.cache/Microsoft/DeveloperTools/ as soon as the runtime initialises, which is its import;
`disable_telemetry_events()` comes too late for that, only ORT_DISABLE_TELEMETRY set before the
import prevents it. Every onnxruntime session lexkb makes (the local embedder, the int8 scan,
the judge models) loads the runtime through `onnxruntime()`, so the variable is set in the
process, and in those it starts, before the first import; nothing is changed by importing a
lexkb module.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import cast

ONNXRUNTIME_TELEMETRY = "ORT_DISABLE_TELEMETRY"


def onnxruntime() -> ModuleType:
    """onnxruntime with its telemetry off, also in a process that imported it before."""
    os.environ[ONNXRUNTIME_TELEMETRY] = "1"
    import onnxruntime as runtime

    runtime.disable_telemetry_events()
    return cast(ModuleType, runtime)  # onnxruntime ships no types
