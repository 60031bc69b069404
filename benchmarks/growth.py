"""The growth model: build time, peak memory, snapshot size, open time and query latency at
several multiples of ObliQA, each a real build, with the fitted growth of each.

The corpus at factor F is the 40 ObliQA documents and F - 1 copies of them with distinct
document ids, names and short names. The passages' text and numbering are unchanged, so every
text the model would read (paragraphs, lines, heading paths) is one a 1x build embedded, and
the embedding cache seeded from it (`--seed`) serves every vector: the builds measure
everything but the model, whose cost grows with the number
of new texts at the rate `benchmarks/speed.py` reports. Each build runs in its own process
under /usr/bin/time; open and queries run in a fresh process too.

    .venv/bin/python -m benchmarks.growth --factors 1,3,10 --seed /path/to/1x/root

Searches are timed twice in the same process: as lexkb runs them, and with the keyword side
scoring every row its words reach (`*_exhaustive`, lexkb.keyword_ranking's pruning off), the
reference the pruning is measured against. `--reuse` measures the roots a run left under
`--out` again, without building them.

With `--parts CHUNKS`, each size is built in parts on a local Dask cluster of `--workers`
processes instead (benchmarks.partitioned_build), and the rows carry each step's and the largest
part's peak memory.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "benchmarks" / "out" / "growth"

PROBE = r"""
import json, resource, sys, time
started = time.perf_counter()
from lexkb.index import Index
index = Index.open(sys.argv[1])
opened = time.perf_counter() - started
from evaluation_data import obliqa
from lexkb import keyword_ranking
questions = [q["Question"] for q in obliqa.load_questions(__import__("pathlib").Path(sys.argv[2]))
             if obliqa.held_out(q)][:200]
result = {"open_s": opened, "rss_after_open_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}

def timed(label, mode):
    index.dense.forget_queries()  # every hybrid run embeds its questions anew
    for q in questions[:20]:
        index.search(q, k=10, mode=mode)
    times = []
    for q in questions:
        t = time.perf_counter(); index.search(q, k=10, mode=mode); times.append(time.perf_counter() - t)
    times.sort()
    result[f"{label}_p50_ms"] = 1000 * times[len(times) // 2]
    result[f"{label}_p95_ms"] = 1000 * times[int(len(times) * 0.95)]

for mode in ("keyword", "hybrid"):
    timed(mode, mode)
# The reference, in the same process: the keyword side scoring every row its words reach.
keyword_ranking._SMALL = float("inf")
for mode in ("keyword", "hybrid"):
    timed(f"{mode}_exhaustive", mode)
result["rss_after_queries_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(result))
"""


def make_corpus(passages: Path, factor: int, target: Path) -> Path:
    """ObliQA and factor - 1 renamed copies, with a catalog naming every copy. Until stop 47
    the copies' passage numbers were prefixed with the copy's number too; since heading paths
    are embedded (issue 46), that made every copy's headings and lines new texts for the model,
    and the builds measured the model after all."""
    if target.is_dir():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    catalog = json.loads((passages / "catalog.json").read_text(encoding="utf-8"))["documents"]
    documents = {}
    for copy in range(factor):
        for file in sorted(passages.glob("*.json")):
            if file.name == "catalog.json":
                continue
            rows = json.loads(file.read_text(encoding="utf-8"))
            key = file.stem if copy == 0 else f"c{copy}-{file.stem}"
            if copy:
                for row in rows:
                    row["ID"] = f"{row['ID']}-c{copy}"
                    row["DocumentID"] = 1000 * copy + int(row["DocumentID"])
            (target / f"{key}.json").write_text(json.dumps(rows), encoding="utf-8")
            entry = dict(catalog.get(file.stem, {}))
            if copy and entry:
                entry["title"] = f"{entry.get('title')} (copy {copy})"
                entry["short_name"] = (
                    f"{entry['short_name']}{copy}" if entry.get("short_name") else None
                )
                entry["aliases"] = [f"{a} (copy {copy})" for a in entry.get("aliases", [])]
            documents[key] = entry
    (target / "catalog.json").write_text(json.dumps({"documents": documents}), encoding="utf-8")
    return target


def timed_build(corpus: Path, root: Path, seed: Path | None) -> dict:
    if root.exists():
        shutil.rmtree(root)
    if seed is not None:
        shutil.copytree(seed / "work" / "embeddings", root / "work" / "embeddings")
    completed = subprocess.run(
        [
            "/usr/bin/time",
            "-v",
            str(REPO / ".venv/bin/lexkb"),
            "build",
            str(corpus),
            "--out",
            str(root),
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    stats = {}
    for line in completed.stderr.splitlines():
        line = line.strip()
        if line.startswith("Elapsed (wall clock) time"):
            clock = line.rsplit(" ", 1)[-1].split(":")
            stats["build_s"] = sum(float(x) * 60**i for i, x in enumerate(reversed(clock)))
        elif line.startswith("Maximum resident set size"):
            stats["build_peak_mb"] = int(line.rsplit(" ", 1)[-1]) / 1024
    snapshot = Path(report["path"])
    stats["snapshot_mb"] = sum(f.stat().st_size for f in snapshot.iterdir()) / 1e6
    stats["chunks"] = report["chunks"]
    stats["documents"] = report["documents"]
    return stats


def parted_build(corpus: Path, root: Path, seed: Path | None, parts: int, workers: int) -> dict:
    """A partitioned build on a local Dask cluster (benchmarks.partitioned_build), in its own
    process: per-step and per-part peaks, the driver's, and the snapshot's size."""
    if root.exists():
        shutil.rmtree(root)
    if seed is not None:
        shutil.copytree(seed / "work" / "embeddings", root / "work" / "embeddings")
    completed = subprocess.run(
        [
            str(REPO / ".venv/bin/python"),
            "-m",
            "benchmarks.partitioned_build",
            str(corpus),
            str(root),
            "--parts",
            str(parts),
            "--workers",
            str(workers),
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    figures = json.loads(completed.stdout.strip().splitlines()[-1])
    snapshot = Path(figures.pop("path"))
    figures["snapshot_mb"] = sum(f.stat().st_size for f in snapshot.iterdir()) / 1e6
    return figures


def probe(root: Path, data: Path) -> dict:
    completed = subprocess.run(
        [str(REPO / ".venv/bin/python"), "-c", PROBE, str(root), str(data)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


def fitted(rows: list[dict], metric: str) -> float | None:
    """Exponent b of metric = a * factor^b, least squares in log-log over the measured points."""
    points = [(math.log(r["factor"]), math.log(r[metric])) for r in rows if r.get(metric, 0) > 0]
    if len(points) < 2:
        return None
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=Path, default=REPO / "benchmarks/out/obliqa/passages")
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared/data/obliqa")
    parser.add_argument("--factors", default="1,3,10")
    parser.add_argument("--seed", type=Path, help="a 1x root whose embedding cache to start from")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--parts",
        type=int,
        help="build in parts of at most this many chunks on a local Dask cluster instead",
    )
    parser.add_argument("--workers", type=int, default=2, help="Dask worker processes (--parts)")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="measure the roots an earlier run left under --out, without building them again",
    )
    parser.add_argument(
        "--build-only",
        action="store_true",
        help="no open or searches: for a size whose snapshot this machine cannot serve",
    )
    args = parser.parse_args()
    rows = []
    for factor in (int(f) for f in args.factors.split(",")):
        root = args.out / f"root-{factor}"
        built = {}
        if not args.reuse:
            corpus = make_corpus(args.passages, factor, args.out / f"corpus-{factor}")
            if args.parts:
                built = parted_build(corpus, root, args.seed, args.parts, args.workers)
            else:
                built = timed_build(corpus, root, args.seed)
            shutil.rmtree(corpus)
        row = {"factor": factor, **built, **({} if args.build_only else probe(root, args.data))}
        rows.append(row)
        print(json.dumps(row), flush=True)
    metrics = [
        k for k, v in rows[0].items() if k not in ("factor", "documents") and isinstance(v, float)
    ]
    exponents = {m: fitted(rows, m) for m in metrics}
    print(json.dumps({"rows": rows, "exponents": exponents}, indent=2))


if __name__ == "__main__":
    sys.exit(main())
