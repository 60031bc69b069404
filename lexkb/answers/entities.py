"""verify_entities: are the names, numbers, amounts, dates, periods and defined terms of an
answer in its sources?

Each entity is matched in one of two ways. A quantity ("thirty (30) days", "$5000",
"1 January 2024") is compared by value with every quantity in the sources
(lexkb.answers.passages.quantities), so "30 days" is found in "thirty (30) days" and not in "130 days".
Any other entity is compared by its letters and digits alone, case-folded, so hyphens, line
breaks, quotes and spacing do not matter ("co-operation" = "cooperation"), at word boundaries.

An entity is `exact` (the same characters occur), `normalized` (equal once normalised),
`near_miss` (not there, but the sources hold something close: the same kind of quantity with
another value, or a term one or two letters off) or `not_found`. Only the first two count as
found; a near miss is reported with what the sources say instead.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from lexkb import defaults
from lexkb import limits as check
from lexkb.answers.index_view import IndexView
from lexkb.answers.passages.quantities import Quantity, as_quantity, find_quantities
from lexkb.answers.passages.source_hits import source_hits
from lexkb.core.vocabulary import EntityFound
from lexkb.results import Hit


@dataclass(frozen=True)
class EntityMatch:
    entity: str
    kind: str  # amount, period, percent, date, number, text
    match: EntityFound
    reason: str
    chunk_id: str | None = None
    start: int | None = None
    end: int | None = None
    source_text: str | None = None
    closest: list[str] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return self.match in (EntityFound.EXACT, EntityFound.NORMALIZED)


@dataclass(frozen=True)
class EntityCheck:
    score: float
    passed: bool
    threshold: float
    entities: list[EntityMatch]
    unknown_sources: list[str] = field(default_factory=list)
    snapshot_version: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "entities": [{**asdict(e), "found": e.found} for e in self.entities],
        }


def skeleton(text: str) -> tuple[str, list[int]]:
    """The text's letters and digits, case-folded, and where each came from."""
    letters, positions = [], []
    for i, char in enumerate(text):
        for folded in unicodedata.normalize("NFKC", char).casefold():
            if folded.isalnum():
                letters.append(folded)
                positions.append(i)
    return "".join(letters), positions


def _at_word_boundary(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    return not before.isalnum() and not after.isalnum()


@dataclass
class _Source:
    hit: Hit
    skeleton: str
    positions: list[int]
    quantities: tuple[Quantity, ...]


def _find_text(entity: str, sources: list[_Source]) -> EntityMatch:
    for source in sources:
        start = source.hit.text.find(entity)
        if start >= 0 and _at_word_boundary(source.hit.text, start, start + len(entity)):
            return _located(entity, "text", EntityFound.EXACT, source, start, start + len(entity))
    wanted, _ = skeleton(entity)
    if not wanted:
        return EntityMatch(
            entity, "text", EntityFound.NOT_FOUND, "the entity has no letters or digits"
        )
    for source in sources:
        at = source.skeleton.find(wanted)
        while at >= 0:
            start = source.positions[at]
            end = source.positions[at + len(wanted) - 1] + 1
            if _at_word_boundary(source.hit.text, start, end):
                return _located(entity, "text", EntityFound.NORMALIZED, source, start, end)
            at = source.skeleton.find(wanted, at + 1)
    return _near_text(entity, sources)


def _near_text(entity: str, sources: list[_Source]) -> EntityMatch:
    """The closest run of as many words in the sources, if it is one or two edits away."""
    size = len(entity.split())
    target = entity.casefold()
    best, best_ratio, where = None, 0.0, None
    for source in sources:
        words = list(re.finditer(r"\S+", source.hit.text))
        for i in range(len(words) - size + 1):
            start, end = words[i].start(), words[i + size - 1].end()
            candidate = source.hit.text[start:end].strip(".,;:()\"'“”")
            ratio = difflib.SequenceMatcher(None, target, candidate.casefold()).ratio()
            if ratio > best_ratio:
                best, best_ratio, where = candidate, ratio, source
    if best is not None and best_ratio >= 0.85 and where is not None:
        return EntityMatch(
            entity,
            "text",
            EntityFound.NEAR_MISS,
            f"not in the sources; {where.hit.citation} has the close {best!r}",
            where.hit.chunk_id,
            closest=[best],
        )
    return EntityMatch(entity, "text", EntityFound.NOT_FOUND, "not in the sources")


def _find_quantity(entity: str, quantity: Quantity, sources: list[_Source]) -> EntityMatch:
    others: list[tuple[str, str]] = []
    for source in sources:
        for q in source.quantities:
            if q.key == quantity.key:
                match = EntityFound.EXACT if q.text == entity.strip() else EntityFound.NORMALIZED
                return _located(entity, quantity.kind, match, source, q.start, q.end)
            if q.kind == quantity.kind and q.key.split(" ")[-1] == quantity.key.split(" ")[-1]:
                others.append((q.text, source.hit.citation))
    if others:
        listed = "; ".join(f"{text!r} in {where}" for text, where in others[:5])
        return EntityMatch(
            entity,
            quantity.kind,
            EntityFound.NEAR_MISS,
            f"the sources state another {quantity.kind}: {listed}",
            closest=[text for text, _ in others[:5]],
        )
    return EntityMatch(
        entity, quantity.kind, EntityFound.NOT_FOUND, f"no {quantity.kind} like it in the sources"
    )


def _located(
    entity: str, kind: str, match: EntityFound, source: _Source, start: int, end: int
) -> EntityMatch:
    how = "as written" if match == EntityFound.EXACT else "once normalised"
    return EntityMatch(
        entity,
        kind,
        match,
        f"in {source.hit.citation}, {how}",
        source.hit.chunk_id,
        start,
        end,
        source.hit.text[start:end],
    )


def verify_entities(
    index: IndexView,
    entities: Sequence[str],
    source_ids: Sequence[object],
    threshold: float = defaults.ENTITY_THRESHOLD,
) -> EntityCheck:
    """Look up each entity of a generated answer in the paragraphs `source_ids` names (chunk
    ids, references or hits). `score` is the share found (exact or normalised); `passed` when
    it reaches `threshold`."""
    limits = index.limits
    entities = check.items(entities, "entities", limits.max_list_items)
    threshold = check.fraction(threshold, "threshold", low_open=False)
    if not entities:
        raise check.QueryError("entities is empty: give the names, numbers and terms to check")
    hits, unknown = source_hits(index, source_ids)
    if not hits:
        raise check.QueryError(
            f"none of the sources is in snapshot {index.version}: {', '.join(unknown)}"
        )
    sources = [_Source(h, *skeleton(h.text), find_quantities(h.text)) for h in hits]
    results = []
    for entity in entities:
        entity = check.text(entity, "entity", limits.max_reference_chars)
        quantity = as_quantity(entity)
        if quantity is not None:
            results.append(_find_quantity(entity, quantity, sources))
        else:
            results.append(_find_text(entity, sources))
    score = sum(r.found for r in results) / len(results)
    return EntityCheck(
        round(score, 4), score >= threshold, threshold, results, unknown, index.version
    )
