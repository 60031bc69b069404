"""verify_relations: is a stated relation between two paragraphs an edge of the citation graph?

An answer that says "Rule 4.3.1 applies the definition in Rule 1.2.3" makes a claim about the
graph, and it can be wrong in several ways short of "no link at all". Each relation comes back
as one of:

- `confirmed`: a path of edges of the stated type, in the stated direction, within `max_hops`;
- `wrong_direction`: the path exists the other way round (the target cites the source);
- `wrong_type`: connected in that direction, by edges of another type ("cites" where
  "defined-in" was claimed);
- `too_far`: connected as stated, but in more hops than allowed (the hops are given);
- `not_connected`, `unknown_source`, `unknown_target`.

Types: `cites` (any citation, "defined-in" included), `defined-in`, `cited-by` (the target cites
the source) and `related` (a path either way).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from lexkb import defaults
from lexkb import limits as check
from lexkb.answers.index_view import IndexView
from lexkb.graph import CITED_BY, CITES

RELATION_TYPES = ("cites", "defined-in", "cited-by", "related")
# How far past `max_hops` a search looks, to tell `too_far` from `not_connected`.
_LOOK_FURTHER = 3


@dataclass(frozen=True)
class RelationMatch:
    source: str
    target: str
    relation_type: str
    status: str
    reason: str
    hops: int | None = None
    path: list[dict[str, Any]] = field(default_factory=list)

    @property
    def confirmed(self) -> bool:
        return self.status == "confirmed"


@dataclass(frozen=True)
class RelationCheck:
    score: float
    passed: bool
    threshold: float
    relations: list[RelationMatch]
    snapshot_version: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "relations": [{**asdict(r), "confirmed": r.confirmed} for r in self.relations],
        }


def _rows(index: IndexView, name: str) -> list[int]:
    return [index.reading_position(h.chunk_id) for h in index.resolve(name)]


def _shortest(
    index: IndexView,
    starts: list[int],
    goals: set[int],
    directions: set[str],
    types: set[str] | None,
    limit: int,
) -> list[tuple[int, str, int]] | None:
    """The shortest path from any start to any goal along edges of `directions` whose relation
    is in `types` (None: any), at most `limit` edges: [(row, direction, edge)] or None."""
    graph = index.graph
    parent: dict[int, tuple[int, str, int] | None] = {row: None for row in starts}
    queue = deque((row, 0) for row in starts)
    while queue:
        row, depth = queue.popleft()
        if row in goals and depth:
            path = []
            while (step := parent[row]) is not None:
                previous, direction, edge = step
                path.append((row, direction, edge))
                row = previous
            return path[::-1]
        if depth == limit:
            continue
        for other, direction, edge in graph.neighbours(row):
            if direction not in directions or other in parent:
                continue
            if types is not None and graph.relation(edge) not in types:
                continue
            parent[other] = (row, direction, edge)
            queue.append((other, depth + 1))
    return None


def _check(index: IndexView, relation: Mapping[str, Any], max_hops: int) -> RelationMatch:
    source = check.text(relation.get("source"), "relation source", index.limits.max_reference_chars)
    target = check.text(relation.get("target"), "relation target", index.limits.max_reference_chars)
    kind = relation.get("relation_type") or "cites"
    if kind not in RELATION_TYPES:
        raise check.QueryError(f"relation_type {kind!r} is not one of {RELATION_TYPES}")
    hops = relation.get("max_hops", max_hops)
    hops = check.count(hops, "max_hops", 1, index.limits.max_hops)
    starts, goals = _rows(index, source), set(_rows(index, target))
    if not starts:
        return RelationMatch(
            source, target, kind, "unknown_source", f"{source!r} names no paragraph"
        )
    if not goals:
        return RelationMatch(
            source, target, kind, "unknown_target", f"{target!r} names no paragraph"
        )
    forward = {"cited-by": {CITED_BY}, "related": {CITES, CITED_BY}}.get(kind, {CITES})
    types = {"defined-in"} if kind == "defined-in" else None
    far = hops + _LOOK_FURTHER

    def found(status: str, path: list[tuple[int, str, int]], reason: str) -> RelationMatch:
        steps = [asdict(step) for step in index.path_steps(path)]
        return RelationMatch(source, target, kind, status, reason, len(path), steps)

    if path := _shortest(index, starts, goals, forward, types, hops):
        return found("confirmed", path, f"{len(path)} edge(s) from {source} to {target}")
    if path := _shortest(index, starts, goals, forward, types, far):
        return found(
            "too_far", path, f"connected as stated in {len(path)} edges; max_hops is {hops}"
        )
    if types is not None and (path := _shortest(index, starts, goals, forward, None, hops)):
        relations = sorted({index.graph.relation(e) for _, _, e in path})
        return found("wrong_type", path, f"connected by {', '.join(relations)}, not {kind}")
    backward = {CITES: CITED_BY, CITED_BY: CITES}
    reverse = {backward[d] for d in forward}
    if kind != "related" and (path := _shortest(index, starts, goals, reverse, types, hops)):
        return found("wrong_direction", path, f"{target} {kind} {source}, not the other way")
    return RelationMatch(
        source, target, kind, "not_connected", f"no path within {far} edges either way"
    )


def verify_relations(
    index: IndexView,
    relations: Sequence[Mapping[str, Any]],
    max_hops: int = defaults.RELATION_MAX_HOPS,
    threshold: float = defaults.RELATION_THRESHOLD,
) -> RelationCheck:
    """Check each `{source, target, relation_type, max_hops?}` (source and target: chunk ids
    or references) against the citation graph. `score` is the share confirmed; `passed` when
    it reaches `threshold`."""
    relations = check.objects(
        relations, "relations", index.limits.max_list_items, "source, target, relation_type"
    )
    threshold = check.fraction(threshold, "threshold", low_open=False)
    results = [_check(index, relation, max_hops) for relation in relations]
    score = sum(r.confirmed for r in results) / len(results)
    return RelationCheck(round(score, 4), score >= threshold, threshold, results, index.version)
