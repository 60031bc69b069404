"""The closed vocabularies that the snapshot, the query module, the MCP schemas and the JSON
schemas in docs/schemas/ share, each defined once. Every member is a `str`, so a value read from
a table or a JSON document compares equal to it and serialises as itself."""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class ChunkLevel(StrEnum):
    """The unit a chunk is: a numbered or running paragraph, a section's heading and text, a
    part (a whole chapter or title), or a note (a footnote or an editorial note)."""

    PARAGRAPH = "paragraph"
    SECTION = "section"
    PART = "part"
    NOTE = "note"


class SearchMode(StrEnum):
    """How a search ranks: BM25 and cosine fused, BM25 alone, or cosine alone."""

    HYBRID = "hybrid"
    KEYWORD = "keyword"
    VECTOR = "vector"


class MatchKind(StrEnum):
    """How a reference matched a unit (`Index.get`): the unit itself, a point inside the
    paragraph returned, units of several documents that it fits alike (each a candidate, none
    chosen), the nearest unit around one that does not exist, or nothing."""

    EXACT = "exact"
    CONTAINS = "contains"
    AMBIGUOUS = "ambiguous"
    ENCLOSING = "enclosing"
    NOT_FOUND = "not_found"


class Verdict(StrEnum):
    """What a cited paragraph (or a document) says of a claim; `not_found` when the citation
    itself names nothing in the snapshot, `ambiguous` when it fits units of several documents
    alike (none is read: a claim is checked against the unit its author meant, never a guess)."""

    SUPPORTED = "supported"
    CONTRADICTED = "contradicted"
    NOT_ADDRESSED = "not_addressed"
    NOT_FOUND = "not_found"
    AMBIGUOUS = "ambiguous"


class Decider(StrEnum):
    """What decided a verdict: a rule (an opposed modality, another quantity, a quantity the
    paragraph does not state, an empty paragraph), the support model trained here, or, where
    that model cannot be used, word overlap."""

    RULE = "rule"
    MODEL = "model"
    OVERLAP = "overlap"


class EntityFound(StrEnum):
    """How a name or quantity of an answer was found in its sources: as written, once
    normalised, only something close to it (a near miss, never a match), or not at all."""

    EXACT = "exact"
    NORMALIZED = "normalized"
    NEAR_MISS = "near_miss"
    NOT_FOUND = "not_found"


class AnswerMode(StrEnum):
    """How firmly a question is answered: from the sources, with what is weak said, or not."""

    DIRECT = "DIRECT"
    QUALIFIED = "QUALIFIED"
    ABSTAIN = "ABSTAIN"


class AbstentionReason(StrEnum):
    """Why an answer stops short of DIRECT: what the evidence lacks (ABSTAIN, or what weakens a
    QUALIFIED answer), or, for a question refused for its wording, the guardrail's type of it."""

    NO_RELEVANT_EVIDENCE = "no_relevant_evidence"
    LOW_SIMILARITY = "low_similarity"
    INSUFFICIENT_CHUNKS = "insufficient_chunks"
    LOW_AUTHORITY = "low_authority"
    CONFLICTING_EVIDENCE = "conflicting_evidence"
    AMBIGUOUS_QUERY = "ambiguous_query"
    OUT_OF_SCOPE = "out_of_scope"
    # The question names a law, regulator, standard or jurisdiction the index neither holds
    # nor mentions (lexkb.answers.question.named_laws).
    NOT_HELD = "not_held"
    NOT_ANSWERED_BY_SOURCES = "not_answered_by_sources"
    PREDICTIVE = "predictive"
    ESTIMATION = "estimation"
    ADVICE = "advice"
    OWN_DATA = "own_data"


# An answer's sentence that cites nothing has no Verdict of a paragraph; it is marked this.
UNCITED: Final = "uncited"
