"""Publishing that never serves a bad index: retention, leases, rollback, diff, and SIGKILL."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from lexkb import Index
from lexkb.cli.main import main
from lexkb.core.store import index_root
from lexkb.core.store import snapshot as snap
from lexkb.core.store.diff import diff
from pipelines.in_process import run_build
from tests.conftest import REPO
from transforms.publishing.publish import publish

pytestmark = pytest.mark.build

# A child process that publishes again and again, each time with different content, until it is
# killed. It prints READY once its imports are done, so the kill lands inside publishing.
PUBLISHER = """
import json, sys
from pathlib import Path
import polars as pl
from transforms.publishing.publish import publish
tables_dir, root = Path(sys.argv[1]), Path(sys.argv[2])
settings = json.loads((tables_dir / "settings.json").read_text())
sources = settings.pop("sources")
tables = {p.stem: pl.read_parquet(p) for p in sorted(tables_dir.glob("*.parquet"))}
print("READY", flush=True)
for n in range(10_000):
    publish(root, tables, {**settings, "run": f"{sys.argv[3]}-{n}"}, sources, keep=3)
"""


def _tables(built_root: Path) -> tuple[dict[str, pl.DataFrame], dict, list[dict]]:
    tables_dir = built_root / "work" / "tables"
    settings = json.loads((tables_dir / "settings.json").read_text(encoding="utf-8"))
    sources = settings.pop("sources")
    return {p.stem: pl.read_parquet(p) for p in tables_dir.glob("*.parquet")}, settings, sources


def _publish_versions(built_root: Path, root: Path, count: int, keep: int) -> list[str]:
    tables, settings, sources = _tables(built_root)
    return [
        publish(root, tables, {**settings, "run": n}, sources, keep=keep).version
        for n in range(count)
    ]


def test_retention_keeps_the_newest_and_never_current_or_leased(built_root, tmp_path):
    root = tmp_path / "root"
    published = _publish_versions(built_root, root, 3, keep=10)
    # A service opens the oldest snapshot and keeps using it.
    reader = Index.open(root / "snapshots" / published[0])
    more = _publish_versions(built_root, root, 4, keep=2)
    kept = index_root.versions(root)
    assert kept == sorted([published[0], *more[-2:]])
    assert index_root.current_version(root) == more[-1]
    assert reader.search("client money", k=1).hits  # its files are still there
    # Once the lease is old, the next publish prunes it.
    lease = root / "leases" / published[0]
    old = time.time() - 3600
    os.utime(lease, (old, old))
    _publish_versions(built_root, root, 1, keep=2)
    assert published[0] not in index_root.versions(root)


def test_rollback_and_diff(corpus_copy, tmp_path, capsys):
    root = tmp_path / "root"
    first = run_build([corpus_copy], root).version
    text = corpus_copy / "records-retention-act.txt"
    text.write_text(text.read_text().replace("seven years", "eight years"), encoding="utf-8")
    (corpus_copy / "client-assets-faq.jsonl").unlink()
    second = run_build([corpus_copy], root).version
    change = diff(root, first, second)
    assert change.documents_removed == ["LKB-FAQ"]
    assert change.documents_changed == ["records-retention-act"]
    changed = {c.chunk: c.changes for c in change.chunks_changed}
    assert changed["records-retention-act § 103(b)"] == ['"seven" -> "eight"']
    assert len(change.chunks_removed) == 3 and not change.chunks_added
    # The FAQ's citations went with it.
    assert change.edges_removed and all("LKB-FAQ" in e for e in change.edges_removed)

    assert main(["snapshots", "rollback", first, "--index", str(root)]) == 0
    assert snap.load(root).version == first
    assert main(["snapshots", "list", "--index", str(root), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert [item["current"] for item in listed] == [True, False]
    assert main(["snapshots", "rollback", "nonexistent", "--index", str(root)]) == 2
    assert main(["snapshots", "diff", first, second, "--index", str(root)]) == 0
    assert "documents removed: 1" in capsys.readouterr().out


def test_unchanged_sources_publish_nothing_new(corpus_copy, tmp_path):
    root = tmp_path / "root"
    first = run_build([corpus_copy], root)
    second = run_build([corpus_copy], root)
    assert first.published_new and not second.published_new
    assert second.version == first.version
    assert index_root.versions(root) == [first.version]


def test_sigkill_during_publishing_never_breaks_the_previous_snapshot(built_root, tmp_path):
    root = tmp_path / "root"
    tables_dir = built_root / "work" / "tables"
    _publish_versions(built_root, root, 1, keep=3)
    rng = random.Random(20261122)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    mid_publish = advanced = 0
    for attempt in range(20):
        before = index_root.current_version(root)
        child = subprocess.Popen(
            [sys.executable, "-c", PUBLISHER, str(tables_dir), str(root), str(attempt)],
            stdout=subprocess.PIPE,
            env=env,
            cwd=REPO,
        )
        assert child.stdout.readline().strip() == b"READY"
        time.sleep(rng.uniform(0.0, 0.6))
        child.send_signal(signal.SIGKILL)
        child.wait()
        mid_publish += any(p.name.startswith(".") for p in (root / "snapshots").iterdir())
        advanced += index_root.current_version(root) != before
        # Whatever the moment, CURRENT names a complete snapshot that verifies, and every
        # listed snapshot is complete too.
        current = Index.open(root, verify=True)
        assert current.version == before or current.version in index_root.versions(root)
        for version in index_root.versions(root):
            snap.load(root / "snapshots" / version, verify=True)
    # The kills landed both inside a publish and between publishes.
    assert mid_publish > 0 and advanced > 0, (mid_publish, advanced)
    # The next build succeeds and cleans up what the killed ones left.
    published = _publish_versions(built_root, root, 1, keep=3)[0]
    assert snap.load(root, verify=True).version == published
    leftovers = [p.name for p in (root / "snapshots").iterdir() if p.name.startswith(".")]
    assert leftovers == []
    assert not list(root.glob("CURRENT.tmp-*"))


@pytest.mark.parametrize("keep", [1, 3])
def test_prune_command(built_root, tmp_path, keep, capsys):
    root = tmp_path / "root"
    _publish_versions(built_root, root, 4, keep=10)
    assert main(["snapshots", "prune", "--keep", str(keep), "--index", str(root)]) == 0
    assert len(index_root.versions(root)) == keep
    assert f"deleted {4 - keep} snapshot(s)" in capsys.readouterr().out
