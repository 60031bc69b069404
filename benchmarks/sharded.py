"""A sharded snapshot against the classic one of the same build: same answers, open cost.

    .venv/bin/python -m benchmarks.sharded --root benchmarks/out/obliqa/index --parts 8 \\
        --questions 600 [--data ../shared/data/obliqa]

With `--parted PARTED_ROOT` (a build of the same sources by `lexkb build --parts N`), compares
that partitioned build's snapshot with the classic one instead: the whole path, from parts to
merge to shards, against the one-process build.

Otherwise splits the classic build staged at ROOT/work/tables into `--parts` runs of whole documents of
about equal chunk counts (transforms.parts.shard_files.split), publishes them as a sharded snapshot into a
temporary root, opens both, and runs the first `--questions` ObliQA dev questions in keyword,
vector and hybrid mode through each: how many top-10 lists are identical (ids and order) and
the largest score difference. Open time and resident memory are each measured in a fresh
process (opening, then the same 20 hybrid searches, so the vectors a search touches count).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

from evaluation_data.obliqa import load_questions

REPO = Path(__file__).resolve().parent.parent
MODES = ("keyword", "vector", "hybrid")
K = 10

MEASURE = """
import json, resource, sys, time
from lexkb import Index
started = time.perf_counter()
index = Index.open(sys.argv[1])
opened = time.perf_counter() - started
rss_open = int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
for question in json.loads(sys.argv[2]):
    index.search(question, k=10)
rss = int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
print(json.dumps({"open_s": round(opened, 3), "rss_open_mib": round(rss_open),
                  "rss_after_20_searches_mib": round(rss),
                  "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))
"""


def document_runs(chunks: pl.DataFrame, documents: pl.DataFrame, parts: int) -> list[list[str]]:
    """Documents in row order, cut into `parts` runs of about equal chunk counts; documents
    without chunks join the last run."""
    counts = chunks.group_by("document_id", maintain_order=True).len()
    target = chunks.height / parts
    runs: list[list[str]] = [[]]
    held = 0
    for doc, n in counts.rows():
        if held >= target * len(runs) and len(runs) < parts:
            runs.append([])
        runs[-1].append(doc)
        held += n
    runs[-1] += [d for d in documents["document_id"] if d not in set(counts["document_id"])]
    return runs


def compare(classic, sharded, questions: list[str]) -> dict:
    """Per mode: identical top-10 lists and the largest score difference."""
    result = {}
    for mode in MODES:
        same, largest = 0, 0.0
        for question in questions:
            a = classic.search(question, k=K, mode=mode).hits
            b = sharded.search(question, k=K, mode=mode).hits
            same += [h.chunk_id for h in a] == [h.chunk_id for h in b]
            if len(a) == len(b):
                diffs = [abs(x.score - y.score) for x, y in zip(a, b, strict=True)]
                largest = max([largest, *diffs])
        result[mode] = {"identical_top10": f"{same}/{len(questions)}", "max_score_diff": largest}
    return result


def measure_open(location: Path, questions: list[str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(location), json.dumps(questions[:20])],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, required=True, help="a classic build's index root")
    parser.add_argument("--parts", type=int, default=8)
    parser.add_argument(
        "--parted", type=Path, help="a partitioned build of the same sources, to compare instead"
    )
    parser.add_argument("--questions", type=int, default=600)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "obliqa")
    args = parser.parse_args()

    from lexkb import Index
    from transforms.parts.shard_files import split
    from transforms.publishing import staging
    from transforms.publishing.publish import publish_sharded

    questions = [q["Question"] for q in load_questions(args.data)[: args.questions]]
    if args.parted is not None:
        classic, parted = Index.open(args.root), Index.open(args.parted)
        assert classic.tables.chunks["chunk_id"].equals(parted.tables.chunks["chunk_id"])
        report = {
            "chunks": len(classic),
            "shards": len(parted.snapshot.shards),
            "questions": len(questions),
            "same_edges": classic.tables.edges.equals(parted.tables.edges),
            "same_documents": classic.tables.documents.equals(parted.tables.documents),
            "answers": compare(classic, parted, questions),
            "classic_open": measure_open(args.root, questions),
            "sharded_open": measure_open(args.parted, questions),
        }
        print(json.dumps(report, indent=2))
        return
    tables, settings, sources = staging.for_publishing(args.root / "work" / staging.TABLE_DIR)
    with tempfile.TemporaryDirectory(prefix="sharded-") as scratch:
        scratch = Path(scratch)
        started = time.perf_counter()
        runs = document_runs(tables["chunks"], tables["documents"], args.parts)
        part_dirs, global_tables, sharded_settings = split(
            tables, settings, runs, scratch / "parts"
        )
        split_s = time.perf_counter() - started
        started = time.perf_counter()
        published = publish_sharded(
            scratch / "root", part_dirs, global_tables, sharded_settings, sources
        )
        publish_s = time.perf_counter() - started
        classic, sharded = Index.open(args.root), Index.open(scratch / "root")
        assert classic.tables.chunks["chunk_id"].equals(sharded.tables.chunks["chunk_id"])
        report = {
            "chunks": len(classic),
            "shards": len(sharded.snapshot.shards),
            "questions": len(questions),
            "split_s": round(split_s, 2),
            "publish_sharded_s": round(publish_s, 2),
            "snapshot": published.version,
            "answers": compare(classic, sharded, questions),
            "classic_open": measure_open(args.root, questions),
            "sharded_open": measure_open(scratch / "root", questions),
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
