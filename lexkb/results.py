"""What the query module returns: hits, lookups, graph hits and search results, each with a
`to_dict()` that is plain JSON (the CLI's `--json`, the MCP tools and services all use it)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

from lexkb.core.text.citing import citation
from lexkb.core.vocabulary import ChunkLevel, MatchKind
from lexkb.graph import Step


class Holding(NamedTuple):
    """A document whose paragraphs hold some words (Index.documents_holding): how many of its
    paragraphs hold them all, and where the first stands among its paragraphs (0: its first)."""

    document_key: str
    paragraphs: int
    first: int


# Scores are rounded once, here, so every surface shows the same number for the same hit.
SCORE_DIGITS = 6


@dataclass(slots=True)
class Hit:
    """One chunk as a citation. `content_hash` (SHA-256 of `text`) and `snapshot_version` pin the
        exact text cited. `score` ranks within one search; `relevance` (0-1, calibrated, see
        lexkb.relevance) means the same across queries and modes; `expanded_from` names the hit
        whose citation brought this one in; `answers`, set when a search reranks (lexkb.rerank), is
    the relevance model's chance that the chunk answers the query. Each search makes new hits; they are not frozen, which
        made each three times as costly to make (a tenth of a keyword search)."""

    chunk_id: str
    document_key: str
    document_title: str
    chunk_level: ChunkLevel
    ref: str | None
    section_path: list[str]
    page: int | None
    score: float | None
    text: str
    expanded_from: str | None = None
    source_url: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    content_hash: str | None = None
    snapshot_version: str | None = None
    relevance: float | None = None
    parent_chunk_id: str | None = None
    answers: float | None = None
    # The ref as its family cites it ("section 7(1)", "paragraph B34"; lexkb.core.text.citing).
    cited_ref: str | None = None

    @property
    def citation(self) -> str:
        """What a person writes in a footnote: the document's short name and the unit as
        cited ("DORA, Article 19(4)"), the page only for a paragraph with no reference."""
        return citation(
            self.document_title or self.document_key, self.cited_ref or self.ref, self.page
        )

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "citation": self.citation}


@dataclass(frozen=True)
class Lookup:
    """What a reference found, and how (`match`: exact, contains, ambiguous, enclosing,
    not_found; see lexkb.lookup), with the reason in words. When something was found: the
    paragraph (`hit`), the section it sits in, the paragraphs before and after it, those it cites
    and those citing it, and its citations that point outside the index or were not found. When
    nothing was: `closest` refs or document names. `alternatives`: further units of the same
    document the reference names; for an `ambiguous` one (no `hit`), each document's unit it
    fits, for the person to pick."""

    asked: str
    match: MatchKind
    reason: str
    hit: Hit | None = None
    section: Hit | None = None
    previous: Hit | None = None
    next: Hit | None = None
    cites: list[Hit] = field(default_factory=list)
    cited_by: list[Hit] = field(default_factory=list)
    unresolved: list[dict[str, Any]] = field(default_factory=list)
    closest: list[str] = field(default_factory=list)
    alternatives: list[Hit] = field(default_factory=list)

    @property
    def found(self) -> bool:
        """The asked unit exists: exactly, or as a point inside the paragraph returned."""
        return self.match in (MatchKind.EXACT, MatchKind.CONTAINS)

    def to_dict(self) -> dict[str, Any]:
        def one(hit: Hit | None) -> dict[str, Any] | None:
            return hit.to_dict() if hit else None

        return {
            "asked": self.asked,
            "match": self.match,
            "found": self.found,
            "reason": self.reason,
            "found_ref": self.hit.ref if self.hit else None,
            "hit": one(self.hit),
            "section": one(self.section),
            "previous": one(self.previous),
            "next": one(self.next),
            "cites": [h.to_dict() for h in self.cites],
            "cited_by": [h.to_dict() for h in self.cited_by],
            "unresolved": self.unresolved,
            "closest": self.closest,
            "alternatives": [h.to_dict() for h in self.alternatives],
        }


@dataclass(frozen=True)
class GraphHit:
    """A chunk reached from another along citations: its score (the product of decay x edge
    weight along the path) and the path, one Step per edge."""

    hit: Hit
    score: float
    path: list[Step]

    @property
    def hops(self) -> int:
        return len(self.path)

    def to_dict(self) -> dict[str, Any]:
        return {
            "hit": self.hit.to_dict(),
            "score": self.score,
            "hops": self.hops,
            "path": [asdict(step) for step in self.path],
        }


@dataclass(frozen=True)
class SearchResults:
    query: str
    mode: str
    hits: list[Hit]
    warnings: list[str] = field(default_factory=list)
    snapshot_version: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "snapshot_version": self.snapshot_version,
            "warnings": self.warnings,
            "hits": [hit.to_dict() for hit in self.hits],
        }

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)

    def __getitem__(self, index: int) -> Hit:
        return self.hits[index]
