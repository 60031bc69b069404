"""Guardrails: which questions a citation-bound assistant should not answer from this index.

A knowledge base of regulations can say what a text requires. It cannot say what a regulator
will do next year (predictive), put a number on something the texts do not state (estimation),
choose for the asker (advice or opinion), know the asker's own records (own data), or answer
about law it does not hold (out of scope). Such a question gets a refusal with its reason and
three questions this index can answer, made from its own headings.

Requirement questions phrased for the asker ("do we need to...", "must our firm...", "are we
required to...") are allowed: they ask what the rules say, not what to choose.

The first four types are read from the wording (patterns below); out of scope is judged against
the index by `evidence` (lexkb.answers.evidence), as `ask` judges it: the subject model reads
the index as not holding what the question is about, or the question names a law the index
neither holds nor mentions. Which types are refused is a setting.
`ask` refuses advice from the wording alone; a predictive, estimation or own-data wording is
refused only when the documents do not answer it ("How long will the copyright last?" asks
what § 302 says, whatever its tense).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from lexkb import limits as check
from lexkb.answers.evidence import EvidenceSettings, evidence
from lexkb.answers.index_view import IndexView
from lexkb.answers.ranking.answered import MIN_ANSWERS, OUT_OF_SCOPE
from lexkb.core.vocabulary import AbstentionReason
from lexkb.results import Hit

# The reasons `evidence` declines for that say the index does not cover the question.
_NOT_COVERED = (AbstentionReason.OUT_OF_SCOPE, AbstentionReason.NOT_HELD)
# Keyword hits whose headings the suggestions of what to ask are drawn from.
_SUGGESTION_DEPTH = 20

ALLOWED = "allowed"
# The types a question can be refused as, each also the reason its answer abstains.
TYPES = (
    AbstentionReason.PREDICTIVE,
    AbstentionReason.ESTIMATION,
    AbstentionReason.ADVICE,
    AbstentionReason.OWN_DATA,
    OUT_OF_SCOPE,
)

_I = re.IGNORECASE
_FIRST_PERSON = r"(?:we|i|us|our|my|me)"
PATTERNS: dict[str, tuple[re.Pattern[str], ...]] = {
    "predictive": (
        re.compile(
            r"\b(?:next|coming|upcoming|future|following)\s+(?:year|years|month|months|"
            r"quarter|review|evaluation|crisis|cycle)\b",
            _I,
        ),
        re.compile(r"\b(?:predict|forecast|anticipat\w*|foresee)\b", _I),
        re.compile(
            r"\b(?:likely|expected|going|set)\s+to\s+(?:change|be|become|increase|"
            r"decrease|tighten|introduce|publish|respond|develop)\b",
            _I,
        ),
        re.compile(r"\b(?:in|over)\s+the\s+(?:future|coming|next)\b", _I),
        re.compile(r"\bgoing\s+forward\b|\bthis\s+year\b|\bsoon\b", _I),
        re.compile(
            r"\b(?:when|will|how)\s+will\b|\bwill\s+(?:the\s+)?(?:regulator|fsra|"
            r"authority|rules?|regime|requirements?|law|\w+\s+(?:be|become|face))",
            _I,
        ),
        re.compile(r"\bwill\b[^?]*\b(?:in|by)\s+20\d\d\b", _I),
    ),  # fmt: skip
    "estimation": (
        re.compile(r"\b(?:estimate|approximately|roughly|ballpark|calculate|budget)\b", _I),
        re.compile(r"\bhow\s+(?:much|long)\s+(?:will|would|does|do)\b.*\b(?:cost|take|need)\b", _I),
        re.compile(r"\bhow\s+much\s+(?:will|would)\b", _I),
        re.compile(r"\bhow\s+many\b[^?]*\b(?:will|would|should|are\s+authori[sz]ed|firms)\b", _I),
        re.compile(r"\b(?:chances?|probability|odds|percentage\s+of)\b", _I),
        re.compile(r"\bwhat\s+would\s+" + _FIRST_PERSON + r"\b", _I),
        re.compile(r"\bhow\s+long\s+will\b", _I),
        re.compile(r"\bhow\s+much\s+time\b", _I),
    ),  # fmt: skip
    "advice": (
        re.compile(r"\bshould\s+" + _FIRST_PERSON + r"\b", _I),
        re.compile(r"\bshould\s+(?:our|my)\s+\w+", _I),
        re.compile(r"\b(?:do|don't)\s+you\s+(?:think|recommend|suggest|believe)\b", _I),
        re.compile(r"\bin\s+your\s+(?:opinion|view)\b|\byour\s+(?:opinion|view)\b", _I),
        re.compile(r"\bwould\s+you\s+(?:recommend|advise|suggest)\b", _I),
        re.compile(r"\bwhat\s+(?:do|would)\s+you\s+(?:recommend|advise|suggest)\b", _I),
        re.compile(r"\bis\s+it\s+(?:a\s+good\s+idea|better|worth|wise|advisable|fair)\b", _I),
        re.compile(r"\b(?:the\s+)?(?:best|better)\s+(?:choice|option|jurisdiction|way)\b", _I),
        re.compile(r"\bwhich\s+\w+\s+should\b", _I),
        re.compile(r"\b(?:advise|recommend)\s+(?:us|me|our)\b", _I),
    ),  # fmt: skip
    "own_data": (
        re.compile(r"\b(?:is|are|was|were)\s+(?:our|my)\b", _I),
        re.compile(r"\b(?:did|have|has)\s+(?:we|i)\b", _I),
        re.compile(r"\bdoes\s+(?:our|my)\b", _I),
        re.compile(r"\b(?:which|how\s+many|how\s+much)\s+(?:of\s+)?(?:our|my)\b", _I),
        re.compile(
            r"\b(?:in|from|of)\s+(?:our|my)\s+(?:database|records|files|systems?|"
            r"account|accounts|data|logs|books)\b",
            _I,
        ),
        re.compile(r"\bhow\s+much\s+\w+(?:\s+\w+)?\s+do\s+(?:we|i)\s+(?:hold|have|own)\b", _I),
        re.compile(r"\bwhat\s+(?:does|did)\s+(?:our|my)\b|\bwhat\s+did\s+(?:we|i)\b", _I),
        re.compile(r"\bwhat\s+is\s+the\s+\w+\s+of\s+(?:our|my)\b", _I),
        re.compile(r"\bcheck\s+(?:whether|if)\s+(?:our|my)\b", _I),
        re.compile(r"\b(?:our|my)\s+(?:firm's|company's)\b", _I),
    ),  # fmt: skip
}
# Wording that asks what the rules require of the asker: never advice or own data by itself.
_REQUIREMENT = re.compile(
    r"\b(?:do|does)\s+(?:we|i|our\s+\w+)\s+need\s+to\b|\b(?:must|shall)\s+(?:we|i|our)\b"
    r"|\b(?:are|am|is)\s+(?:we|i|our\s+\w+)\s+(?:required|obliged|permitted|allowed)\b",
    _I,
)
# Checked in this order: advice before estimation ("what would you advise"), own data last.
_ORDER = ("advice", "predictive", "estimation", "own_data")


@dataclass(frozen=True)
class GuardrailSettings:
    forbidden: frozenset[str] = frozenset(TYPES)  # types refused; any of TYPES
    min_scope: float = 0.6  # as lexkb.answers.evidence.EvidenceSettings.min_scope
    min_answers: float = MIN_ANSWERS  # as EvidenceSettings.min_answers
    patterns: Mapping[str, Sequence[re.Pattern[str]]] = field(default_factory=lambda: PATTERNS)


@dataclass(frozen=True)
class Guardrail:
    """`question_type` is "allowed" or one of TYPES; `matched` the words that decided it."""

    question: str
    question_type: str
    allowed: bool
    reason: str
    matched: str | None
    scope: float | None
    suggestions: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def question_type(
    question: str, settings: GuardrailSettings | None = None
) -> tuple[str, str | None]:
    """The type the wording gives `question` ("allowed" when none), and the words that did."""
    settings = settings or GuardrailSettings()
    requirement = _REQUIREMENT.search(question)
    for kind in _ORDER:
        for pattern in settings.patterns.get(kind, ()):
            found = pattern.search(question)
            if found and not (requirement and kind in ("advice", "own_data")):
                return kind, found.group(0)
    return ALLOWED, None


REFUSALS = {
    "predictive": "it asks what will happen, and the index holds only what the texts say now",
    "estimation": "it asks for an estimate that the texts do not state",
    "advice": "it asks for advice or an opinion; the index can say what the texts require, "
    "not which choice to make",
    "own_data": "it asks about your own records, which this index does not hold",
    "out_of_scope": "this index does not cover the subject",
}


# Headings that name a part of every text, not a subject to ask about.
_GENERIC = frozenset(
    {
        "guidance", "application", "interpretation", "introduction", "definitions", "general",
        "scope", "purpose", "citation", "commencement", "contents", "schedule", "annex",
        "appendix", "notes", "overview", "short title", "subject matter",
    }
)  # fmt: skip
# A heading's numbering: "Article 5", "4.3", "CHAPTER III" (a roman number only after a word
# such as "Chapter", in capitals, so that "Civil liability" keeps its first word).
_NUMBERING = re.compile(
    r"^(?:(?:article|rule|section|chapter|part|schedule|annex|§+)\s*"
    r"(?:(?-i:[IVXLC]+)\b)?)?(?:[A-Z]{0,3}\d[\w.()]*)?\s*[:.,-]?\s*",
    re.IGNORECASE,
)
# What is left of "Article 3, paragraph 14" once its numbering is gone: a reference, no subject.
_REFERENCE_ONLY = re.compile(
    r"^(?:sub)?(?:paragraph|point|para\.?)s?\s*(?:\d+\w{0,2}|\([a-z0-9]{1,4}\))", re.I
)
LONG_TITLE = 60  # characters past which a suggestion names a document by its short name


def _heading(hit: Hit) -> str | None:
    """The hit's section heading without its numbering, when it names a subject."""
    for heading in reversed(hit.section_path or []):
        text = _NUMBERING.sub("", heading, count=1).strip(" .,:;-")
        if (
            3 <= len(text) <= 90
            and text.casefold() not in _GENERIC
            and not _REFERENCE_ONLY.match(text)
        ):
            return text
    return None


def _names(index: IndexView) -> dict[str, str]:
    """Each document's name in a suggestion: its title, or past LONG_TITLE characters its
    short name or number, so that a suggestion stays one line."""
    return {
        d["document_key"]: d["title"]
        if len(d["title"] or "") <= LONG_TITLE
        else d.get("short_name") or d.get("number") or d["title"]
        for d in index.documents()
    }


def _candidates(index: IndexView, hits: list[Hit]) -> Iterator[Hit]:
    """The question's hits, then, only if those run out, the most cited paragraphs."""
    yield from hits
    yield from index.most_cited(50)


def suggestions(
    index: IndexView, question: str, hits: list[Hit] | None = None, n: int = 3
) -> list[str]:
    """`n` questions the index can answer: about the section headings nearest `question`'s
    words, then about the headings of the paragraphs the corpus cites most."""
    if hits is None:
        hits = index.search(question, k=_SUGGESTION_DEPTH, mode="keyword").hits
    found: dict[str, str] = {}
    names = _names(index)
    for hit in _candidates(index, hits):
        heading = _heading(hit)
        if heading and heading.casefold() not in found:
            document = names.get(hit.document_key) or hit.document_title or hit.document_key
            found[heading.casefold()] = f"What does {document} say about {heading}?"
        if len(found) == n:
            break
    return list(found.values())


def check_question(
    index: IndexView,
    question: str,
    settings: GuardrailSettings | None = None,
    hits: list[Hit] | None = None,
) -> Guardrail:
    """Allowed or refused, before any answer is written. `hits` (a search of `question`) spare
    a second search when the caller has one."""
    settings = settings or GuardrailSettings()
    question = check.text(question, "question", index.limits.max_query_chars)
    kind, matched = question_type(question, settings)
    probability = None
    if kind == ALLOWED and OUT_OF_SCOPE in settings.forbidden:
        # Judged as `ask` judges it (lexkb.answers.evidence): the subject model, the names of
        # laws the index does not hold, and the readers that agree with them.
        judged = evidence(
            index,
            question,
            hits,
            EvidenceSettings(min_scope=settings.min_scope, min_answers=settings.min_answers),
        )
        probability = judged.scope
        if judged.reason in _NOT_COVERED:
            named = judged.not_held or judged.unknown_terms + judged.unseen_words
            kind, matched = OUT_OF_SCOPE, ", ".join(named) or judged.explanation
    if kind == ALLOWED or kind not in settings.forbidden:
        return Guardrail(question, kind, True, "allowed", matched, probability, [])
    return Guardrail(
        question,
        kind,
        False,
        f"Not answered: {REFUSALS[kind]}.",
        matched,
        probability,
        suggestions(index, question),
    )
