"""ObliQA dev retrieval: every lexkb search mode next to bm25s, in one run.

    .venv/bin/python -m benchmarks.obliqa [--data ../shared/data/obliqa] [--work benchmarks/out/obliqa]
                                          [--index ROOT]

Builds a lexkb index from the 40 structured ObliQA documents through `lexkb build` (the default
embedder: the local model) unless `--index` names one already built, runs the 2,788 dev questions
through `Index.search` one at a time in each mode, and scores Recall@10, MAP@10 and nDCG@10 against
the gold passages (DocumentID + PassageID). bm25s (English stopwords, Snowball stemmer) is indexed
on the same passages and timed the same way, tokenization included; latency includes embedding the
query.

lexkb's BM25 k1/b and the hybrid's dense weight were chosen on the questions whose
`sha256(QuestionID)` is even (`tune` half); the `held-out` columns are the other half, which no
choice looked at (benchmarks/obliqa_variants.py made the choices).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import time
from pathlib import Path

from evaluation_data.obliqa import extract_passages, gold_of, held_out, load_questions, passage_key

REPO = Path(__file__).resolve().parent.parent


K = 10
Run = dict[str, list[tuple[str, str]]]


def metrics(runs: Run, questions: list[dict]) -> dict[str, float]:
    recall, ap, ndcg = [], [], []
    for q in questions:
        gold = gold_of(q)
        ranked = list(dict.fromkeys(runs.get(q["QuestionID"], [])))[:K]
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


def run_lexkb(index, questions: list[dict], depth: int = K, **options) -> tuple[Run, list, list]:
    """Each question through `Index.search`, timed one by one: the run, per-question hit lists
    (for fusing afterwards) and latencies."""
    runs, hit_lists, latencies = {}, [], []
    for q in questions:
        started = time.perf_counter()
        results = index.search(q["Question"], k=depth, **options)
        latencies.append(time.perf_counter() - started)
        hit_lists.append(results.hits)
        runs[q["QuestionID"]] = [passage_key(h) for h in results.hits[:K]]
    return runs, hit_lists, latencies


def rrf(questions: list[dict], *rankings: list, k: int = 60) -> Run:
    """Reciprocal rank fusion (Cormack et al. 2009) of per-question hit lists: the baseline the
    issue names, fused here from lexkb's own keyword and vector rankings (top 100 each)."""
    runs = {}
    for i, q in enumerate(questions):
        score: dict[tuple[str, str], float] = {}
        for ranking in rankings:
            for rank, hit in enumerate(ranking[i], start=1):
                key = passage_key(hit)
                score[key] = score.get(key, 0.0) + 1.0 / (k + rank)
        runs[q["QuestionID"]] = sorted(score, key=lambda key: -score[key])[:K]
    return runs


def run_bm25s(passages: Path, questions: list[dict]) -> tuple[Run, list[float], float]:
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
    return runs, latencies, index_seconds


def timing(latencies: list[float]) -> dict[str, float]:
    return {
        "p50_ms": statistics.median(latencies) * 1000,
        "mean_ms": statistics.fmean(latencies) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "obliqa")
    parser.add_argument("--work", type=Path, default=REPO / "benchmarks" / "out" / "obliqa")
    parser.add_argument("--index", type=Path, help="an index root already built from the passages")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    passages = extract_passages(args.data, args.work / "passages")
    questions = load_questions(args.data)

    build_seconds = None
    root = args.index
    if root is None:
        root, build_seconds = build_lexkb(passages, args.work)

    from lexkb import Index

    index = Index.open(root)
    rows = []
    bm25s_runs, bm25s_latencies, bm25s_index_s = run_bm25s(passages, questions)
    rows.append(("bm25s 0.3 (en stopwords, Snowball)", bm25s_runs, timing(bm25s_latencies)))
    keyword, keyword_hits, latencies = run_lexkb(index, questions, 100, mode="keyword")
    rows.append(("lexkb keyword (BM25)", keyword, timing(latencies)))
    vector, vector_hits, latencies = run_lexkb(index, questions, 100, mode="vector")
    rows.append((f"lexkb vector ({index.embedder_name})", vector, timing(latencies)))
    rows.append(
        ("RRF k=60 of lexkb keyword + vector", rrf(questions, keyword_hits, vector_hits), {})
    )
    hybrid, _, latencies = run_lexkb(index, questions)
    rows.append(("lexkb hybrid (default mode)", hybrid, timing(latencies)))
    expanded, _, latencies = run_lexkb(index, questions, expand=True)
    rows.append(("lexkb hybrid + citation expand", expanded, timing(latencies)))

    tune = [q for q in questions if not held_out(q)]
    rest = [q for q in questions if held_out(q)]
    print(f"\nObliQA dev: {len(questions)} questions (held-out half {len(rest)}), k={K}")
    print(
        f"{'system':44} {'R@10':>6} {'MAP@10':>7} {'nDCG@10':>8} | held-out {'R@10':>6} "
        f"{'MAP@10':>7} {'nDCG@10':>8} | {'p50 ms':>7} {'mean ms':>8}"
    )
    for name, runs, t in rows:
        every, held = metrics(runs, questions), metrics(runs, rest)
        times = f"{t['p50_ms']:7.2f} {t['mean_ms']:8.2f}" if t else f"{'-':>7} {'-':>8}"
        print(
            f"{name:44} {every['recall@10']:6.3f} {every['map@10']:7.3f} {every['ndcg@10']:8.3f} |"
            f"          {held['recall@10']:6.3f} {held['map@10']:7.3f} {held['ndcg@10']:8.3f} | "
            f"{times}"
        )
    built = f"lexkb build {build_seconds:.1f}s (CLI, includes start-up); " if build_seconds else ""
    print(f"\n{built}bm25s index {bm25s_index_s:.1f}s; tune half: {len(tune)} questions")


if __name__ == "__main__":
    main()
