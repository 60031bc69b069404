"""Every retrieval variant tried on ObliQA for issue 6, chosen on one half of the dev questions and
reported on the other.

    .venv/bin/python -m benchmarks.obliqa_variants [--index benchmarks/out/obliqa/index]
                                                   [--data ../shared/data/obliqa] [--enriched-dense]

Reads an index built by benchmarks/obliqa.py (paragraphs, their vectors from the local model) and
scores, on the paragraphs only, with the same metric code as obliqa.py:
BM25 k1/b grid; the heading path and title indexed with the text (prefixed, or as a second field);
fusion of BM25 and dense scores by RRF (k, dense weight), min-max or z-score weighting; a
document prior and neighbouring paragraphs as extra signals; dense pseudo-relevance feedback; a
query-side linear adapter trained on the tune half. `--enriched-dense` also re-embeds every
paragraph with its title and heading path (about nine minutes). The dense rows score whole
paragraphs; the "lines" fusion rows use lexkb's own dense scores (the best of a paragraph's vector
and its lines' vectors, as `Index.dense_scores` gives them).

Tune half: sha256(QuestionID) even; held-out: odd (as in obliqa.py). The adapter is also scored
on a passage-disjoint split, because a third of the gold passages serve more than one question: a
model trained on questions can learn the passages themselves.
"""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import scipy.sparse as sp

from benchmarks.obliqa import metrics
from evaluation_data.obliqa import gold_of, held_out, load_questions
from lexkb import Index
from lexkb.core.embed.embedders import LocalEmbedder
from lexkb.core.text.tokenize import tokenize

REPO = Path(__file__).resolve().parent.parent


DEPTH = 200  # candidates per question: the union of each ranking's best DEPTH


class Bench:
    """Paragraphs of an ObliQA index, questions, and scoring of score functions."""

    def __init__(self, root: Path, data: Path) -> None:
        index = Index.open(root)
        chunks = pl.read_parquet(index.snapshot.table_path("chunks"))
        rows = np.flatnonzero((chunks["chunk_level"] == "paragraph").to_numpy())
        self.paragraphs = chunks[rows]
        titles = pl.read_parquet(index.snapshot.table_path("documents"))
        self.title = dict(zip(titles["document_id"], titles["title"], strict=True))
        self.keys = [
            (d, (r or "").split(" [")[0])
            for d, r in zip(self.paragraphs["document_key"], self.paragraphs["ref"], strict=True)
        ]
        self.questions = load_questions(data)
        self.tune = np.array([not held_out(q) for q in self.questions])
        self.embedder = LocalEmbedder()
        self.vectors = index.dense.vectors[rows]
        self.index, self.rows = index, rows
        self.queries = self.embedder.embed_documents([q["Question"] for q in self.questions])
        self.query_terms = [tokenize(q["Question"]) for q in self.questions]
        self.texts = self.paragraphs["content"].to_list()
        self.paths = [" ".join(p) for p in self.paragraphs["section_path"].to_list()]
        self.titles = [self.title[d] for d in self.paragraphs["document_id"]]

    def score(self, fn: Callable[[int], np.ndarray], which: np.ndarray) -> tuple[float, float]:
        """(Recall@10, MAP@10) of a per-question score function over the selected questions."""
        runs = {}
        chosen = [q for q, keep in zip(self.questions, which, strict=True) if keep]
        for i, q in enumerate(self.questions):
            if which[i]:
                top = np.argsort(-fn(i), kind="stable")[:40]
                runs[q["QuestionID"]] = [self.keys[j] for j in top]
        m = metrics(runs, chosen)
        return round(m["recall@10"], 3), round(m["map@10"], 3)


def bm25_matrix(texts: list[str], k1: float, b: float) -> tuple[sp.csc_matrix, dict[str, int]]:
    """Lucene BM25 weights (as lexkb builds them) for texts, as a doc x term matrix."""
    vocabulary: dict[str, int] = {}
    rows, cols = [], []
    for i, text in enumerate(texts):
        for term in tokenize(text):
            cols.append(vocabulary.setdefault(term, len(vocabulary)))
            rows.append(i)
    tf = sp.coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(texts), len(vocabulary)))
    tf = tf.tocsr()
    tf.sum_duplicates()
    tf = tf.tocoo()
    lengths = np.bincount(rows, minlength=len(texts)).astype(float)
    df = np.bincount(tf.col, minlength=len(vocabulary))
    idf = np.log(1 + (len(texts) - df + 0.5) / (df + 0.5))
    norm = k1 * (1 - b + b * lengths[tf.row] / max(lengths.mean(), 1.0))
    weights = idf[tf.col] * tf.data / (tf.data + norm)
    return sp.csc_matrix((weights, (tf.row, tf.col)), shape=tf.shape), vocabulary


def bm25_scores(bench: Bench, matrix: sp.csc_matrix, vocabulary: dict[str, int]) -> list:
    out = []
    for terms in bench.query_terms:
        cols = [vocabulary[t] for t in terms if t in vocabulary]
        row = np.asarray(matrix[:, cols].sum(axis=1)).ravel() if cols else np.zeros(matrix.shape[0])
        out.append(row)
    return out


def candidates(*scores: np.ndarray) -> np.ndarray:
    return np.unique(np.concatenate([np.argpartition(-s, DEPTH)[:DEPTH] for s in scores]))


def z(values: np.ndarray) -> np.ndarray:
    return (values - values.mean()) / (values.std() + 1e-9)


def fused(keyword: np.ndarray, dense: np.ndarray, how: str, weight: float, k: int = 60):
    """One question's fused scores (-inf outside the candidates)."""
    c = candidates(keyword, dense)
    out = np.full(keyword.shape, -np.inf)
    if how == "rrf":
        ranks = {}
        for name, s in (("k", keyword), ("d", dense)):
            order = c[np.argsort(-s[c], kind="stable")]
            ranks[name] = np.empty(len(keyword))
            ranks[name][order] = np.arange(1, order.size + 1)
        out[c] = 1 / (k + ranks["k"][c]) + weight / (k + ranks["d"][c])
    elif how == "minmax":
        kk, dd = keyword[c], dense[c]
        out[c] = (kk - kk.min()) / (np.ptp(kk) + 1e-9) + weight * (dd - dd.min()) / (
            np.ptp(dd) + 1e-9
        )
    else:
        out[c] = z(keyword[c]) + weight * z(dense[c])
    return out


def best(bench: Bench, make: Callable[[float], Callable[[int], np.ndarray]], grid, metric=1):
    """The grid value with the best tune-half MAP@10 (metric 1) and its scores on both halves."""
    results = {v: bench.score(make(v), bench.tune) for v in grid}
    chosen = max(grid, key=lambda v: results[v][metric])
    return chosen, results[chosen], bench.score(make(chosen), ~bench.tune), results


def report(name: str, tune: tuple, held: tuple | None = None) -> None:
    held_text = f"{held[0]:.3f} / {held[1]:.3f}" if held else "-"
    print(f"| {name} | {tune[0]:.3f} / {tune[1]:.3f} | {held_text} |", flush=True)


def bm25_variants(bench: Bench) -> list:
    print("\n| BM25 variant | tune R@10 / MAP@10 | held-out |\n|---|---|---|")
    grid = {}
    for k1 in (0.9, 1.2, 1.5, 2.0):
        for b in (0.4, 0.6, 0.75, 0.9):
            scores = bm25_scores(bench, *bm25_matrix(bench.texts, k1, b))
            grid[(k1, b)] = scores
            report(f"k1 {k1}, b {b}", bench.score(lambda i, s=scores: s[i], bench.tune))
    chosen = max(grid, key=lambda p: bench.score(lambda i: grid[p][i], bench.tune)[1])
    scores = grid[chosen]
    report(
        f"chosen: k1 {chosen[0]}, b {chosen[1]}",
        bench.score(lambda i: scores[i], bench.tune),
        bench.score(lambda i: scores[i], ~bench.tune),
    )
    for name, texts in (
        (
            "heading path + text",
            [f"{p} {t}" for p, t in zip(bench.paths, bench.texts, strict=True)],
        ),
        (
            "title + heading path + text",
            [
                f"{d} {p} {t}"
                for d, p, t in zip(bench.titles, bench.paths, bench.texts, strict=True)
            ],
        ),
    ):
        enriched = bm25_scores(bench, *bm25_matrix(texts, *chosen))
        report(
            name,
            bench.score(lambda i, s=enriched: s[i], bench.tune),
            bench.score(lambda i, s=enriched: s[i], ~bench.tune),
        )
    path_field = bm25_scores(bench, *bm25_matrix(bench.paths, 1.2, 0.5))
    weight, tune, held, _ = best(
        bench, lambda w: lambda i: scores[i] + w * path_field[i], (0.1, 0.2, 0.4)
    )
    report(f"heading path as a second field, weight {weight}", tune, held)
    return scores


def fusion_variants(bench: Bench, keyword: list, dense: list, label: str) -> None:
    print(f"\n| fusion ({label}) | tune R@10 / MAP@10 | held-out |\n|---|---|---|")
    report(
        "dense alone",
        bench.score(lambda i: dense[i], bench.tune),
        bench.score(lambda i: dense[i], ~bench.tune),
    )
    report(
        "RRF k=60 (baseline)",
        bench.score(lambda i: fused(keyword[i], dense[i], "rrf", 1.0), bench.tune),
        bench.score(lambda i: fused(keyword[i], dense[i], "rrf", 1.0), ~bench.tune),
    )
    for k in (5, 10, 20):
        w, tune, held, _ = best(
            bench, lambda w, k=k: lambda i: fused(keyword[i], dense[i], "rrf", w, k), (0.5, 0.7)
        )
        report(f"RRF k={k}, dense weight {w}", tune, held)
    for how in ("minmax", "z"):
        w, tune, held, _ = best(
            bench,
            lambda w, how=how: lambda i: fused(keyword[i], dense[i], how, w),
            (0.3, 0.4, 0.5, 0.6, 0.8, 1.0),
        )
        report(f"{how} scores, dense weight {w}", tune, held)


def extra_signals(bench: Bench, keyword: list, dense: list, weight: float) -> None:
    print("\n| on top of hybrid as shipped | tune R@10 / MAP@10 | held-out |\n|---|---|---|")
    documents = bench.paragraphs["document_id"].to_numpy()
    names, document_of = np.unique(documents, return_inverse=True)
    parent = bench.paragraphs["parent_chunk_id"].fill_null("").to_numpy()
    same_prev = np.r_[False, parent[1:] == parent[:-1]]
    same_next = np.r_[parent[:-1] == parent[1:], False]
    base = [fused(keyword[i], dense[i], "z", weight) for i in range(len(bench.questions))]

    def prior(i: int, w: float) -> np.ndarray:
        s = base[i]
        top = np.argsort(-s)[:20]
        mass = np.exp(s[top] - s[top].max())
        share = np.bincount(document_of[top], weights=mass, minlength=len(names)) / mass.sum()
        return s + w * share[document_of]

    def neighbours(i: int, w: float) -> np.ndarray:
        s = np.where(np.isfinite(base[i]), base[i], -3.0)
        before = np.where(same_prev, np.r_[-3.0, s[:-1]], -3.0)
        after = np.where(same_next, np.r_[s[1:], -3.0], -3.0)
        return base[i] + w * np.maximum(before, after)

    def feedback(i: int, beta: float) -> np.ndarray:
        top = np.argsort(-base[i])[:3]
        query = bench.queries[i] + beta * bench.vectors[top].mean(axis=0)
        return fused(keyword[i], bench.vectors @ (query / np.linalg.norm(query)), "z", weight)

    for name, fn, grid in (
        ("document prior (share of the top 20)", prior, (0.6, 1.2, 2.0)),
        ("best neighbouring paragraph", neighbours, (0.05, 0.1, 0.2)),
        ("dense pseudo-relevance feedback (top 3, paragraph vectors)", feedback, (0.5, 1.0)),
    ):
        w, tune, held, _ = best(bench, lambda w, fn=fn: lambda i: fn(i, w), grid)
        report(f"{name}, weight {w}", tune, held)


def adapter(bench: Bench, train: np.ndarray, epochs: int = 5) -> np.ndarray:
    """A query-side linear map q -> q + Wq trained with softmax cross-entropy over every
    paragraph (temperature 0.05, Adam, weight decay), on the questions in `train`."""
    rows: dict[tuple[str, str], list[int]] = {}
    for j, key in enumerate(bench.keys):
        rows.setdefault(key, []).append(j)
    target = np.zeros((len(bench.questions), len(bench.keys)), dtype=np.float32)
    for i, q in enumerate(bench.questions):
        found = [j for key in gold_of(q) for j in rows.get(key, [])]
        if found:
            target[i, found] = 1.0 / len(found)
    W = np.zeros((bench.vectors.shape[1],) * 2, dtype=np.float32)
    m, v, step = np.zeros_like(W), np.zeros_like(W), 0
    order = np.flatnonzero(train & (target.sum(axis=1) > 0))
    rng = np.random.default_rng(0)
    for _ in range(epochs):
        rng.shuffle(order)
        for start in range(0, order.size, 64):
            batch = order[start : start + 64]
            q = bench.queries[batch]
            logits = (q + q @ W.T) @ bench.vectors.T / 0.05
            logits -= logits.max(axis=1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=1, keepdims=True)
            grad = ((p - target[batch]) @ bench.vectors).T @ q / 0.05 / batch.size + 0.06 * W
            step += 1
            m = 0.9 * m + 0.1 * grad
            v = 0.999 * v + 0.001 * grad * grad
            W -= 1e-3 * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return W


def adapter_variants(bench: Bench) -> None:
    print("\n| dense, query adapter | train R@10 / MAP@10 | held-out |\n|---|---|---|")

    def dense_with(W: np.ndarray) -> Callable[[int], np.ndarray]:
        return lambda i: bench.vectors @ (bench.queries[i] + W @ bench.queries[i])

    def parity(p: dict) -> int:
        key = f"{p['DocumentID']}|{p['PassageID']}".encode()
        return int(hashlib.sha256(key).hexdigest(), 16) % 2

    sides = [{parity(p) for p in q["Passages"]} for q in bench.questions]
    disjoint_train = np.array([s == {0} for s in sides])
    disjoint_test = np.array([s == {1} for s in sides])
    zero = np.zeros((bench.vectors.shape[1],) * 2, dtype=np.float32)
    for name, train, test in (
        ("question split", bench.tune, ~bench.tune),
        ("passage-disjoint split", disjoint_train, disjoint_test),
    ):
        report(
            f"no adapter, {name}",
            bench.score(dense_with(zero), train),
            bench.score(dense_with(zero), test),
        )
        W = adapter(bench, train)
        report(
            f"adapter, {name}", bench.score(dense_with(W), train), bench.score(dense_with(W), test)
        )


def dense_with_lines(bench: Bench) -> list:
    """What lexkb's dense search scores: the best of a paragraph's vector and its lines'."""
    return [bench.index.dense_scores(q["Question"])[bench.rows] for q in bench.questions]


def enriched_dense(bench: Bench) -> list:
    texts = [
        f"{d} > {p}\n{t}" for d, p, t in zip(bench.titles, bench.paths, bench.texts, strict=True)
    ]
    vectors = bench.embedder.embed_documents(texts)
    return [vectors @ q for q in bench.queries]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, default=REPO / "benchmarks/out/obliqa/index")
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "obliqa")
    parser.add_argument("--enriched-dense", action="store_true")
    args = parser.parse_args()
    bench = Bench(args.index, args.data)
    print(
        f"{len(bench.keys)} paragraphs, {int(bench.tune.sum())} tune / "
        f"{int((~bench.tune).sum())} held-out questions"
    )
    keyword = bm25_variants(bench)
    dense = [bench.vectors @ q for q in bench.queries]
    fusion_variants(bench, keyword, dense, "text only")
    lines = dense_with_lines(bench)
    fusion_variants(bench, keyword, lines, "best of paragraph and its lines")
    if args.enriched_dense:
        fusion_variants(bench, keyword, enriched_dense(bench), "dense on title + path + text")
    extra_signals(bench, keyword, lines, 1.0)
    adapter_variants(bench)


if __name__ == "__main__":
    main()
