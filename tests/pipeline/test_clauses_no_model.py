"""`--embedder none` means no model: a keyword-only build labels contract clauses by the names
the paragraphs say, starts no onnxruntime session for it, and its `clauses` table says so.

The build runs in a fresh process whose model loader refuses and counts every call, so a session
an earlier test started in this process cannot hide one the build would start."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from lexkb import Index
from lexkb.core.clauses.labels import NO_EMBEDDER

pytestmark = pytest.mark.build

REPO = Path(__file__).resolve().parents[2]

CONTRACT = """SERVICES AGREEMENT

This Services Agreement (the "Agreement") is made as of March 1, 2024 by and between Northwind Traders LLC ("Provider") and Contoso Retail Inc. ("Client").

1. SERVICES

1.1 Provider shall perform the services described in Exhibit A with reasonable skill and care.

2. PAYMENT

2.1 Client shall pay each invoice within thirty (30) days of receipt.

3. ASSIGNMENT

3.1 Neither party may assign this Agreement without the prior written consent of the other party.

4. GOVERNING LAW

4.1 This Agreement shall be governed by the laws of the State of Delaware.
"""

_BUILD = """
import json, sys
from lexkb.core.embed import embedders

started = []

def refuse(*args, **kwargs):
    started.append(repr(args))
    raise RuntimeError("the build loaded an embedding model")

embedders._runtime = refuse
from pipelines.in_process import run_build

run_build([sys.argv[1]], sys.argv[2], embedder="none")
print(json.dumps({"sessions": started}))
"""


def test_a_keyword_only_build_labels_clauses_without_a_model(tmp_path):
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "services-agreement.txt").write_text(CONTRACT, encoding="utf-8")
    root = tmp_path / "root"
    done = subprocess.run(
        [sys.executable, "-c", _BUILD, str(sources), str(root)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {"sessions": []}

    index = Index.open(root)
    clauses = pl.read_parquet(index.snapshot.table_path("clauses"))
    assert clauses.height > 0
    assert set(clauses["method"]) == {NO_EMBEDDER}
    # The labels are the names the paragraphs say, and the clause_type filter reads them.
    law = index.search(
        "laws of which state", mode="keyword", filters={"clause_type": "governing law"}
    )
    assert law.hits and all("governed by the laws" in h.text for h in law)
    assigned = index.search("assign consent", mode="keyword", filters={"clause_type": "assignment"})
    assert assigned.hits and all("assign" in h.text.lower() for h in assigned)
    # A paragraph that says no label's name takes none.
    services = next(
        h.chunk_id
        for h in index.search("reasonable skill and care", mode="keyword")
        if "skill" in h.text
    )
    assert services not in set(clauses["chunk_id"])
