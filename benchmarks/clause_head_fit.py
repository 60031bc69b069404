"""Fit lexkb's clause heads on CUAD: one logistic regression per CUAD category over a
paragraph's local-model vector and its words (lexkb.core.clauses.heads), with the decision
threshold chosen on predictions for contracts the fit did not see.

    .venv/bin/python -m benchmarks.clause_head_fit [--write]

Needs the TXT contract index benchmarks/contracts.py builds (its clause step keeps every
contract paragraph's vector under ROOT/work/embeddings, so nothing is embedded twice). A
paragraph is a positive of a category when it overlaps a clause lawyers marked with it
(benchmarks/classify.py's overlap rule). Thresholds come from out-of-fold predictions, folds by
contract, and maximise each category's clause-level F1 as benchmarks/classify.py scores it.

`--write` fits on every contract here and writes lexkb/core/clauses/models/cuad_clauses.npz,
printing its SHA-256 for lexkb/core/clauses/heads.py and the card beside the file. How well heads
fitted on one half do on the other half is benchmarks/classify.py's to report.
"""

from __future__ import annotations

import argparse
import hashlib
from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
import scipy.sparse as sparse

from evaluation_data.cuad import contract_key, held_paragraphs, marked_by_contract
from lexkb import Index
from lexkb.core.clauses.heads import (
    HEAD_RULE,
    KEYWORD_RULE,
    MODEL_PATH,
    VECTOR_SCALE,
    says_names,
    word_features,
    word_sets,
    wordless,
)
from lexkb.core.embed.embedders import LocalEmbedder

REPO = Path(__file__).resolve().parent.parent


L2 = 1e-3
STEPS = 400
FOLDS = 4
MIN_DF = 5  # a word in fewer training paragraphs than this is not a feature
MAX_WORDS = 20_000
# A positive weighs at most this many negatives: marked clauses are a few paragraphs of 31,000.
MAX_POSITIVE_WEIGHT = 30.0
MIN_HEAD_F1 = 0.1
TUNED_SCALE = 2.0
THRESHOLDS = np.array(
    [0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
)


def fold_of(key: str, folds: int) -> int:
    return int(hashlib.sha256(key.encode()).hexdigest(), 16) % folds


def load_contracts(root: Path, data: Path, names: list[str]) -> list[dict]:
    """Per contract: its paragraphs' vectors (from the build's cache), texts, chunk ids, their terms
    (`word_sets`, read once for every fold), and for each category the paragraphs each marked
    clause overlaps."""
    from transforms.structure.clauses import paragraph_vectors

    index = Index.open(root)
    gold = marked_by_contract(data)
    contracts = []
    for document in index.documents():
        key = contract_key(document["document_key"])
        _, frame = index.document_paragraphs(document["document_key"])
        frame = frame.filter(pl.Series([bool(t.strip()) for t in frame["content"].to_list()]))
        texts = frame["content"].to_list()
        if not texts:
            continue
        holds = {name: held_paragraphs(texts, gold.get(key, {}).get(name, [])) for name in names}
        vectors = paragraph_vectors(texts, root / "work" / "embeddings")
        contracts.append(
            {
                "key": key,
                "texts": texts,
                "chunk_ids": frame["chunk_id"].to_list(),
                "words": word_sets(texts),
                "holds": holds,
                "vectors": vectors,
            }
        )
    return contracts


def targets(contract: dict, names: list[str]) -> np.ndarray:
    """(paragraphs x categories): does the paragraph overlap a clause marked with it?"""
    y = np.zeros((len(contract["texts"]), len(names)), dtype=bool)
    for column, name in enumerate(names):
        for paragraphs in contract["holds"][name]:
            y[paragraphs, column] = True
    return y


def vocabulary(contracts: list[dict]) -> tuple[list[str], np.ndarray]:
    """The words of at least MIN_DF training paragraphs (at most MAX_WORDS, the commonest), with
    their idf over those paragraphs."""
    df: Counter[str] = Counter()
    paragraphs = 0
    for contract in contracts:
        for words in contract["words"]:
            df.update(words)
            paragraphs += 1
    words = [w for w, n in df.most_common(MAX_WORDS) if n >= MIN_DF]
    return words, np.array([np.log(paragraphs / df[w]) for w in words], dtype=np.float32)


def features(contract: dict, words: list[str], idf: np.ndarray) -> sparse.csr_matrix:
    """(paragraphs x (words + dims)), as lexkb.core.clauses.heads reads a paragraph."""
    index = {w: i for i, w in enumerate(words)}
    rows, columns, values = [], [], []
    for row, used_words in enumerate(contract["words"]):
        used, weights = word_features(used_words, index, idf)
        rows.extend([row] * used.size)
        columns.extend(used.tolist())
        values.extend(weights.tolist())
    text_part = sparse.csr_matrix(
        (values, (rows, columns)), shape=(len(contract["texts"]), len(words))
    )
    parts = [text_part, sparse.csr_matrix(VECTOR_SCALE * contract["vectors"])]
    if (
        "tuned" in contract
    ):  # the fine-tuned clause model's chances (benchmarks/clause_finetuned.py)
        parts.append(sparse.csr_matrix(tuned_logits(contract["tuned"])))
    return sparse.hstack(parts).tocsr()


def tuned_logits(chances: np.ndarray) -> np.ndarray:
    """The fine-tuned clause model's chances as features: log-odds, clipped and halved so that
    they reach a few units as the other features do."""
    clipped = np.clip(chances.astype(np.float64), 1e-4, 1 - 1e-4)
    return (np.log(clipped / (1 - clipped)) / TUNED_SCALE).astype(np.float32)


def fit(x: sparse.csr_matrix, said: np.ndarray, y: np.ndarray, l2: float = L2, steps: int = STEPS):
    """Weights (categories x features), name weights and biases of independent logistic
    regressions, fitted together by full-batch Adam on the log loss (positives weighted up to
    MAX_POSITIVE_WEIGHT, then each category's weights normalised to mean one) plus an L2
    penalty on the feature weights. `said` (paragraphs x categories): the paragraph says the
    category's name, a feature of that category's head alone."""
    n, d = x.shape
    w = np.zeros((y.shape[1], d))
    u = np.zeros(y.shape[1])
    prior = np.clip(y.mean(axis=0), 1e-4, 1 - 1e-4)
    b = np.log(prior / (1 - prior))
    positives = y.sum(axis=0)
    up = np.minimum((n - positives) / np.maximum(positives, 1), MAX_POSITIVE_WEIGHT)
    weight = np.where(y, up[None, :], 1.0)
    weight /= weight.mean(axis=0)
    params = (w, u, b)
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    rate, beta1, beta2 = 0.05, 0.9, 0.999
    xt = x.T.tocsr()
    for step in range(1, steps + 1):
        p = 1 / (1 + np.exp(-(x @ w.T + said * u + b)))
        error = (p - y) * weight / n
        grads = [(xt @ error).T + l2 * w, (error * said).sum(axis=0), error.sum(axis=0)]
        for i, (param, grad) in enumerate(zip(params, grads, strict=True)):
            m[i] = beta1 * m[i] + (1 - beta1) * grad
            v[i] = beta2 * v[i] + (1 - beta2) * grad**2
            step_size = rate * np.sqrt(1 - beta2**step) / (1 - beta1**step)
            param -= step_size * m[i] / (np.sqrt(v[i]) + 1e-8)
    return w.astype(np.float32), u.astype(np.float32), b.astype(np.float32)


class Heads:
    """Heads fitted on some contracts, applied to others (their vocabulary goes with them)."""

    def __init__(self, contracts: list[dict], names: list[str]) -> None:
        self.names = names
        # Per category: HEAD_RULE, or KEYWORD_RULE where `fitted` chooses it.
        self.rules = np.array([HEAD_RULE] * len(names))
        self.out_of_fold: dict[str, tuple[float, float]] = {}
        self.words, self.idf = vocabulary(contracts)
        self.weights, self.name_weights, self.bias = fit(
            sparse.vstack([features(c, self.words, self.idf) for c in contracts]).tocsr(),
            np.concatenate([says_names(c["words"], names) for c in contracts]),
            np.concatenate([targets(c, names) for c in contracts]),
        )

    def __call__(self, contract: dict) -> np.ndarray:
        logits = features(contract, self.words, self.idf) @ self.weights.T + self.bias
        said = says_names(contract["words"], self.names)
        logits += said * self.name_weights
        chances = np.where(self.rules == KEYWORD_RULE, said, 1 / (1 + np.exp(-logits)))
        chances[wordless(contract["words"])] = 0.0  # as lexkb.core.clauses.labels decides
        return chances


def clause_f1(contracts: list[dict], scores: list[np.ndarray], column: int, name: str, t: float):
    """benchmarks/classify.py's measure for one category: paragraph precision, clause recall."""
    chosen = right = found = marked = 0
    for contract, table in zip(contracts, scores, strict=True):
        picked = np.flatnonzero(table[:, column] >= t)
        truth = set()
        for paragraphs in contract["holds"][name]:
            truth.update(paragraphs)
            marked += 1
            found += any(table[j, column] >= t for j in paragraphs)
        chosen += picked.size
        right += sum(int(j) in truth for j in picked)
    p = right / chosen if chosen else 0.0
    r = found / marked if marked else 0.0
    return 2 * p * r / (p + r) if p + r else 0.0


def best_threshold(
    contracts: list[dict], scores: list[np.ndarray], column: int, name: str
) -> tuple[float, float]:
    """The THRESHOLDS value of best `clause_f1` for one category over `contracts` (the lowest
    where several tie), and that F1."""
    f1s = [clause_f1(contracts, scores, column, name, t) for t in THRESHOLDS]
    best = int(np.argmax(f1s))
    return float(THRESHOLDS[best]), f1s[best]


def out_of_fold(contracts: list[dict], names: list[str], folds: int = FOLDS) -> list[np.ndarray]:
    """Each contract's probabilities from heads fitted on the other folds."""
    result: list[np.ndarray | None] = [None] * len(contracts)
    for fold in range(folds):
        heads = Heads([c for c in contracts if fold_of(c["key"], folds) != fold], names)
        for i, c in enumerate(contracts):
            if fold_of(c["key"], folds) == fold:
                result[i] = heads(c)
    return result  # type: ignore[return-value]


def fitted(contracts: list[dict], names: list[str]) -> tuple[Heads, np.ndarray]:
    """Heads fitted on `contracts`, with each category's rule and threshold chosen on their
    out-of-fold predictions: the head at its best threshold, or the keyword rule (the paragraph
    says the category's name) where that does better, or where the head's F1 is under
    MIN_HEAD_F1. Rare categories, with a few dozen marked clauses, often fit worse than their
    name says them."""
    held = out_of_fold(contracts, names)
    said = [says_names(c["words"], names) for c in contracts]
    thresholds = np.full(len(names), 0.5, dtype=np.float32)
    rules = [HEAD_RULE] * len(names)
    report: dict[str, tuple[float, float]] = {}
    for column, name in enumerate(names):
        if not any(c["holds"][name] for c in contracts):
            continue
        thresholds[column], best = best_threshold(contracts, held, column, name)
        keyword = clause_f1(contracts, said, column, name, 0.5)
        # A head this poor out of fold fires on noise at its best threshold (Most Favored
        # Nation's was 0.01); the keyword rule at least fires only where the name is said.
        if keyword > best or best < MIN_HEAD_F1:
            rules[column], thresholds[column] = KEYWORD_RULE, 0.5
        report[name] = (best, keyword)
    heads = Heads(contracts, names)
    heads.rules = np.array(rules)
    heads.out_of_fold = report
    return heads, thresholds


def main() -> None:
    from evaluation_data.cuad import categories

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared/data")
    parser.add_argument("--index", type=Path, default=REPO / "benchmarks/out/contracts/index-txt")
    parser.add_argument("--write", action="store_true", help=f"write {MODEL_PATH}")
    args = parser.parse_args()
    names = categories(args.data)
    contracts = load_contracts(args.index, args.data, names)
    heads, thresholds = fitted(contracts, names)
    for name, rule, t in zip(names, heads.rules, thresholds, strict=True):
        head, keyword = heads.out_of_fold.get(name, (0.0, 0.0))
        print(
            f"{name}: {rule}, threshold {t:.2f} (out of fold: head {head:.3f}, keyword {keyword:.3f})"
        )
    if args.write:
        MODEL_PATH.parent.mkdir(parents=True, exist_ok=True)
        words = len(heads.words)
        np.savez_compressed(
            MODEL_PATH,
            names=np.array(names),
            vocabulary=np.array(heads.words),
            idf=heads.idf,
            word_weights=heads.weights[:, :words].astype(np.float16),
            name_weights=heads.name_weights,
            vector_weights=heads.weights[:, words:],
            bias=heads.bias,
            thresholds=thresholds,
            rules=heads.rules,
            embedder=np.array(LocalEmbedder.name),
            trained_on=np.array(
                f"CUAD v1 (CC BY 4.0): {len(contracts)} contracts, "
                f"{sum(len(c['texts']) for c in contracts)} paragraphs"
            ),
        )
        digest = hashlib.sha256(MODEL_PATH.read_bytes()).hexdigest()
        print(f"wrote {MODEL_PATH}, SHA-256 {digest}: state it as MODEL_SHA256 in")
        print("lexkb/core/clauses/heads.py and in the card, models/cuad_clauses.md")
        # The query module reads the file as the fit's own features do, to float16's precision.
        from lexkb.core.clauses.heads import read_heads

        shipped = read_heads(MODEL_PATH.read_bytes())
        every = list(range(len(names)))
        gap = max(  # over paragraphs with words: labels.decide gives the others no label
            float(
                np.abs(shipped.probabilities(c["words"], c["vectors"], every) - heads(c))[
                    ~wordless(c["words"])
                ].max(initial=0.0)
            )
            for c in contracts
        )
        print(f"largest difference of the shipped heads to the fit's own: {gap:.2e}")


if __name__ == "__main__":
    main()
