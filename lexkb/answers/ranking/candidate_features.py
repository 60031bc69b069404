"""What lexkb knows of each paragraph a search found, as numbers a ranker learns from (issue 58).

A search orders paragraphs by words and meaning; a lawyer orders them by what answers: the
operative provision before a definition, a recital, a note, front matter or an amending
provision ("insert the following definition"), the provision of the document the question
names, the one that holds a period when the question asks "how long". Each candidate's row
holds the search's own signals (rank, score, calibrated relevance), the relevance model's
chance that it answers, the unit's kind read from its reference and words, whether the question
names its document, the question's type against what the paragraph holds, and how much of the
question's rarer words it and its headings say. Training (training/ranker.py) and answering
read the same function, so the model sees at run time what it learnt from.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

from lexkb.answers.index_view import IndexView
from lexkb.answers.passages.quantities import find_quantities
from lexkb.answers.question import named_laws
from lexkb.core.judge.shipped import answers
from lexkb.core.text.tokenize import tokenize
from lexkb.results import Hit

FEATURES = (
    "rank",
    "score_gap",
    "relevance",
    "answers",
    "answers_rank",
    "answers_gap",
    "relevance_gap",
    "cosine",
    "cosine_gap",
    "definition",
    "recital",
    "amending",
    "front_matter",
    "annex",
    "short",
    "length",
    "document_share",
    "document_rank",
    "names_document",
    "names_any_document",
    "asks_when_holds_period",
    "asks_amount_holds_amount",
    "asks_meaning",
    "asks_who",
    "repeated",
    "rare_words_held",
    "words_held",
    "heading_words_held",
)

_DEFINITION = re.compile(
    r"^\W*(?:\(?[a-z0-9]{1,4}[.)]\s*)?[“\"‘'][^”\"’']{2,80}[”\"’']\s+(?:means|has the meaning|"
    r"includes|shall mean|refers to)\b|\bmeans\b.{0,40}$|^\s*in this (?:act|regulation|part|"
    r"section|agreement|chapter)[^.]{0,40}:",
    re.I,
)
_AMENDING = re.compile(
    r"\b(?:is|are|shall be) (?:amended|replaced|inserted|deleted|repealed|substituted)\b|"
    r"\b(?:insert|substitute|omit)(?:ed)?\b.{0,40}[“\"‘']|\bthe following (?:is|are) inserted\b|"
    r"\bfor [“\"‘'][^”\"’']{1,80}[”\"’'] substitute\b",
    re.I,
)
_RECITAL = re.compile(r"^\s*(?:recital|whereas)\b|\bwhereas\b", re.I)
_ANNEX = re.compile(r"\b(?:annex|schedule|appendix|exhibit)\b", re.I)
_FRONT_REF = re.compile(r"^(?:p\.\s*\d+\s*)?¶\s*\d+$")
_ASKS_WHEN = re.compile(
    r"\b(?:how long|how soon|how quickly|when|deadline|by when|within|how many (?:days|months|"
    r"years|weeks|hours)|time limit|period|until|expire|expiry|last)\b",
    re.I,
)
_ASKS_AMOUNT = re.compile(
    r"\b(?:how much|how many|fine|penalt|fee|amount|cost|cap|threshold|minimum|maximum|"
    r"percent|per cent|rate|limit|price|capital)\w*|%",
    re.I,
)
_ASKS_MEANING = re.compile(
    r"\b(?:what (?:is|are|does) (?:an? |the )?[\w\s-]{1,40}(?:mean|defined)|definition|"
    r"define[sd]?|meaning of|counts? as|what counts|qualif(?:y|ies) as)\b",
    re.I,
)
_ASKS_WHO = re.compile(r"^\W*(?:who|whom|which (?:party|person|body|authority|entity))\b", re.I)


def asks_period(question: str) -> bool:
    """The question asks when or for how long ("how long", "deadline", "within")."""
    return bool(_ASKS_WHEN.search(question))


def asks_amount(question: str) -> bool:
    """The question asks for an amount, a rate or a limit ("how much", "fee", "threshold")."""
    return bool(_ASKS_AMOUNT.search(question))


def candidate_features(
    index: IndexView,
    question: str,
    hits: Sequence[Hit],
    chances: np.ndarray | None = None,
    asked: str | None = None,
) -> np.ndarray:
    """One row of FEATURES per hit, in the hits' order (a search's, best first). `chances`:
    the relevance model's chance each hit answers, asked of it here when not given. `asked`:
    the words searched, where `ask` scoped the search to the documents the question names and
    left their names out (lexkb.answers.question.named_laws.asked_of): the words a paragraph
    holds and its cosine are read against them, as a document's name says nothing of which of
    its paragraphs answers ("the Babcock & Wilcox intellectual property agreement" matched a
    clause on inventions over the one on governing law)."""
    count = len(hits)
    rows = np.zeros((count, len(FEATURES)), dtype=np.float64)
    if not count:
        return rows
    if chances is None:
        chances = answers(question, [h.text for h in hits])
    scores = np.array([h.score or 0.0 for h in hits], dtype=np.float64)
    top = float(scores.max()) or 1.0
    documents = [h.document_key for h in hits]
    share = Counter(documents)
    order_of_document = {d: n for n, d in enumerate(dict.fromkeys(documents))}
    named = named_laws.documents_named(index, question)
    asks_when = asks_period(question)
    amount_asked = asks_amount(question)
    asks_meaning = bool(_ASKS_MEANING.search(question))
    asks_who = bool(_ASKS_WHO.search(question))
    words = list(dict.fromkeys(tokenize(asked or question)))
    idf = index.term_idf(words) if words else np.zeros(0)
    rare = idf / (idf.sum() or 1.0)
    chances = np.asarray(chances, dtype=np.float64)
    answer_rank = np.argsort(np.argsort(-chances))
    relevances = np.array([h.relevance or 0.0 for h in hits])
    cosines = _cosines(index, asked or question, hits)
    seen: set[str] = set()
    for n, hit in enumerate(hits):
        text = hit.text or ""
        ref = hit.ref or ""
        held = set(tokenize(text))
        heading = set(tokenize(" ".join(hit.section_path or [])))
        kinds = {q.kind for q in find_quantities(text[:2000])}
        opening = " ".join(text.split())[:200].casefold()
        rows[n] = (
            math.log1p(n),
            (scores[n] - top) / (abs(top) or 1.0),
            relevances[n],
            float(chances[n]),
            math.log1p(float(answer_rank[n])),
            float(chances[n] - chances.max()),
            float(relevances[n] - relevances.max()),
            float(cosines[n]),
            float(cosines[n] - cosines.max()),
            float(bool(_DEFINITION.search(text[:300]))),
            float(bool(_RECITAL.search(ref) or _RECITAL.match(text[:20]))),
            float(bool(_AMENDING.search(text[:600]))),
            float(not ref or bool(_FRONT_REF.match(ref))),
            float(bool(_ANNEX.search(ref) or any(_ANNEX.match(p) for p in hit.section_path or []))),
            float(len(text) < 80),
            math.log1p(len(text)),
            share[hit.document_key] / count,
            math.log1p(order_of_document[hit.document_key]),
            float(hit.document_key in named),
            float(bool(named)),
            float(asks_when and bool(kinds & {"period", "date"})),
            float(amount_asked and bool(kinds & {"amount", "percent", "number"})),
            float(asks_meaning),
            float(asks_who),
            float(opening in seen),
            float(sum(r for w, r in zip(words, rare.tolist(), strict=True) if w in held)),
            float(sum(w in held for w in words) / (len(words) or 1)),
            float(sum(w in heading for w in words) / (len(words) or 1)),
        )
        seen.add(opening)
    return rows


def _cosines(index: IndexView, question: str, hits: Sequence[Hit]) -> np.ndarray:
    """Each hit's cosine with the question (0 for all where the index has no embedder)."""
    if index.query_embedder is None or index.embedder_name is None:
        return np.zeros(len(hits))
    rows = index.rows([h.chunk_id for h in hits])
    return np.asarray(index.cosines(question, rows), dtype=np.float64)
