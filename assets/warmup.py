"""The build's heavy libraries, imported in a background thread while the build waits.

Great Expectations (about 8 s to import), dbt (about 3 s) and onnxruntime are needed only after
parsing, and parsing runs in worker processes while this process mostly waits for them. A cold
`lexkb build` starts importing them at once, so by the time their assets run they are loaded,
and starts the local embedder's session (0.8 s), which its later instances share.
Great Expectations is skipped when the checks run in their own worker (transforms.publishing.checks_worker),
and dbt when it runs in its own (transforms.publishing.dbt_runner).
An import that fails here fails again, with its real error, where the asset imports it.
onnxruntime is loaded through lexkb.core.offline like everywhere else in lexkb: this is usually
the build's first load of it, and an `import onnxruntime` of its own here would come before
ORT_DISABLE_TELEMETRY is set, so that every build wrote onnxruntime's telemetry under
~/.cache/Microsoft/ (issue 57).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import threading
from collections.abc import Callable

from lexkb.core import offline
from transforms.publishing import checks_worker, dbt_runner

LATE_IMPORTS = ("great_expectations", "dbt.cli.main", "dbt.contracts.graph.manifest", "onnxruntime")
# Modules loaded by a function of lexkb's rather than imported as they are.
LOADERS: dict[str, Callable[[], object]] = {"onnxruntime": offline.onnxruntime}


def _warm(embedder: Callable[[], object]) -> None:
    _import_all()
    with contextlib.suppress(Exception):  # reported where the embeddings are made
        warm = getattr(embedder(), "warm", None)  # what has a session to start (the local model)
        if warm is not None:
            warm()


def _import_all() -> None:
    for name in LATE_IMPORTS:
        if name == "great_expectations" and checks_worker.started():
            continue  # the checks worker imports it, in its own process
        if name.startswith("dbt.") and dbt_runner.worker.started():
            continue
        try:
            LOADERS.get(name, functools.partial(importlib.import_module, name))()
        except Exception:  # noqa: BLE001 - reported where the asset imports it
            return


def start(embedder: Callable[[], object]) -> None:
    """`embedder` makes the build's embedder (assets.resources.EmbedderSettings.build)."""
    threading.Thread(target=_warm, args=(embedder,), name="lexkb-warmup", daemon=True).start()
