"""Is a question about what this index holds? A per-query score, before any answer is written.

Calibrated relevance (lexkb.relevance) says whether a hit matches a query's words and meaning.
It cannot tell a question the index answers from one about a neighbouring subject written in the
same register: an NDA's "Receiving Party shall not disclose..." or a GDPR question about data
portability both find ADGM paragraphs about confidentiality and information security. What gives
such questions away is vocabulary the index never uses in that way:

- `defined_terms`: capitalised terms of the question ("Receiving Party", "GDPR") that never
  appear capitalised in the index. Legal texts capitalise their defined terms, and each body of
  law defines its own, so a defined term from elsewhere marks a question from elsewhere.
- `bigram_coverage`: the share of the question's adjacent term pairs that occur anywhere in the
  index ("data portability", "supervisory authority" are words it has, never side by side), and
  `bigram_rarity`, how rare those pairs are;
- `best_bigrams`: the share of those pairs that the best three hits themselves say: a
  question asked from a paragraph repeats its phrases ("client money", "reconciliation
  records"), one about a neighbouring subject finds paragraphs holding its words apart;
- `missing_mass` and `max_missing`: the IDF-weighted share of the question's terms that its best
  three hits lack, and the rarest of them (a word the index has never seen counts fully);
- the best hit's relevance and cosine, and the mean relevance of the first five.

The question's length is left out on purpose: ObliQA's questions are long and a user's are often
short, so length would teach the model that short questions are out of scope.

A logistic model over these was fitted by benchmarks/abstention.py: ObliQA dev questions of the
tune half against lawyer-marked CUAD clauses, CUAD's category descriptions and questions written
here on subjects the corpus lacks (neither data protection nor contracts), then reported on
held-out ObliQA questions, ContractNLI hypotheses and questions written from GDPR articles. The
vocabulary is built once per open index, on first use (about 3 s for 13,700 paragraphs).
"""

from __future__ import annotations

import math
import re
import threading
import weakref
from collections import Counter
from dataclasses import dataclass

import numpy as np

from lexkb.answers.index_view import IndexView
from lexkb.core.text.tokenize import tokenize
from lexkb.relevance import Calibration
from lexkb.results import Hit

FEATURES = (
    "relevance",
    "cosine",
    "mean_relevance",
    "missing_mass",
    "max_missing",
    "bigram_coverage",
    "bigram_rarity",
    "defined_terms",
    "best_bigrams",
)

# A run of capitalised words: "Receiving Party", "Confidential Information", "GDPR".
_CAPITALISED = re.compile(r"[A-Z][A-Za-z0-9]*(?:['’]s)?(?:[ -][A-Z][A-Za-z0-9]*(?:['’]s)?)*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;(\"“'‘\n]\s*)$")
_MAX_TERM_WORDS = 4


def _words(run: str) -> list[str]:
    return [re.sub(r"['’]s$", "", w) for w in re.split(r"[ -]", run) if w]


# Words capitalised only because they open a sentence or a question: "Does MiFID II ..." names
# MiFID II, not "Does MiFID II".
_OPENER_WORDS = (
    "A An The What Which Who Whom Whose When Where Why How Does Do Did Is Are Was Were Can Could "
    "May Might Must Shall Should Will Would Under In For If Our We My I Your Per As At By On "
    "To Of And Or But Any Some Each Every This That These Those It Its There Their Also Please "
    "Besides According Following After Before Since Unlike Like"
)
OPENERS = frozenset(_OPENER_WORDS.split())


def capitalised_terms(text: str) -> list[list[str]]:
    """Capitalised runs of `text` as word lists. A word that opens a sentence is capitalised by
    position, not as a term: a run that is that word alone is skipped, and an opening question
    word or auxiliary is left off a longer run."""
    found = []
    for match in _CAPITALISED.finditer(text):
        words = _words(match.group(0))
        opens = bool(_SENTENCE_START.search(text[: match.start()]))
        if opens and len(words) > 1 and words[0] in OPENERS:
            words, opens = words[1:], False
        if len(words) == 1 and (opens or len(words[0]) < 2):
            continue
        found.append(words)
    return found


@dataclass
class Vocabulary:
    """What the index says, as pairs of adjacent terms and capitalised terms."""

    bigrams: Counter[tuple[str, str]]
    terms: set[str]
    paragraphs: int

    @classmethod
    def of(cls, texts: list[str], paragraphs: int) -> Vocabulary:
        bigrams: Counter[tuple[str, str]] = Counter()
        terms: set[str] = set()
        for text in texts:
            tokens = tokenize(text)
            bigrams.update(zip(tokens, tokens[1:], strict=False))
            for match in _CAPITALISED.finditer(text):
                words = _words(match.group(0))
                for i in range(len(words)):
                    for j in range(i + 1, min(len(words), i + _MAX_TERM_WORDS) + 1):
                        terms.add(" ".join(words[i:j]))
        return cls(bigrams, terms, max(paragraphs, 1))

    def knows(self, words: list[str]) -> bool:
        if len(words) <= _MAX_TERM_WORDS:
            return " ".join(words) in self.terms
        return all(" ".join(words[i : i + 2]) in self.terms for i in range(len(words) - 1))


_vocabularies: weakref.WeakKeyDictionary[IndexView, Vocabulary] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def vocabulary(index: IndexView) -> Vocabulary:
    """The index's vocabulary, built on first use and kept as long as the index is."""
    with _lock:
        found = _vocabularies.get(index)
        if found is None:
            found = _vocabularies[index] = Vocabulary.of(
                index.vocabulary_texts(), index.paragraph_count
            )
        return found


@dataclass(frozen=True)
class ScopeSignals:
    """The features of one question (FEATURES order in `values`) and what they point at."""

    values: tuple[float, ...]
    unknown_terms: list[str]
    unseen_words: list[str]


def signals(index: IndexView, query: str, hits: list[Hit]) -> ScopeSignals:
    """Scope features of `query` with its ranked `hits` (best first)."""
    vocab = vocabulary(index)
    tokens = list(dict.fromkeys(tokenize(query)))
    idf = index.term_idf(tokens) if tokens else np.zeros(0)
    total = float(idf.sum()) or 1.0
    relevances = [h.relevance or 0.0 for h in hits]
    cosine = 0.0
    if hits and index.query_embedder is not None and index.embedder_name is not None:
        cosine = float(index.cosines(query, index.rows([hits[0].chunk_id]))[0])
    seen_by_best: set[str] = set()
    pairs_in_best: set[tuple[str, str]] = set()
    for hit in hits[:3]:
        words = tokenize(hit.text)
        seen_by_best.update(words)
        pairs_in_best.update(zip(words, words[1:], strict=False))
    missing = np.array([t not in seen_by_best for t in tokens], dtype=bool)
    missing_idf = idf * missing
    raw = tokenize(query)
    pairs = list(dict.fromkeys(zip(raw, raw[1:], strict=False)))
    scale = math.log1p(vocab.paragraphs / 0.5)
    coverage = float(np.mean([p in vocab.bigrams for p in pairs])) if pairs else 1.0
    supported = float(np.mean([p in pairs_in_best for p in pairs])) if pairs else 1.0
    rarity = (
        float(
            np.mean([math.log1p(vocab.paragraphs / (vocab.bigrams.get(p, 0) + 0.5)) for p in pairs])
        )
        / scale
        if pairs
        else 0.0
    )
    unknown = [" ".join(w) for w in capitalised_terms(query) if not vocab.knows(w)]
    values = (
        relevances[0] if relevances else 0.0,
        cosine,
        float(np.mean(relevances[:5])) if relevances else 0.0,
        float(missing_idf.sum() / total),
        float(missing_idf.max() / index.unseen_idf) if missing.any() else 0.0,
        coverage,
        rarity,
        1.0 if unknown else 0.0,
        supported,
    )
    unseen = [t for t, v in zip(tokens, idf.tolist(), strict=True) if v >= index.unseen_idf]
    return ScopeSignals(values, unknown, unseen)


# Fitted by `benchmarks/abstention.py --fit` (ObliQA tune half against CUAD clauses, category
# descriptions and out-of-scope questions; cosines from the integer query model).
# DENSE for snapshots with a query embedder, LEXICAL (no cosine) for the rest.
DENSE = Calibration(
    FEATURES,
    (1.6122, 5.8228, -0.7, -1.3901, -0.4489, 2.3728, -3.3726, -2.0842, 4.4039),
    -1.2656,
)
LEXICAL = Calibration(
    tuple(f for f in FEATURES if f != "cosine"),
    (2.8226, -0.0301, -0.424, -0.1051, 4.0394, -3.3426, -2.3021, 4.8107),
    -0.1357,
)


def model_for(index: IndexView) -> Calibration:
    return DENSE if index.query_embedder is not None else LEXICAL


def in_scope(index: IndexView, query: str, hits: list[Hit]) -> tuple[float, ScopeSignals]:
    """The chance that `query` is about what the index holds, with the signals behind it."""
    found = signals(index, query, hits)
    row = np.array([found.values])
    return float(model_for(index).apply(row, FEATURES)[0]), found
