"""Clause types learned from lawyer-marked contracts: CUAD's 41 categories ("Cap On Liability",
"Non-Compete", "Change Of Control", ...), each a logistic regression with its own decision
threshold.

Zero-shot labels (lexkb.answers.classify) know a type only by its name and a line of
description; these heads were fitted on the paragraphs CUAD's lawyers marked, so they know what
such clauses look like when they do not say the category's name. A head reads three things of
a paragraph: the local model's vector, which of the fit's vocabulary of stemmed words
(lexkb.core.text.tokenize) it uses, weighted by their rarity (idf) and normalised, and whether it says the
category's name (all its terms, as zero-shot labels' bonus reads it). The words carry what
the model's 384 dimensions blur ("escrow", "audit", "insurance"): on the held-out half of the
contracts, words and vector together do better than either alone (benchmarks/classify.py).

The fit, its vocabulary and its thresholds come from benchmarks/clause_head_fit.py.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from lexkb.core.text.tokenize import tokenize

# A category's rule: its fitted head, or, where the fit found that saying the category's name
# did better on contracts it had not seen (rare categories), that alone.
HEAD_RULE, KEYWORD_RULE = "fitted", "keyword"
MODEL_PATH = Path(__file__).resolve().parent / "models" / "cuad_clauses.npz"
# The shipped file's SHA-256, as its card (models/cuad_clauses.md) states; a snapshot records it
# among what decided its clause labels (lexkb.core.clauses.labels.decider).
MODEL_SHA256 = "0ba35e98428963371b6a2c81da71f3be80dd9ea2c9c295a19f66a6c506d16422"
# Features are scaled so that both kinds reach logits of a few units with small weights: a unit
# vector's components are about 0.05, a paragraph's word weights sum to one in squares.
VECTOR_SCALE = 20.0
WORD_SCALE = 5.0
# "Non-solicitation", "anti-assignment": the clause says "shall not solicit", "may not assign",
# so a name's negating prefix is not a word to look for.
_NEGATING = frozenset({"non", "anti"})


def word_sets(texts: list[str]) -> list[set[str]]:
    """Each text's terms as lexkb.core.text.tokenize reads them (stemmed), tokenized once for every label
    that looks at words."""
    return [set(tokenize(t)) for t in texts]


def wordless(words: list[set[str]]) -> np.ndarray:
    """(texts,) True where a text (its `word_sets`) has no word: "[*]", a drawn line, "(a)".
    Such a paragraph states no clause, whatever its vector lies near (the heads fitted before
    CUAD's labels left these out put its redaction marks at 0.99 Non-Compete), so it takes no
    label."""
    return np.array([not w for w in words], dtype=bool)


def says_names(words: list[set[str]], names: list[str]) -> np.ndarray:
    """(texts x names) 1.0 where the text (its `word_sets`) uses every term of the name, else
    0.0."""
    said = np.zeros((len(words), len(names)), dtype=np.float32)
    for column, name in enumerate(names):
        if terms := set(tokenize(name)) - _NEGATING:
            said[:, column] = [terms <= w for w in words]
    return said


def word_features(
    words: set[str], vocabulary: dict[str, int], idf: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The vocabulary columns a text's `words` use and their values: idf, normalised, scaled."""
    columns = np.array(sorted({vocabulary[t] for t in words if t in vocabulary}))
    if columns.size == 0:
        return columns.astype(np.int64), np.zeros(0, dtype=np.float32)
    values = idf[columns]
    return columns, (WORD_SCALE * values / np.linalg.norm(values)).astype(np.float32)


@dataclass(frozen=True)
class ClauseHeads:
    names: tuple[str, ...]
    vocabulary: dict[str, int]
    idf: np.ndarray  # (words,)
    word_weights: np.ndarray  # (categories, words)
    name_weights: np.ndarray  # (categories,): the paragraph says the category's name
    vector_weights: np.ndarray  # (categories, dims)
    bias: np.ndarray  # (categories,)
    thresholds: np.ndarray  # (categories,)
    rules: tuple[str, ...]  # (categories,): HEAD_RULE or KEYWORD_RULE
    trained_on: str

    def column(self, name: str) -> int | None:
        """The category called `name`, in any case and spacing ("non-compete", "Non-Compete")."""
        wanted = name_key(name)
        return next((i for i, n in enumerate(self.names) if name_key(n) == wanted), None)

    def probabilities(
        self, words: list[set[str]], vectors: np.ndarray, columns: list[int]
    ) -> np.ndarray:
        """(paragraphs x chosen categories): the probability that each paragraph is such a
        clause (1 or 0 under the keyword rule), from its `word_sets` and its local-model
        vector."""
        logits = VECTOR_SCALE * vectors @ self.vector_weights[columns].T + self.bias[columns]
        said = says_names(words, [self.names[c] for c in columns])
        logits += said * self.name_weights[columns]
        weights = self.word_weights[columns]
        for row, used_words in enumerate(words):
            used, values = word_features(used_words, self.vocabulary, self.idf)
            if used.size:
                logits[row] += weights[:, used] @ values
        keyword = np.array([self.rules[c] == KEYWORD_RULE for c in columns])
        return np.where(keyword, said, 1 / (1 + np.exp(-logits)))


def name_key(name: str) -> str:
    """A clause type's name as compared: case, hyphens and spacing aside."""
    return " ".join(name.replace("-", " ").split()).casefold()


@cache
def clause_heads() -> ClauseHeads:
    """The shipped heads, read once per process and refused unless the file is the one its card
    states (MODEL_SHA256)."""
    data = MODEL_PATH.read_bytes()
    if hashlib.sha256(data).hexdigest() != MODEL_SHA256:
        raise RuntimeError(
            f"{MODEL_PATH.name} is not the file shipped (its SHA-256 differs from the card's): "
            "refit it with benchmarks/clause_head_fit.py --write, which prints the new one"
        )
    return read_heads(data)


def read_heads(data: bytes) -> ClauseHeads:
    """Heads from the bytes of a file benchmarks/clause_head_fit.py wrote. They are only valid
    over the vectors of the model they were fitted on, so another local model is refused
    rather than misread."""
    from lexkb.core.embed.embedders import LocalEmbedder

    with np.load(io.BytesIO(data), allow_pickle=False) as saved:
        if str(saved["embedder"]) != LocalEmbedder.name:
            raise RuntimeError(
                f"{MODEL_PATH.name} was fitted on {saved['embedder']} vectors, not on "
                f"{LocalEmbedder.name}'s: refit it with benchmarks/clause_head_fit.py --write"
            )
        words = [str(w) for w in saved["vocabulary"]]
        return ClauseHeads(
            tuple(str(n) for n in saved["names"]),
            {w: i for i, w in enumerate(words)},
            saved["idf"].astype(np.float32),
            saved["word_weights"].astype(np.float32),
            saved["name_weights"].astype(np.float32),
            saved["vector_weights"].astype(np.float32),
            saved["bias"].astype(np.float32),
            saved["thresholds"].astype(np.float32),
            tuple(str(r) for r in saved["rules"]),
            str(saved["trained_on"]),
        )
