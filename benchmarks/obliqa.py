"""ObliQA dev retrieval: lexkb keyword search next to bm25s, in one run.

    .venv/bin/python benchmarks/obliqa.py [--data ../shared/data/obliqa] [--work benchmarks/out/obliqa]

Builds a lexkb index from the 40 structured ObliQA documents through `lexkb build`, runs the 2,788
dev questions through `lexkb search-batch`, and scores Recall@10, MAP@10 and nDCG@10 against the
gold passages (DocumentID + PassageID). bm25s (English stopwords, Snowball stemmer) is indexed on
the same passages and timed the same way: one query at a time, tokenization included.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from obliqa_data import extract_passages  # noqa: E402

K = 10


def load_questions(data: Path) -> list[dict]:
    return json.loads((data / "questions-dev.json").read_text(encoding="utf-8"))


def gold_of(question: dict) -> set[tuple[str, str]]:
    return {(str(p["DocumentID"]), str(p["PassageID"])) for p in question["Passages"]}


def metrics(runs: dict[str, list[tuple[str, str]]], questions: list[dict]) -> dict[str, float]:
    recall, ap, ndcg = [], [], []
    for q in questions:
        gold = gold_of(q)
        ranked, seen = [], set()
        for key in runs.get(q["QuestionID"], []):
            if key not in seen:
                seen.add(key)
                ranked.append(key)
        ranked = ranked[:K]
        hits = [key in gold for key in ranked]
        recall.append(sum(hits) / len(gold))
        found, precision_sum = 0, 0.0
        for rank, hit in enumerate(hits, start=1):
            if hit:
                found += 1
                precision_sum += found / rank
        ap.append(precision_sum / min(len(gold), K))
        dcg = sum(1 / math.log2(rank + 1) for rank, hit in enumerate(hits, start=1) if hit)
        ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(gold), K) + 1))
        ndcg.append(dcg / ideal)
    n = len(questions)
    return {"recall@10": sum(recall) / n, "map@10": sum(ap) / n, "ndcg@10": sum(ndcg) / n}


def build_lexkb(passages: Path, work: Path) -> tuple[Path, float]:
    root = work / "index"
    started = time.perf_counter()
    subprocess.run(
        [str(REPO / ".venv/bin/lexkb"), "build", str(passages), "--out", str(root)], check=True
    )
    return root, time.perf_counter() - started


def run_lexkb(root: Path, work: Path, questions: list[dict], expand: bool) -> tuple[dict, dict]:
    """The questions through `lexkb search-batch` (the run scored), then timed one by one
    in-process (the latency reported)."""
    queries = work / "queries.jsonl"
    with queries.open("w", encoding="utf-8") as handle:
        for q in questions:
            handle.write(json.dumps({"qid": q["QuestionID"], "query": q["Question"]}) + "\n")
    run_file = work / f"lexkb-run{'-expand' if expand else ''}.jsonl"
    command = [
        str(REPO / ".venv/bin/lexkb"),
        "search-batch",
        "--index",
        str(root),
        "--queries",
        str(queries),
        "--k",
        str(K),
        "--mode",
        "keyword",
        "--out",
        str(run_file),
    ]
    started = time.perf_counter()
    subprocess.run(command + (["--expand"] if expand else []), check=True)
    batch_seconds = time.perf_counter() - started
    runs = {}
    for line in run_file.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        runs[item["qid"]] = [
            (h["document_key"], re.sub(r" \[\d+\]$", "", h["ref"] or "")) for h in item["hits"]
        ]

    from lexkb import Index

    index = Index.open(root)
    latencies = []
    for q in questions:
        t = time.perf_counter()
        index.search(q["Question"], k=K, expand=expand)
        latencies.append(time.perf_counter() - t)
    return runs, {
        "batch_cli_s": batch_seconds,
        "p50_ms": statistics.median(latencies) * 1000,
        "mean_ms": statistics.fmean(latencies) * 1000,
    }


def run_bm25s(passages: Path, questions: list[dict]) -> tuple[dict, dict]:
    import bm25s
    import Stemmer

    keys, texts = [], []
    for file in sorted(passages.glob("[0-9]*.json")):
        for p in json.loads(file.read_text(encoding="utf-8")):
            keys.append((str(p["DocumentID"]), str(p["PassageID"])))
            texts.append(p["Passage"])
    stemmer = Stemmer.Stemmer("english")
    started = time.perf_counter()
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
        show_progress=False,
    )
    index_seconds = time.perf_counter() - started
    runs, latencies = {}, []
    for q in questions:
        t = time.perf_counter()
        tokens = bm25s.tokenize(
            [q["Question"]], stopwords="en", stemmer=stemmer, show_progress=False
        )
        docs, _ = retriever.retrieve(tokens, k=K, show_progress=False)
        latencies.append(time.perf_counter() - t)
        runs[q["QuestionID"]] = [keys[i] for i in docs[0]]
    return runs, {
        "index_s": index_seconds,
        "p50_ms": statistics.median(latencies) * 1000,
        "mean_ms": statistics.fmean(latencies) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "obliqa")
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks" / "out" / "obliqa")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    passages = extract_passages(args.data, args.work / "passages")
    questions = load_questions(args.data)

    root, build_seconds = build_lexkb(passages, args.work)
    lexkb_runs, lexkb_time = run_lexkb(root, args.work, questions, expand=False)
    expand_runs, expand_time = run_lexkb(root, args.work, questions, expand=True)
    bm25s_runs, bm25s_time = run_bm25s(passages, questions)
    rows = [
        ("bm25s 0.3 (en stopwords, Snowball)", metrics(bm25s_runs, questions), bm25s_time),
        ("lexkb keyword", metrics(lexkb_runs, questions), lexkb_time),
        ("lexkb keyword + citation expand", metrics(expand_runs, questions), expand_time),
    ]
    print(f"\nObliQA dev: {len(questions)} questions, k={K}")
    print(
        f"{'system':38} {'Recall@10':>9} {'MAP@10':>7} {'nDCG@10':>8} {'p50 ms':>7} {'mean ms':>8}"
    )
    for name, m, t in rows:
        print(
            f"{name:38} {m['recall@10']:9.3f} {m['map@10']:7.3f} {m['ndcg@10']:8.3f} "
            f"{t['p50_ms']:7.2f} {t['mean_ms']:8.2f}"
        )
    print(
        f"\nlexkb build {build_seconds:.1f}s (CLI, includes start-up), "
        f"search-batch CLI {lexkb_time['batch_cli_s']:.1f}s; bm25s index {bm25s_time['index_s']:.1f}s"
    )
    print(
        f"query time ratio lexkb/bm25s (mean): {lexkb_time['mean_ms'] / bm25s_time['mean_ms']:.2f}"
    )


if __name__ == "__main__":
    main()
