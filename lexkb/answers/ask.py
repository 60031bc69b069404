"""ask: a question in, a cited answer out, with how firmly it is answered and why.

1. Guardrails on the wording (lexkb.answers.guardrails): predictive, estimation, advice and
   own-data questions are refused with three questions the index can answer.
2. The cache: normalised question + filters + snapshot version, one hour, emptied when the
   snapshot changes.
3. Retrieval (hybrid search), then evidence (lexkb.answers.evidence): DIRECT, QUALIFIED or
   ABSTAIN with its reason; out-of-scope questions are refused here.
4. The answer. Offline it is extractive: the best sentence of each strong paragraph, each
   cited [n]. When LEXKB_LLM_URL names an OpenAI-compatible endpoint (lexkb.answers.llm), a model
   writes it from format_context under a prompt that demands a citation on every sentence.
5. Every sentence is checked against what it cites (verify_citations) and the answer's numbers,
   dates and names against its sources (verify_entities). A sentence without support is dropped
   (or kept and marked, `unsupported="mark"`); if none is left, the answer abstains.

`confidence` is the scope probability times the best cited source's calibrated relevance: it
orders answers and is not itself calibrated.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from lexkb import limits as check
from lexkb.answers import llm
from lexkb.answers.claims import verify_citations
from lexkb.answers.context import format_context
from lexkb.answers.entities import verify_entities
from lexkb.answers.evidence import ABSTAIN, Evidence, EvidenceSettings, evidence
from lexkb.answers.extract import best_sentences, is_fragment
from lexkb.answers.guardrails import (
    ALLOWED,
    REFUSALS,
    GuardrailSettings,
    question_type,
    suggestions,
)
from lexkb.answers.quantities import find_quantities
from lexkb.answers.scope import capitalised_terms
from lexkb.answers.statements import split_sentences
from lexkb.core.text.tokenize import tokenize
from lexkb.core.vocabulary import EntityFound, Verdict
from lexkb.results import Hit

SYSTEM_PROMPT = (
    "You answer questions about regulatory and legal texts using only the paragraphs in the "
    "<context> you are given. End every sentence with the id of the paragraph that supports it "
    "in square brackets, for example [chunk-id]. Quote numbers, periods and defined terms "
    "exactly as the paragraphs state them. If the paragraphs do not answer the question, say "
    "so in one sentence without a citation. Never use knowledge from outside the context."
)
_CITED = re.compile(r"\[([^\[\]]{1,200})\]")
_LEADING_CITATIONS = re.compile(r"^(?:\s*\[[^\[\]]{1,200}\])+\s*")
HISTORY_TURNS = 50


@dataclass(frozen=True)
class AskSettings:
    evidence: EvidenceSettings = field(default_factory=EvidenceSettings)
    guardrails: GuardrailSettings = field(default_factory=GuardrailSettings)
    max_sentences: int = 3  # extractive answers
    sentence_ratio: float = 0.8  # a sentence joins the answer within this share of the best
    context_paragraphs: int = 8  # paragraphs given to a model
    max_context_tokens: int = 6000
    unsupported: str = "drop"  # or "mark"
    cache_seconds: float = 3600.0


@dataclass(frozen=True)
class Source:
    number: int
    chunk_id: str
    citation: str
    document: str
    ref: str | None
    page: int | None
    url: str | None
    relevance: float | None
    authority_level: str | None
    version: str | None
    deprecated: bool
    content_hash: str | None


@dataclass(frozen=True)
class AnswerSentence:
    text: str
    sources: list[int]
    verdict: str  # supported, contradicted, not_addressed, not_found, uncited
    reason: str


@dataclass(frozen=True)
class Answer:
    question: str
    answer: str
    mode: str  # DIRECT, QUALIFIED, ABSTAIN
    abstention_reason: str | None
    explanation: str
    confidence: float
    sources: list[Source]
    sentences: list[AnswerSentence]
    verification: dict
    suggestions: list[str]
    generated_by: str
    from_cache: bool = False
    warnings: list[str] = field(default_factory=list)
    snapshot_version: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


class AnswerCache:
    """Answers by (normalised question, filters, snapshot version) for `seconds`; emptied when
    asked under a different snapshot version than the last."""

    def __init__(self, max_entries: int = 1024) -> None:
        self._entries: dict[str, tuple[float, Answer]] = {}
        self._version: str | None = None
        self._lock = threading.Lock()
        self.max_entries = max_entries

    @staticmethod
    def key(question: str, filters: Mapping | None, version: str | None) -> str:
        words = " ".join(re.sub(r"[^\w]+", " ", question.casefold()).split())
        return json.dumps([words, filters or {}, version], sort_keys=True, default=str)

    def get(self, key: str, version: str | None, seconds: float) -> Answer | None:
        with self._lock:
            if version != self._version:
                self._entries.clear()
                self._version = version
            found = self._entries.get(key)
            if found and time.monotonic() - found[0] <= seconds:
                return found[1]
            self._entries.pop(key, None)
            return None

    def put(self, key: str, answer: Answer) -> None:
        with self._lock:
            if len(self._entries) >= self.max_entries:
                self._entries.pop(next(iter(self._entries)))
            self._entries[key] = (time.monotonic(), answer)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


CACHE = AnswerCache()


def read_history(path: Path | None) -> list[dict]:
    if path is None or not path.is_file():
        return []
    try:
        turns = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [t for t in turns if isinstance(t, dict)] if isinstance(turns, list) else []


def _write_history(path: Path, turns: list[dict], answer: Answer) -> None:
    turn = {
        "question": answer.question,
        "answer": answer.answer,
        "mode": answer.mode,
        "sources": [s.citation for s in answer.sources],
        "snapshot_version": answer.snapshot_version,
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    path.write_text(json.dumps([*turns, turn][-HISTORY_TURNS:], indent=1), encoding="utf-8")


def _search_text(question: str, turns: list[dict]) -> str:
    """A short follow-up ("and how long must they be kept?") is searched together with the
    question before it, which names what "they" are."""
    if turns and len(set(tokenize(question))) <= 4:
        return f"{turns[-1].get('question', '')} {question}"
    return question


def _source(number: int, hit: Hit) -> Source:
    meta = hit.metadata or {}
    return Source(
        number, hit.chunk_id, hit.citation, hit.document_title or hit.document_key, hit.ref,
        hit.page, hit.source_url, hit.relevance, meta.get("authority_level"),
        meta.get("version"), bool(meta.get("deprecated")), hit.content_hash,
    )  # fmt: skip


def _extractive(index, question: str, found: Evidence, settings: AskSettings):
    """[(sentence, [hit])] from the strong hits' best sentences."""
    # A heading kept as a paragraph of its own answers nothing.
    strong = [
        h
        for h in found.hits
        if (h.relevance or 0.0) >= settings.evidence.strong_relevance and not is_fragment(h.text)
    ][: settings.max_sentences + 2]
    ranked = best_sentences(index, question, strong or found.hits[:1])
    if not ranked:
        return []
    lead = ranked[0][3]
    chosen = [r for r in ranked if r[3] >= settings.sentence_ratio * lead][: settings.max_sentences]
    return [(hit.text[a:b].strip(), [hit]) for hit, a, b, _ in chosen]


def _generated(index, question: str, found: Evidence, settings: AskSettings):
    """[(sentence, [hits it cites])] from the model's reply, and the model's name."""
    hits = found.hits[: settings.context_paragraphs]
    context = format_context(index, hits, question, max_tokens=settings.max_context_tokens)
    by_id = {h.chunk_id: h for h in hits if h.chunk_id in context.included}
    ordered = [by_id[c] for c in context.included if c in by_id]
    reply, model = llm.chat(
        [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"{context.xml}\n\nQuestion: {question}"},
        ]
    )
    pieces: list[str] = []
    for a, b in split_sentences(reply) or [(0, len(reply))]:
        text = reply[a:b].strip()
        # "... kept for seven years. [id] Next sentence": a citation opening a sentence closes
        # the one before it.
        lead = _LEADING_CITATIONS.match(text)
        if lead and pieces:
            pieces[-1] += " " + lead.group(0).strip()
            text = text[lead.end() :]
        if text:
            pieces.append(text)
    sentences = []
    for text in pieces:
        cited = []
        for name in _CITED.findall(text):
            for part in re.split(r"[,;]\s*", name):
                part = part.strip()
                hit = by_id.get(part)
                if hit is None and part.isdigit() and 0 < int(part) <= len(ordered):
                    hit = ordered[int(part) - 1]
                if hit is not None and hit not in cited:
                    cited.append(hit)
        plain = _CITED.sub("", text).strip()
        if plain:
            sentences.append((plain, cited))
    return sentences, model


def _verified(index, sentences, settings: AskSettings):
    """Each sentence with its verdict: supported when any paragraph it cites supports it. A
    sentence that is a verbatim quote of a paragraph it cites is supported as such (an exact
    match); any other goes through verify_citations."""
    checked = []
    for text, cited in sentences:
        if not cited:
            checked.append((text, cited, "uncited", "no citation"))
            continue
        quoted = next((h for h in cited if text in h.text), None)
        if quoted is not None:
            checked.append(
                (text, cited, Verdict.SUPPORTED, f"quoted verbatim from {quoted.citation}")
            )
            continue
        result = verify_citations(
            index, [{"paragraph_id": h.chunk_id, "claim": text} for h in cited], threshold=0.0
        )
        best = next(
            (m for m in result.citations if m.verdict == Verdict.SUPPORTED), result.citations[0]
        )
        checked.append((text, cited, best.verdict, best.reason))
    return checked


def _answer_entities(sentences: list[str]) -> list[str]:
    """The quantities and capitalised names of each sentence (read one by one, so a name never
    runs across the end of a sentence into the next)."""
    found = []
    for text in sentences:
        found += [text[q.start : q.end] for q in find_quantities(text)]
        found += [" ".join(words) for words in capitalised_terms(text)]
    return list(dict.fromkeys(e for e in found if e.strip()))[:50]


def ask(
    index,
    question: str,
    filters: Mapping[str, object] | None = None,
    history: str | Path | None = None,
    settings: AskSettings | None = None,
    cache: AnswerCache | None = CACHE,
) -> Answer:
    """Answer `question` from the index, with numbered citations, a mode and a verification
    summary. `history` names a JSON file of earlier turns, read for follow-ups and appended to."""
    settings = settings or AskSettings()
    question = check.text(question, "question", index.limits.max_query_chars)
    history_path = Path(history) if history is not None else None
    turns = read_history(history_path)
    key = AnswerCache.key(question, filters, index.version)
    cached = cache.get(key, index.version, settings.cache_seconds) if cache else None
    if cached is not None:
        answer = replace(cached, from_cache=True)
    else:
        answer = _answer(index, question, filters, turns, settings)
        if cache is not None:
            cache.put(key, answer)
    if history_path is not None:
        _write_history(history_path, turns, answer)
    return answer


def _abstain(
    index, question: str, reason: str, explanation: str, warnings: list[str] | None = None
) -> Answer:
    return Answer(
        question, "", ABSTAIN, reason, explanation, 0.0, [], [], {},
        suggestions(index, question), "none", warnings=warnings or [],
        snapshot_version=index.version,
    )  # fmt: skip


def _answer(index, question, filters, turns, settings: AskSettings) -> Answer:
    kind, matched = question_type(question, settings.guardrails)
    if kind != ALLOWED and kind in settings.guardrails.forbidden:
        return _abstain(index, question, kind, f"Not answered: {REFUSALS[kind]} ({matched!r}).")
    results = index.search(_search_text(question, turns), k=10, filters=filters, min_relevance=0.0)
    found = evidence(index, question, results.hits, settings.evidence)
    warnings = list(results.warnings)
    if found.mode == ABSTAIN:
        return _abstain(index, question, found.reason, found.explanation, warnings=warnings)
    generated_by = "extractive"
    if llm.llm_url():
        try:
            sentences, model = _generated(index, question, found, settings)
            generated_by = f"llm:{model}"
        except llm.LLMError as error:
            warnings.append(f"{error}; answered extractively instead")
            sentences = _extractive(index, question, found, settings)
    else:
        sentences = _extractive(index, question, found, settings)
    checked = _verified(index, sentences, settings)
    kept = [c for c in checked if c[2] == Verdict.SUPPORTED or settings.unsupported == "mark"]
    dropped = len(checked) - len(kept)
    if not any(c[2] == Verdict.SUPPORTED for c in kept):
        return _abstain(
            index, question, "no_relevant_evidence",
            "no sentence of the answer is supported by the paragraph it cites", warnings=warnings,
        )  # fmt: skip
    numbers: dict[str, int] = {}
    parts, lines = [], []
    for text, cited, verdict, reason in kept:
        refs = [numbers.setdefault(h.chunk_id, len(numbers) + 1) for h in cited]
        mark = "" if verdict == Verdict.SUPPORTED else " (unsupported)"
        parts.append(text + "".join(f" [{n}]" for n in refs) + mark)
        lines.append(AnswerSentence(text, refs, verdict, reason))
    cited_hits = {h.chunk_id: h for _, cited, _, _ in kept for h in cited}
    sources = [_source(n, cited_hits[c]) for c, n in numbers.items()]
    text = " ".join(parts)
    entities = _answer_entities([t for t, *_ in kept])
    entity_check = (
        verify_entities(index, entities, list(numbers)).to_dict()
        if entities
        else {"score": 1.0, "passed": True, "entities": []}
    )
    supported = sum(line.verdict == Verdict.SUPPORTED for line in lines)
    verification = {
        "sentences": len(checked),
        "supported": supported,
        "dropped": dropped,
        "citation_score": round(supported / len(lines), 4),
        "entity_score": entity_check["score"],
        "entities_passed": entity_check["passed"],
        "entities_not_found": [
            e["entity"]
            for e in entity_check["entities"]
            if e["match"] in (EntityFound.NOT_FOUND, EntityFound.NEAR_MISS)
        ],
    }
    best = max((s.relevance or 0.0 for s in sources), default=0.0)
    explanation = found.explanation
    if dropped:
        explanation += f"; {dropped} unsupported sentences dropped"
    return Answer(
        question, text, found.mode, found.reason, explanation, round(found.scope * best, 4),
        sources, lines, verification, [], generated_by, warnings=warnings,
        snapshot_version=index.version,
    )  # fmt: skip
