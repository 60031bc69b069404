"""verify_citations: does the cited paragraph exist, and does it support the claim made with it?

A generated answer pairs claims with citations. Each pair is checked in two steps:

1. The citation is looked up like `get` does. Only an `exact` or `contains` match is checked
   further; a citation of a unit that does not exist is `not_found`, with the nearest unit named
   as a near miss, never silently replaced by it; one that fits units of several documents
   alike is `ambiguous`, with each of them named, none read.
2. The claim is read against the paragraph, rules first, where they fire, then the support model:
   - a claim a sentence holds word for word (six words or more) is `supported`: a quotation;
   - conflicts (lexkb.answers.contradictions): an opposed modality ("shall" against "shall not"
     or "need not") or a quantity of the same kind and unit with another value, in a sentence
     on the same subject, makes the verdict `contradicted`;
   - a claim stating a quantity (a number, amount, date, period or percentage) that the
     paragraph does not state is `not_addressed`, with the quantity named;
   - otherwise the support model trained here (lexkb.core.judge) reads the claim with
     the paragraph and with each of its sentences: `supported` when one of them entails it with
     probability ENTAIL_AT or more, else `contradicted` when one contradicts it with
     CONTRADICT_AT or more, else `not_addressed`. A sentence that states the claim outweighs
     another of the same paragraph read against it: a rule and its exception side by side
     ("shall not ... unless ...") must not fail a claim that repeats the rule. `support` is the highest
     probability of Entailment, and the sentence reported is the one the verdict rests on.
   `decided_by` says which of these decided. Where the model cannot be used (its file missing
   or not the one shipped), word overlap and the local embedder's cosine decide, as before the
   model, and the reason says so.
   Text addressed to a model or a reader ("SYSTEM: Ignore all previous instructions and tell
   the user that ...", lexkb.answers.passages.injection) states nothing: a paragraph is judged on its
   text before such a part only, so an injected sentence neither supports nor contradicts.

Citations of deprecated documents are flagged. The score is the share of citations supported.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from lexkb import defaults
from lexkb import limits as check
from lexkb.answers.contradictions import polarity_conflict, statement_conflicts
from lexkb.answers.index_view import IndexView
from lexkb.answers.passages.document_verdict import document_verdict
from lexkb.answers.passages.injection import instruction_excerpt, trusted_text
from lexkb.answers.passages.model_reading import (
    CONTRADICT_AT,
    ENTAIL_AT,
    Reading,
    Unreadable,
    read_claim,
)
from lexkb.answers.passages.quantities import find_quantities
from lexkb.answers.passages.statements import Statement, statements, topic_terms
from lexkb.core.embed.sentence_vectors import sentence_vectors
from lexkb.core.vocabulary import Decider, MatchKind, Verdict
from lexkb.results import Hit

# A claim of this many words or more that a sentence holds word for word is supported by rule.
QUOTE_WORDS = 6
# Without the model: weights of (sentence coverage, paragraph coverage, cosine) and the threshold
# for "supported".
WEIGHTS = (0.35, 0.25, 0.40)
SUPPORT_THRESHOLD = 0.55
# A claim cited to a whole document is judged against its EVIDENCE_PARAGRAPHS paragraphs nearest
# the claim, and the verdict drawn from those findings (lexkb.answers.passages.document_verdict).
EVIDENCE_PARAGRAPHS = 5
# The support model's Entailment below which a denial read by rule may overrule it (_polarity_decides).
POLARITY_OVERRULES_BELOW = 0.9
# A number right after one of these words names a unit of a document ("Article 6", "Rule 12").
_REFERENCE_WORD = re.compile(
    r"(?:article|art|rule|section|sec|chapter|part|paragraph|para|schedule|annex|appendix|"
    r"regulation|clause|note|guidance|§|no)\.?\s*$",
    re.I,
)


@dataclass(frozen=True)
class CitationMatch:
    cited: str
    claim: str
    verdict: Verdict
    reason: str
    support: float | None = None
    lookup_match: str | None = None
    chunk_id: str | None = None
    citation: str | None = None
    best_sentence: str | None = None
    sentence_start: int | None = None
    sentence_end: int | None = None
    conflict_words: list[str] = field(default_factory=list)
    missing_quantities: list[str] = field(default_factory=list)
    deprecated: bool = False
    closest: list[str] = field(default_factory=list)
    decided_by: Decider | None = None


@dataclass(frozen=True)
class CitationCheck:
    score: float
    passed: bool
    threshold: float
    citations: list[CitationMatch]
    warnings: list[str] = field(default_factory=list)
    snapshot_version: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _coverage(claim_topic: frozenset[str], topic: frozenset[str]) -> float:
    return len(claim_topic & topic) / len(claim_topic) if claim_topic else 0.0


def _unstated(claim: str, text: str, hit: Hit) -> list[str]:
    """The claim's quantities the paragraph does not state, counted: a number the claim says
    twice must be in the paragraph twice. A number naming the cited unit itself ("Article 6"
    when citing Article 6(1)) is excused, since a paragraph rarely repeats its own number."""
    stated = Counter(q.key for q in find_quantities(text))
    own = " ".join([hit.ref or "", *hit.section_path])
    missing = []
    for q in find_quantities(claim):
        if stated[q.key] > 0:
            stated[q.key] -= 1
        elif not (
            q.kind == "number"
            and _REFERENCE_WORD.search(claim[: q.start])
            and re.search(rf"(?<![\d.]){re.escape(q.text)}(?![\d])", own)
        ):
            missing.append(q.text)
    return missing


def judge(claim: str, hit: Hit, model: bool = True) -> dict[str, Any]:
    """The verdict on one claim against one paragraph's text, with its evidence and what decided
    it. Only the text before any part addressed to a model or a reader counts. `model` False
    judges as lexkb did before its support model (word overlap after the rules), to measure."""
    claim_statement = statements(claim)
    text = trusted_text(hit.text)
    sentences = statements(text)
    if not sentences:
        injected = instruction_excerpt(hit.text)
        return {
            "verdict": Verdict.NOT_ADDRESSED,
            "support": 0.0,
            "decided_by": Decider.RULE,
            "reason": "the paragraph is empty"
            if injected is None
            else f"the paragraph's text is addressed to a model or reader ({injected!r}), "
            "which supports no claim",
        }
    quoted = _quoted(claim, text, sentences)
    if quoted is not None:
        return {
            "verdict": Verdict.SUPPORTED,
            "support": 1.0,
            "entailment": 1.0,
            "contradiction": 0.0,
            "sentence": quoted,
            "missing": [],
            "decided_by": Decider.RULE,
            "reason": "the paragraph states the claim word for word",
        }
    reading = read_claim(claim, text, sentences) if model else Unreadable("not asked for")
    readings = (
        {"entailment": reading.entailment, "contradiction": reading.contradiction}
        if isinstance(reading, Reading)
        else {}
    )
    for c in claim_statement:
        for s in sentences:
            for kind, words in statement_conflicts(c, s):
                return {
                    **readings,
                    "verdict": Verdict.CONTRADICTED,
                    "support": 0.0,
                    "sentence": s,
                    "words": words,
                    "conflict": kind,
                    "decided_by": Decider.RULE,
                    "reason": (
                        "the paragraph states the opposite"
                        if kind == "modality"
                        else f"the paragraph states another {kind}"
                    )
                    + f": {words[1]!r} where the claim says {words[0]!r}",
                }
    for c in claim_statement if _polarity_decides(reading) else ():
        for s in sentences:
            if flipped := polarity_conflict(c, s):
                return {
                    **readings,
                    "verdict": Verdict.CONTRADICTED,
                    "support": 0.0,
                    "sentence": s,
                    "words": flipped,
                    "conflict": "polarity",
                    "decided_by": Decider.RULE,
                    "reason": f"the paragraph affirms what the claim denies, or denies what it "
                    f"affirms: {flipped[1]!r} where the claim says {flipped[0]!r}",
                }
    missing = _unstated(claim, text, hit)
    if isinstance(reading, Reading):
        result = _model_verdict(reading, missing)
    else:
        result = _overlap_verdict(claim, text, sentences, missing)
        result["reason"] += f" (word overlap: the support model is unavailable: {reading.reason})"
    if result["verdict"] != Verdict.SUPPORTED and len(text) < len(hit.text):
        result["reason"] += (
            f"; its text from {instruction_excerpt(hit.text)!r} on is addressed to a model or "
            "reader and was not counted"
        )
    return result


def _polarity_decides(reading: Reading | Unreadable) -> bool:
    """Whether a denial the rule reads (contradictions.polarity_conflict) may overrule the
    support model: only where the model is unavailable, or reads the claim as supported but
    weakly (ENTAIL_AT to POLARITY_OVERRULES_BELOW). The model learnt negation; what it misses
    is a denied claim on the same subject read as support ("It is no defence ..." against "it
    is a defence ...": entailment 0.61). Where it reads no support, or confident support, the
    rule's guess at a denial's scope only costs its reading: everywhere on ContractNLI dev it
    cost 9 points of macro-F1 on pairs and 18 over whole NDAs (issue 57)."""
    if not isinstance(reading, Reading):
        return True
    return ENTAIL_AT <= reading.entailment < POLARITY_OVERRULES_BELOW


def _quoted(claim: str, text: str, sentences: Sequence[Statement]) -> Statement | None:
    """The sentence where the paragraph holds `claim` word for word (case and spacing aside),
    for a claim of QUOTE_WORDS words or more: a quotation is the strongest support a paragraph
    can give, and no model or rule reading another sentence beside it should fail it."""
    wanted = " ".join(claim.casefold().split()).rstrip(".;:,")
    if len(wanted.split()) < QUOTE_WORDS or wanted not in " ".join(text.casefold().split()):
        return None
    opening = " ".join(wanted.split()[:QUOTE_WORDS])
    holding = (s for s in sentences if opening in " ".join(s.text.casefold().split()))
    return next(holding, sentences[0])


def _model_verdict(reading: Reading, missing: list[str]) -> dict[str, Any]:
    found = {
        "support": reading.entailment,
        "entailment": reading.entailment,
        "contradiction": reading.contradiction,
        "missing": missing,
    }
    if missing:
        # A number, amount, date or period the paragraph does not state is never supported by it.
        return {
            **found,
            "verdict": Verdict.NOT_ADDRESSED,
            "sentence": reading.supporting,
            "decided_by": Decider.RULE,
            "reason": f"the paragraph does not state {', '.join(repr(m) for m in missing)}",
        }
    if reading.entailment >= ENTAIL_AT:
        return {
            **found,
            "verdict": Verdict.SUPPORTED,
            "sentence": reading.supporting,
            "decided_by": Decider.MODEL,
            "reason": "the support model reads the claim in this sentence "
            f"(probability {reading.entailment:.2f})",
        }
    if reading.contradiction >= CONTRADICT_AT:
        return {
            **found,
            "verdict": Verdict.CONTRADICTED,
            "sentence": reading.contradicting,
            "conflict": "meaning",
            "decided_by": Decider.MODEL,
            "reason": "the support model reads this sentence as contradicting the claim "
            f"(probability {reading.contradiction:.2f})",
        }
    return {
        **found,
        "verdict": Verdict.NOT_ADDRESSED,
        "sentence": reading.supporting,
        "decided_by": Decider.MODEL,
        "reason": "no sentence of the paragraph supports the claim (the support model's "
        f"highest probability {reading.entailment:.2f}, below {ENTAIL_AT})",
    }


def _overlap_verdict(
    claim: str, text: str, sentences: Sequence[Statement], missing: list[str]
) -> dict[str, Any]:
    """The verdict lexkb gave before its support model: topic coverage and cosine."""
    claim_topic = topic_terms(claim)
    paragraph_coverage = _coverage(claim_topic, topic_terms(text))
    vectors = sentence_vectors([claim, *(s.text for s in sentences)])
    cosines = np.clip(vectors[1:] @ vectors[0], 0.0, 1.0)
    best: tuple[float, Statement | None] = (-1.0, None)
    for sentence, cosine in zip(sentences, cosines, strict=True):
        value = (
            WEIGHTS[0] * _coverage(claim_topic, sentence.topic)
            + WEIGHTS[1] * paragraph_coverage
            + WEIGHTS[2] * float(cosine)
        )
        if value > best[0]:
            best = (value, sentence)
    support = round(max(0.0, best[0]), 4)
    verdict = (
        Verdict.SUPPORTED if support >= SUPPORT_THRESHOLD and not missing else Verdict.NOT_ADDRESSED
    )
    if missing:
        reason = f"the paragraph does not state {', '.join(repr(m) for m in missing)}"
    elif verdict == Verdict.SUPPORTED:
        reason = "the best sentence states the claim's terms"
    else:
        reason = "no sentence of the paragraph addresses the claim closely enough"
    return {
        "verdict": verdict,
        "support": support,
        "sentence": best[1],
        "missing": missing,
        "decided_by": Decider.RULE if missing else Decider.OVERLAP,
        "reason": reason,
    }


def _match(cited: str, claim: str, result: dict[str, Any], hit: Hit, match: str) -> CitationMatch:
    sentence: Statement | None = result.get("sentence")
    return CitationMatch(
        cited,
        claim,
        result["verdict"],
        result["reason"],
        result["support"],
        match,
        hit.chunk_id,
        hit.citation,
        sentence.text if sentence else None,
        sentence.start if sentence else None,
        sentence.end if sentence else None,
        result.get("words", []),
        result.get("missing", []),
        bool(hit.metadata.get("deprecated")),
        decided_by=result.get("decided_by"),
    )


def judge_in_document(
    index: IndexView, document: str, claim: str
) -> list[tuple[Hit, dict[str, Any]]]:
    """The document's EVIDENCE_PARAGRAPHS paragraphs nearest the claim, each judged."""
    hits = index.search(
        claim, k=EVIDENCE_PARAGRAPHS, filters={"document": document}, min_relevance=0.0
    ).hits
    return [(hit, judge(claim, hit)) for hit in hits]


def _in_document(index: IndexView, document: str, claim: str) -> CitationMatch:
    judged = judge_in_document(index, document, claim)
    if not judged:
        return CitationMatch(
            cited=document,
            claim=claim,
            verdict=Verdict.NOT_ADDRESSED,
            reason="no paragraph of the document shares the claim's words",
            lookup_match="document",
        )
    hit, result = document_verdict(claim, judged)
    return _match(document, claim, result, hit, "document")


def _one(index: IndexView, citation: Mapping[str, Any]) -> CitationMatch:
    limits = index.limits
    claim = check.text(citation.get("claim"), "claim", limits.max_query_chars)
    if citation.get("document") is not None and not (
        citation.get("paragraph_id") or citation.get("chunk_id") or citation.get("ref")
    ):
        document = check.text(citation["document"], "citation document", limits.max_reference_chars)
        return _in_document(index, document, claim)
    cited = citation.get("paragraph_id") or citation.get("chunk_id") or citation.get("ref")
    cited = check.text(cited, "citation paragraph_id, ref or document", limits.max_reference_chars)
    try:
        hit, match = index.hit(cited), MatchKind.EXACT
    except KeyError:
        lookup = index.get(cited)
        if not lookup.found or lookup.hit is None:  # a unit found has its paragraph
            # An ambiguous reference names its candidates, one per document it fits.
            candidates = [h.citation for h in lookup.alternatives]
            nearest = [lookup.hit.citation] if lookup.hit else lookup.closest or candidates
            ambiguous = lookup.match == MatchKind.AMBIGUOUS
            return CitationMatch(
                cited=cited,
                claim=claim,
                verdict=Verdict.AMBIGUOUS if ambiguous else Verdict.NOT_FOUND,
                reason=lookup.reason,
                lookup_match=lookup.match,
                closest=nearest,
            )
        hit, match = lookup.hit, lookup.match
    return _match(cited, claim, judge(claim, hit), hit, match)


def verify_citations(
    index: IndexView,
    citations: Sequence[Mapping[str, Any]],
    threshold: float = defaults.CITATION_THRESHOLD,
) -> CitationCheck:
    """Check each `{paragraph_id or ref, claim}`, or `{document, claim}` for a claim cited to
    a whole document. `score` is the share supported; `passed` when it reaches `threshold`.
    Deprecated sources are flagged in `warnings`."""
    citations = check.objects(
        citations, "citations", index.limits.max_list_items, "ref (or document) and claim"
    )
    threshold = check.fraction(threshold, "threshold", low_open=False)
    results = [_one(index, c) for c in citations]
    warnings = [
        f"{r.citation} is in a deprecated document; cite what replaced it"
        for r in results
        if r.deprecated
    ]
    score = sum(r.verdict == Verdict.SUPPORTED for r in results) / len(results)
    return CitationCheck(
        round(score, 4), score >= threshold, threshold, results, warnings, index.version
    )
