"""Why an answer is what it is, in a sentence a person reads; the numbers go to `details`.

"scope 0.12 < 0.6" tells a compliance officer nothing. An abstention says that the documents
do not answer and names the nearest provisions found, so the person can look for themselves; a
qualified answer says what to check; a direct one says which provision answers. The figures the
decision was made from (scope, the relevance model's chances, relevance) stay beside it in the
answer's `details`, for those who audit the decision.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from lexkb.answers.ranking.answered import NOT_ANSWERED, OUT_OF_SCOPE
from lexkb.core.text.tokenize import tokenize
from lexkb.core.vocabulary import AbstentionReason
from lexkb.results import Hit

NEAREST = 2
NOT_HELD = AbstentionReason.NOT_HELD

_WORDING = {
    "predictive": "it asks what will happen, and the documents say only what their texts say now",
    "estimation": "it asks for an estimate, and the documents state no such figure",
    "own_data": "it asks about your own records, which these documents do not hold",
    "advice": "it asks for advice or an opinion; the documents can say what they require, not "
    "which choice to make",
}


def _nearest(hits: Sequence[Hit]) -> str:
    cited = [h.citation for h in hits[:NEAREST]]
    return " and ".join(cited)


def abstention(
    reason: str | None,
    hits: Sequence[Hit],
    unknown_terms: Sequence[str] = (),
    not_held: Sequence[str] = (),
    served: str = "",
) -> str:
    """One or two sentences: why nothing is answered, and where the nearest text is. A question
    naming only laws the index lacks (`not_held`) is told which documents are served instead."""
    nearest = _nearest(hits)
    near = f" The nearest provisions found are {nearest}." if nearest else ""
    if reason == NOT_HELD:
        asked = " or ".join(not_held) or "the law the question names"
        return (
            f"This index does not hold {asked}: the documents served are "
            f"{served or 'others'}, and none of them mentions it."
        )
    if reason in _WORDING:
        return f"Not answered: {_WORDING[reason]}." + near
    if reason == OUT_OF_SCOPE:
        terms = f" (they never use {', '.join(unknown_terms[:3])})" if unknown_terms else ""
        return f"The documents in this index do not cover this subject{terms}." + near
    if reason == NOT_ANSWERED:
        return "None of the documents answers this question." + (
            f" The nearest provisions found are {nearest}, and neither reads as answering it."
            if nearest
            else ""
        )
    if reason == "ambiguous_query":
        return "The question names too little to look up; say what rule or document you mean."
    if reason == "conflicting_evidence":
        return (
            f"The documents disagree on this: {nearest} say different things."
            if nearest
            else "The documents disagree on this."
        )
    return "No provision found answers this question." + near


# Below this best chance that a paragraph found answers, a qualified answer says plainly that
# the documents may not answer the question at all.
WEAK_CHANCE = 0.1


def qualified(cited: Sequence[str], chance: float | None = None, unsaid: Sequence[str] = ()) -> str:
    """Why an answer is qualified: the provisions quoted are the nearest found, not surely
    the answer; where the relevance model reads none of them as answering (`chance`, the best
    of the hits, under WEAK_CHANCE), that the documents may be silent. `unsaid`: words of the
    question the provisions quoted never use, the plainest reason they may not answer it."""
    nearest = cited[:NEAREST]
    where = " and ".join(nearest) or "the provisions quoted"
    several = len(nearest) > 1
    missing = ""
    if unsaid:
        quoted = [f"'{w}'" for w in unsaid]
        listed = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
        missing = f" ({'they do' if several else 'it does'} not say {listed})"
    if chance is not None and chance < WEAK_CHANCE:
        return (
            f"The documents may not answer this: the nearest provisions found are {where}"
            f"{missing}, quoted here; check them before relying on them."
        )
    return (
        f"The nearest the documents come to an answer is {where}{missing}; read "
        f"{'them' if several else 'it'} to check that the answer is there."
    )


# The question's words a qualified answer names as missing from its sources, at most.
UNSAID_WORDS = 3
# Words that frame a question rather than say what it is about ("how long", "must I").
_FRAMING = frozenset(
    tokenize(
        "long much many often soon someone anyone anybody somebody anything something must "
        "need needs allowed able can may might ok okay please tell know say says said want "
        "way kind sort case happen happens"
    )
)
# A word held by more than about one paragraph in eight (IDF under this) says too little to
# be worth naming as missing.
_SAYS_LITTLE = 2.0


def unsaid(
    question: str,
    texts: Sequence[str],
    idf: Callable[[list[str]], Iterable[float]],
    names: Sequence[str] = (),
) -> list[str]:
    """The question's rarest words (by the index's IDF, at most UNSAID_WORDS) that none of
    `texts` uses, as the question writes them: "hours" where a provision speaks of "days".
    Words of `names` (the sources' citations: "DORA, Article 5") and framing words aside."""
    said = {term for text in [*texts, *names] for term in tokenize(text)} | _FRAMING
    words: dict[str, str] = {}
    for word in re.findall(r"[^\W_][\w'’-]*", question):
        terms = tokenize(word)
        if terms and not set(terms) & said:
            words.setdefault(terms[0], word)
    if not words:
        return []
    weights = idf(list(words))
    ranked = sorted(zip(weights, words.values(), strict=True), key=lambda pair: -pair[0])
    return [word for weight, word in ranked[:UNSAID_WORDS] if weight >= _SAYS_LITTLE]


def direct(cited: Sequence[str]) -> str:
    where = cited[0] if cited else "the provision quoted"
    return f"Answered from {where}, which reads as answering the question."
