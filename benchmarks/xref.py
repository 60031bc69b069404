"""Citation edges against the ObliQA-XRef gold, next to a naive baseline, in one run.

    .venv/bin/python -m benchmarks.xref [--data ../shared/data] [--work benchmarks/out/xref]

Builds a lexkb index from the 40 structured ObliQA documents (with a catalog of the names in
DocumentMap.rtf) through `lexkb build`, then scores its edges.parquet on the gold pairs of
`xref/crossrefs-dev.csv` (source passage -> target passage):

- precision: of the resolved edges leaving the gold's annotated source passages, the share that
  are gold pairs;
- recall: of the gold pairs with a target passage, the share found;
- split by the gold's reference type (Internal: same document; External: another document).

The gold annotates each source passage for one type of reference: of its 883 passages only 10
carry both Internal and External pairs, although many cite both ways (COBS 21.3.5 Guidance 1 cites
"section 104 of FSMR" and "Rules 21.4.2, 21.4.3 and 21.4.4"; only the first is in the gold). So
precision is reported twice: "judged" counts an edge only where the gold annotated its type for
that source passage (internal edges of a passage annotated for internal references, and so on);
"strict" counts every edge leaving an annotated passage, and so charges the references the gold
did not look for as errors. Recall is the same under both.

The naive baseline calls any dotted number in a passage that equals a PassageID of the same
document an edge. Pairs are compared by (DocumentID, PassageID) without a trailing dot: the
gold writes the heading passage "14." of COBS as "14", and no document has both.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
import time
from collections import Counter
from pathlib import Path

import polars as pl

from evaluation_data.obliqa import extract_passages

REPO = Path(__file__).resolve().parent.parent


Passage = tuple[str, str]  # (DocumentID, PassageID)
Pair = tuple[Passage, Passage]


def passage(doc: str, passage_id: str) -> Passage:
    return str(doc), re.sub(r" \[\d+\]$", "", passage_id or "").strip().rstrip(".")


def load_gold(path: Path) -> tuple[dict[Passage, set[str]], dict[Pair, str], Counter]:
    """Annotated source passages with the reference types annotated for each, the gold pairs
    with their type, and the count of gold rows whose target is outside the corpus."""
    sources: dict[Passage, set[str]] = {}
    pairs: dict[Pair, str] = {}
    unreachable: Counter = Counter()
    with path.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            source = passage(row["SourceDocumentID"], row["SourcePassageID"])
            sources.setdefault(source, set()).add(row["ReferenceType"].casefold())
            if not row["TargetPassageID"]:
                unreachable[row["ReferenceType"]] += 1
                continue
            target = passage(row["TargetDocumentID"], row["TargetPassageID"])
            pairs[(source, target)] = row["ReferenceType"]
    return sources, pairs, unreachable


def naive_edges(passages: Path, sources: dict[Passage, set[str]]) -> set[Pair]:
    ids: dict[str, set[str]] = {}
    texts: dict[Passage, str] = {}
    for file in passages.glob("*.json"):
        if file.name == "catalog.json":
            continue
        for p in json.loads(file.read_text(encoding="utf-8")):
            key = passage(p["DocumentID"], p["PassageID"])
            ids.setdefault(key[0], set()).add(key[1])
            texts[key] = p["Passage"]
    edges = set()
    for source in sources:
        doc = source[0]
        for number in re.findall(r"\d+(?:\.\d+)+", texts.get(source, "")):
            if number in ids[doc]:
                edges.add((source, (doc, number)))
    return edges


def lexkb_edges(passages: Path, work: Path) -> tuple[set[Pair], dict, float]:
    root = work / "index"
    started = time.perf_counter()
    subprocess.run(
        [
            str(REPO / ".venv/bin/lexkb"),
            "build",
            str(passages),
            "--out",
            str(root),
            "--embedder",
            "none",
            "--quiet",
        ],
        check=True,
    )
    seconds = time.perf_counter() - started
    snapshot = root / "snapshots" / (root / "CURRENT").read_text(encoding="utf-8").strip()
    chunks = pl.read_parquet(
        snapshot / "chunks.parquet", columns=["chunk_id", "document_key", "ref"]
    )
    passage_of = {chunk_id: passage(key, ref) for chunk_id, key, ref in chunks.rows()}
    edges = pl.read_parquet(snapshot / "edges.parquet")
    resolved = edges.filter(pl.col("target_chunk_id").is_not_null())
    pairs = {
        (passage_of[s], passage_of[t])
        for s, t in resolved.select("source_chunk_id", "target_chunk_id").rows()
    }
    counts = dict(edges.group_by("reference_type").len().rows())
    return pairs, counts, seconds


def _kind(pair: Pair) -> str:
    return "internal" if pair[0][0] == pair[1][0] else "external"


def score(
    found: set[Pair], gold: dict[Pair, str], sources: dict[Passage, set[str]], judged: bool
) -> dict[str, dict]:
    """Precision over edges leaving annotated sources (with `judged`, only edges of a type the
    gold annotated for their source), recall over gold pairs; overall and by type."""
    leaving = {
        p
        for p in found
        if p[0] in sources and (not judged or p in gold or _kind(p) in sources[p[0]])
    }
    results = {}
    for label in ("all", "internal", "external"):
        predicted = {p for p in leaving if label in ("all", _kind(p))}
        wanted = {p for p in gold if label in ("all", _kind(p))}
        hits = len(predicted & wanted)
        precision = hits / len(predicted) if predicted else 0.0
        recall = hits / len(wanted) if wanted else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        results[label] = {
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "predicted": len(predicted),
            "gold": len(wanted),
        }
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks" / "out" / "xref")
    parser.add_argument("--errors", type=int, default=0, help="print this many misses of each kind")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    passages = extract_passages(args.data / "obliqa", args.work / "passages")
    sources, gold, unreachable = load_gold(args.data / "xref" / "crossrefs-dev.csv")

    naive = naive_edges(passages, sources)
    found, counts, seconds = lexkb_edges(passages, args.work)
    systems = [("naive: dotted number = PassageID", naive), ("lexkb edges", found)]

    print(
        f"\nObliQA-XRef dev: {len(sources)} source passages, {len(gold)} gold pairs with a target"
    )
    print(f"(gold rows without a target passage, not scored: {dict(unreachable)})")
    header = f"{'system':34} {'precision':9} {'split':9} {'P':>6} {'R':>6} {'F1':>6} {'edges':>6}"
    print(header)
    for judged in (True, False):
        for name, edges in systems:
            for split, m in score(edges, gold, sources, judged).items():
                print(
                    f"{name:34} {'judged' if judged else 'strict':9} {split:9} "
                    f"{m['precision']:6.3f} {m['recall']:6.3f} {m['f1']:6.3f} {m['predicted']:6d}"
                )
    print(f"\nlexkb build {seconds:.1f}s (CLI, all 40 documents); edges by type: {counts}")
    if args.errors:
        leaving = {p for p in found if p[0] in sources and (p in gold or _kind(p) in sources[p[0]])}
        print("\nmissed gold pairs:")
        for pair in sorted(set(gold) - leaving)[: args.errors]:
            print("  ", pair, gold[pair])
        print("judged edges not in the gold:")
        for pair in sorted(leaving - set(gold))[: args.errors]:
            print("  ", pair)


if __name__ == "__main__":
    main()
