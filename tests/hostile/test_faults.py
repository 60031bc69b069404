"""Hostile input and faults: every bad file quarantined with its real reason, nothing good lost,
no secret or injected SQL anywhere, parsing bounded in time and memory."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from lexkb import Index
from lexkb.core.store import root_lock
from lexkb.core.store import snapshot as snap
from pipelines.in_process import NothingPublished, run_build
from tests.conftest import CORPUS, REPO
from tests.support import hostile
from transforms.reading.file_limits import ParseLimits
from transforms.reading.isolation import parse_all
from transforms.reading.source_files import discover

# Module fixtures that build: the tests taking them are in the build tier (tests/conftest.py).
BUILDING_FIXTURES = {"hostile_build"}

FAKE_KEY = "pa-FAKEKEY-0123456789-must-never-be-written"


@pytest.fixture(scope="session")
def hostile_build(tmp_path_factory):
    """The hostile folder built into a root whose path would close a SQL string, with a fake
    Voyage key in the environment and a persistent Dagster instance (so its storage and logs
    exist to be searched)."""
    base = tmp_path_factory.mktemp("hostile")
    folder = hostile.make(base / "corpus", base / "outside")
    root = base / "in'j ect')); COPY (SELECT 1) TO 'pwned.csv'; --" / "root"
    home = base / "dagster_home"
    home.mkdir()
    saved = {name: os.environ.get(name) for name in ("VOYAGE_API_KEY", "DAGSTER_HOME")}
    os.environ.update(VOYAGE_API_KEY=FAKE_KEY, DAGSTER_HOME=str(home))
    try:
        import dagster as dg

        with dg.DagsterInstance.get() as instance:
            report = run_build([folder], root, instance=instance, embedder="none")
        index = Index.open(root)
        searches = {s: index.search(s, k=3) for s in [*hostile.GOOD_SENTENCES.values()]}
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return {"report": report, "root": root, "home": home, "base": base, "searches": searches}


def test_every_bad_file_is_quarantined_with_its_real_reason(hostile_build):
    index = Index.open(hostile_build["root"])
    quarantine = pl.read_parquet(index.snapshot.table_path("quarantine"))
    kinds = dict(zip(quarantine["source_name"], quarantine["kind"], strict=True))
    expected = {name: kind for name, kind in hostile.EXPECTED.items() if kind is not None}
    assert kinds == expected
    # Reasons a person can act on, each naming the fault.
    reasons = dict(zip(quarantine["source_name"], quarantine["reason"], strict=True))
    assert reasons["encrypted.pdf"] == "encrypted PDF: a password is needed"
    assert reasons["zip-named.pdf"] == "not a PDF (starts with PK: a ZIP or Office file)"
    assert reasons["html-named.pdf"].startswith("not a PDF (starts with <!DOCTYPE html")
    assert "no text layer" in reasons["scanned.pdf"]
    assert reasons["bomb.docx"].startswith("DOCX expands past 100 MB")
    assert "outside the source folder" in reasons["environ.txt"]
    assert len(set(reasons.values())) >= len(reasons) - 3  # not one reason for everything


def test_good_and_odd_documents_lose_no_sentence(hostile_build):
    index = Index.open(hostile_build["root"])
    for sentence in [*hostile.GOOD_SENTENCES.values(), *hostile.ODD_SENTENCES.values()]:
        hits = index.search(sentence, k=3, mode="keyword")
        assert any(sentence in " ".join(hit.text.split()) for hit in hits), sentence


def test_copies_are_indexed_once_and_unsupported_files_listed(hostile_build):
    report = hostile_build["report"]
    index = Index.open(hostile_build["root"])
    documents = {d["document_key"]: d for d in index.documents()}
    assert "copy-of-good-rulebook" not in documents
    assert documents["good-rulebook"]["duplicate_sources"] == ["copy-of-good-rulebook.txt"]
    assert report.ignored == {
        "archive.zip": "unsupported type .zip",
        "picture.png": "unsupported type .png",
    }
    # The ten-megabyte-style single line is cut into paragraphs, each within bounds.
    lengths = [
        len(h.text)
        for h in index.search("ledger entry client date transfer", k=50, mode="keyword")
        if h.document_key == "long-line"
    ]
    assert lengths and max(lengths) <= 4000


def test_no_secret_and_no_injected_sql_anywhere(hostile_build):
    base = hostile_build["base"]
    leaked = []
    for folder in (hostile_build["root"], hostile_build["home"]):
        for path in folder.rglob("*"):
            if path.is_file() and not path.is_symlink():
                data = path.read_bytes()
                if FAKE_KEY.encode() in data or b"not-for-the-index" in data:
                    leaked.append(str(path))
    assert leaked == []
    # The root's path closed a quote; dbt ran on it and wrote no file of the "injected" SQL.
    assert not list(base.rglob("pwned.csv")) and not Path("pwned.csv").exists()
    assert (hostile_build["root"] / "work" / "models.duckdb").is_file()


def test_parsing_is_bounded_in_time_and_memory(tmp_path):
    sources = discover([CORPUS / "lsa-230-audit-documentation.pdf"])
    slow = parse_all(
        [(sources[0], tmp_path / "a.parquet")], ParseLimits(timeout_seconds=0.001, workers=1)
    )
    assert slow[0].error is not None and slow[0].error.kind == "timeout"
    assert "longer than 0.001 s" in slow[0].error.reason
    hungry = parse_all([(sources[0], tmp_path / "b.parquet")], ParseLimits(memory_mb=1, workers=1))
    assert hungry[0].error is not None and hungry[0].error.kind == "memory"
    fine = parse_all([(sources[0], tmp_path / "c.parquet")], ParseLimits(workers=1))
    assert fine[0].error is None and (tmp_path / "c.parquet").is_file()


def test_files_that_change_or_vanish_during_the_build(tmp_path):
    path = tmp_path / "rules.txt"
    path.write_text("1.1 A firm must keep records.\n", encoding="utf-8")
    source = discover([path])[0]
    path.write_text("1.1 A firm must keep records for ten years.\n", encoding="utf-8")
    changed = parse_all([(source, tmp_path / "x.parquet")], ParseLimits(workers=1))[0]
    assert changed.error.kind == "changed"
    path.unlink()
    vanished = parse_all([(source, tmp_path / "y.parquet")], ParseLimits(workers=1))[0]
    assert vanished.error.kind == "vanished"


@pytest.mark.build
def test_a_build_whose_every_file_fails_publishes_nothing(tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "a.pdf").write_bytes(b"not a pdf at all")
    (folder / "b.json").write_text("{oops", encoding="utf-8")
    with pytest.raises(NothingPublished) as caught:
        run_build([folder], tmp_path / "root", embedder="none")
    assert "a.pdf: not a PDF" in str(caught.value) and "b.json: invalid JSON" in str(caught.value)
    assert not (tmp_path / "root" / "CURRENT").exists()


HOLDER = """
import sys, time
from lexkb.core.store import root_lock
with root_lock.hold(sys.argv[1], purpose="test holder"):
    print("HELD", flush=True)
    time.sleep(60)
"""


def test_one_writer_per_root_and_a_killed_holder_is_taken_over(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE, env=env
    )
    try:
        assert child.stdout.readline().strip() == b"HELD"
        started = time.monotonic()
        with pytest.raises(root_lock.RootBusy) as caught, root_lock.hold(tmp_path, 0.3):
            pass
        assert f"pid {child.pid}" in str(caught.value) and "test holder" in str(caught.value)
        assert time.monotonic() - started >= 0.3  # it waited before giving up
    finally:
        child.kill()
        child.wait()
    with root_lock.hold(tmp_path, 5):  # the kernel dropped the dead holder's lock
        assert root_lock.holder(tmp_path)["pid"] == os.getpid()
        with root_lock.hold(tmp_path):  # re-entrant in the holding process
            pass


def test_a_build_fails_cleanly_when_another_holds_the_root(tmp_path):
    with root_lock.hold(tmp_path / "root"):
        pass
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path / "root")], stdout=subprocess.PIPE, env=env
    )
    try:
        assert child.stdout.readline().strip() == b"HELD"
        with pytest.raises(root_lock.RootBusy):
            run_build([CORPUS], tmp_path / "root", wait_seconds=0.2)
    finally:
        child.kill()
        child.wait()
    assert not (tmp_path / "root" / "CURRENT").exists()
    with pytest.raises(snap.SnapshotError):
        snap.load(tmp_path / "root")
