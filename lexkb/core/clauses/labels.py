"""Which contract paragraph takes which clause label, decided one way for the build's
`clauses` table (transforms.structure.clauses) and for `classify` (lexkb.answers.classify), so that a
search filtered by clause type and a `classify` call agree.

A label named as one of CUAD's fitted categories, and not described otherwise, is decided by its
fitted rule (lexkb.core.clauses.heads); any other label zero-shot: the local model's cosine
between the paragraph and the label's name and description, plus NAME_BONUS when the paragraph
says the label's name. MIN_SCORE and the bonus were chosen on one half of CUAD's contracts
(benchmarks/classify.py).

A build without an embedder (`--embedder none`) loads no model, so it cannot read a head's or a
zero-shot label's vector: `decide_by_name` labels a paragraph with every label whose name it says,
the keyword rule the fit already chose for CUAD's rare categories and the zero-shot name test
without the cosine, and the table records NO_EMBEDDER as the method.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping

import numpy as np

from lexkb.core.clauses.default_types import DEFAULT_TYPES
from lexkb.core.clauses.heads import (
    MODEL_SHA256,
    clause_heads,
    name_key,
    says_names,
    word_sets,
    wordless,
)
from lexkb.core.embed.sentence_vectors import sentence_vectors

MIN_SCORE = 0.55
NAME_BONUS = 0.5
ZERO_SHOT = "zero-shot"
NO_EMBEDDER = "keyword: no embedder"
# The document type whose paragraphs a build labels (a regulation's paragraph about terminating an
# authorisation is not a termination clause).
LABELLED_TYPE = "contract"


def build_types() -> dict[str, str]:
    """What a build labels contracts with: the default types, then every fitted category that
    is not one of them by name (CUAD's Governing Law is the default governing law)."""
    labels = dict(DEFAULT_TYPES)
    named = {name_key(name) for name in labels}
    labels.update({n: n for n in clause_heads().names if name_key(n) not in named})
    return labels


def decider() -> dict[str, object]:
    """What decides a build's labels, as its snapshot records it (the manifest's
    `clause_model`): the shipped heads' file, the local model, the zero-shot settings and the
    build's label set. `classify` reads a contract's labels from the snapshot only while this
    is unchanged, so a lexkb whose heads or defaults have moved since the build decides them
    itself rather than report what an older model decided."""
    from lexkb.core.embed.embedders import LocalEmbedder

    labels = json.dumps(build_types(), sort_keys=True).encode()
    return {
        "heads_sha256": MODEL_SHA256,
        "embedder": LocalEmbedder.name,
        "min_score": MIN_SCORE,
        "name_bonus": NAME_BONUS,
        "labels_sha256": hashlib.sha256(labels).hexdigest(),
    }


def methods(labels: Mapping[str, str]) -> dict[str, str]:
    """How each label is decided: by its fitted rule (a head, or the keyword rule the fit chose
    for some rare categories) when it is named as a fitted category and not described otherwise
    (its description is its name, or lexkb's default one), else zero-shot."""
    heads = clause_heads()
    found = {}
    for name, description in labels.items():
        column = heads.column(name)
        fitted = description in (name, DEFAULT_TYPES.get(name.casefold()))
        found[name] = heads.rules[column] if column is not None and fitted else ZERO_SHOT
    return found


def decide(
    texts: list[str],
    labels: Mapping[str, str],
    vectors: np.ndarray | None = None,
    min_score: float = MIN_SCORE,
    embed: Callable[[list[str]], np.ndarray] = sentence_vectors,
) -> tuple[np.ndarray, np.ndarray]:
    """(paragraphs x labels) scores and whether each paragraph takes each label: a fitted
    head's probability against its own threshold, a zero-shot score against `min_score`.

    A clause's first sentence states its provision, and a second can blur it when the paragraph
    is read whole ("... construed in accordance with the Laws of Greece ... If the English or
    American legal meaning differs ..."). So where a paragraph of several sentences leans to a
    fitted category (half its threshold or more) without taking it, its first sentence read
    alone decides. It labels the NDA's governing law; on 64 CUAD contracts the macro-F1 of the
    41 categories moves from 0.5960 to 0.5955 and that of the default types stays at 0.3131.
    `embed`: the local model's vectors of texts (a build passes its cache's)."""
    table, taken = _decide(texts, labels, embed(texts) if vectors is None else vectors, min_score)
    heads, how = clause_heads(), methods(labels)
    fitted = np.array([how[name] != ZERO_SHOT for name in labels])
    if not fitted.any():
        return table, taken
    thresholds = np.array(
        [heads.thresholds[heads.column(name)] if how[name] != ZERO_SHOT else 1.0 for name in labels]
    )
    leaning = fitted & (table >= thresholds / 2) & ~taken
    rows = [row for row in np.flatnonzero(leaning.any(axis=1)) if sentences(texts[row])]
    if rows:
        firsts = [sentences(texts[row])[0] for row in rows]
        scored, took = _decide(firsts, labels, embed(firsts), min_score)
        took &= leaning[rows]
        taken[rows] |= took
        table[rows] = np.where(took, scored, table[rows])
    return table, taken


# A sentence ends at a full stop or semicolon before a capital or an opening bracket; shorter
# pieces ("4.10.", "(a)") are labels, not provisions.
_SENTENCE_END = re.compile(r"(?<=[.;])\s+(?=[A-Z(])|\n+")
_MIN_SENTENCE_CHARS = 40


def sentences(text: str) -> list[str]:
    """The sentences of a paragraph that has more than one, each long enough to state a
    provision; none for a paragraph of one sentence (it is read whole)."""
    found = [s.strip() for s in _SENTENCE_END.split(text)]
    found = [s for s in found if len(s) >= _MIN_SENTENCE_CHARS]
    return found if len(found) > 1 else []


def _decide(
    texts: list[str], labels: Mapping[str, str], vectors: np.ndarray, min_score: float
) -> tuple[np.ndarray, np.ndarray]:
    """`decide` for `texts` read whole."""
    words = word_sets(texts)
    how = methods(labels)
    names = list(labels)
    table = np.zeros((len(texts), len(names)), dtype=np.float32)
    taken = np.zeros(table.shape, dtype=bool)
    zero = [i for i, name in enumerate(names) if how[name] == ZERO_SHOT]
    if zero:
        chosen = {names[i]: labels[names[i]] for i in zero}
        table[:, zero] = scores(texts, chosen, vectors=vectors, words=words)
        taken[:, zero] = table[:, zero] >= min_score
    fitted = [i for i, name in enumerate(names) if how[name] != ZERO_SHOT]
    if fitted:
        heads = clause_heads()
        # Each a fitted category's column (`methods`).
        columns = [c for i in fitted if (c := heads.column(names[i])) is not None]
        table[:, fitted] = heads.probabilities(words, vectors, columns)
        taken[:, fitted] = table[:, fitted] >= heads.thresholds[columns]
    empty = wordless(words)
    table[empty] = 0.0
    taken[empty] = False
    return table, taken


def decide_by_name(texts: list[str], labels: Mapping[str, str]) -> tuple[np.ndarray, np.ndarray]:
    """(paragraphs x labels) 1.0 where the paragraph says the label's name (every term of it),
    and whether it takes the label: `decide` with no vectors, so no model is loaded. A fitted
    category and a zero-shot label read alike here, by their name."""
    said = says_names(word_sets(texts), list(labels))
    return said, said > 0


def scores(
    texts: list[str],
    labels: dict[str, str],
    bonus: float = NAME_BONUS,
    vectors: np.ndarray | None = None,
    words: list[set[str]] | None = None,
) -> np.ndarray:
    """(paragraphs x labels) zero-shot scores. `vectors` and `words` (`word_sets`): the
    paragraphs' local-model vectors and terms, when the caller has them (a build's cache),
    else they are computed here."""
    label_vectors = sentence_vectors([f"{name}: {text}" for name, text in labels.items()])
    paragraph_vectors = sentence_vectors(texts) if vectors is None else vectors
    similarity: np.ndarray = paragraph_vectors @ label_vectors.T
    said = says_names(word_sets(texts) if words is None else words, list(labels))
    similarity += bonus * said
    return similarity
