"""The typed answer `ask` returns: its sources, its sentences each with a verdict, and the answer
with its mode and the reason it stops short of DIRECT. `to_dict()` is the JSON of docs/schemas/
ask.json; the vocabularies are StrEnums, so they serialise as their values."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from lexkb.core.vocabulary import AbstentionReason, AnswerMode, Verdict
from lexkb.results import Hit


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

    @classmethod
    def of(cls, number: int, hit: Hit) -> Source:
        """The hit cited as [number], with what its catalog entry says of its authority."""
        meta = hit.metadata or {}
        return cls(
            number=number,
            chunk_id=hit.chunk_id,
            citation=hit.citation,
            document=hit.document_title or hit.document_key,
            ref=hit.ref,
            page=hit.page,
            url=hit.source_url,
            relevance=hit.relevance,
            authority_level=meta.get("authority_level"),
            version=meta.get("version"),
            deprecated=bool(meta.get("deprecated")),
            content_hash=hit.content_hash,
        )


@dataclass(frozen=True)
class AnswerSentence:
    text: str
    sources: list[int]
    # What the paragraphs it cites say of it; lexkb.core.vocabulary.UNCITED when it cites none.
    verdict: Verdict | Literal["uncited"]
    reason: str


@dataclass(frozen=True)
class Answer:
    question: str
    answer: str
    mode: AnswerMode
    abstention_reason: AbstentionReason | None
    explanation: str
    confidence: float
    sources: list[Source]
    sentences: list[AnswerSentence]
    verification: dict[str, Any]
    suggestions: list[str]
    generated_by: str
    from_cache: bool = False
    warnings: list[str] = field(default_factory=list)
    snapshot_version: str | None = None
    # How the question was read: alone, or as a follow-up with the one before it
    # (lexkb.answers.question.followup).
    read_as: str = "read alone"
    # The figures behind `explanation` (which says it in words, lexkb.answers.plain): the
    # evidence's reasons, scope, the relevance model's chances, relevance.
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
