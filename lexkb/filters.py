"""Search filters on document metadata and chunks: which chunks a query may return.

Filters combine with AND. Each value may be one item or a list (any of them), except `tags`,
where a list means the document carries every tag listed. Dates compare a document's effective
date, or its publication date when it has no effective date; a document with neither is left out
by any date filter. `chunk_mask` applies them all, with the chunk filters (level, section and the
build's annotations), as one boolean per chunk row.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import date, timedelta
from typing import Any

import numpy as np
import polars as pl

from lexkb import limits as check
from lexkb.core.text.dates import as_date
from lexkb.core.vocabulary import ChunkLevel

DOCUMENT_FILTERS = (
    "document",
    "document_type",
    "authority_level",
    "tags",
    "party",
    "governing_law",
    "author",
    "source",
    "start",
    "end",
    "period",
    "date_range",
    "deprecated",
)
CHUNK_LEVELS = tuple(ChunkLevel)
CHUNK_FILTERS = ("section", "chunk_level", "clause_type", "cards_only", "cluster_id")
FILTER_KEYS = DOCUMENT_FILTERS + CHUNK_FILTERS
# Relative periods, as (days back to the start, days back to the end), both ends included.
PERIODS = {
    "today": (0, 0),
    "yesterday": (1, 1),
    "last_7_days": (6, 0),
    "last_30_days": (29, 0),
    "last_90_days": (89, 0),
    "last_365_days": (364, 0),
}


TEXT_FILTERS = ("document", "document_type", "authority_level", "tags", "party", "governing_law",
                "author", "source", "section", "chunk_level", "clause_type")  # fmt: skip
MAX_FILTER_VALUES = 200


def _values(value: object) -> list[str]:
    """A text filter's values (as `validate` checked them): its one text, or its list."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return list(value)
    raise TypeError(f"a text filter takes text or a list of text, not {value!r}")


def _known(present: list[str], wanted: list[str], what: str) -> None:
    """An unknown value is an error that lists the known ones ("--type nosuch" is a typo, not
    an empty result)."""
    known = {value.casefold(): value for value in present}
    for value in wanted:
        if value.casefold() not in known:
            listed = ", ".join(sorted(set(known.values()))[:30]) or "none"
            raise ValueError(f"unknown {what} {value!r}; known: {listed}")


def validate(filters: object) -> dict[str, Any]:
    """The filters as a dict of checked values: a mapping of known keys; text filters take text
    or a list of text; `deprecated` a bool; `period` one of PERIODS; dates a date or ISO text.
    Anything else is a ValueError that says what is wanted ("false" is not a bool)."""
    if not isinstance(filters, Mapping):
        raise ValueError(f"filters must be a mapping of filter names to values, not {filters!r}")
    unknown = set(filters) - set(FILTER_KEYS)
    if unknown:
        raise ValueError(f"unknown filter(s) {sorted(map(str, unknown))}; known: {FILTER_KEYS}")
    checked: dict[str, Any] = {}
    for key, value in filters.items():
        if value is None:
            continue
        if key == "date_range":
            # {start, end}: the MCP tools' spelling of the start and end filters.
            if not isinstance(value, Mapping) or set(value) - {"start", "end"}:
                raise ValueError(f"filter 'date_range' takes {{start, end}}, not {value!r}")
            for end in ("start", "end"):
                if value.get(end) is not None:
                    if filters.get(end) is not None:
                        raise ValueError(f"conflicting filters: date_range.{end} and {end}")
                    as_date(value[end], f"filter 'date_range.{end}'")
                    checked[end] = value[end]
            continue
        if key in TEXT_FILTERS or key == "cluster_id":
            if key == "cluster_id":
                values: Sequence[object] | None = (
                    list(value) if isinstance(value, list | tuple) else [value]
                )
                if not values or not all(
                    isinstance(v, int) and not isinstance(v, bool) for v in values
                ):
                    raise ValueError(
                        f"filter 'cluster_id' takes a cluster number or a list, not {value!r}"
                    )
            else:
                values = _values(value) if isinstance(value, str | list | tuple) else None
                if not values or not all(isinstance(v, str) and v.strip() for v in values):
                    raise ValueError(f"filter {key!r} takes text or a list of text, not {value!r}")
            if len(values) > MAX_FILTER_VALUES:
                raise ValueError(
                    f"filter {key!r} lists {len(values)} values; the limit is {MAX_FILTER_VALUES}"
                )
        elif key in ("deprecated", "cards_only") and not isinstance(value, bool):
            raise ValueError(f"filter {key!r} takes true or false, not {value!r}")
        elif key == "period" and (not isinstance(value, str) or value not in PERIODS):
            raise ValueError(f"unknown period {value!r}; known: {', '.join(PERIODS)}")
        elif key in ("start", "end"):
            as_date(value, f"filter {key!r}")
        checked[key] = value
    if "period" in checked and ("start" in checked or "end" in checked):
        raise ValueError(
            "conflicting filters: 'period' counts back from today, 'date_range' (or "
            "'start'/'end') gives dates; use one or the other"
        )
    return checked


def _governed_by(documents: pl.DataFrame, places: list[str]) -> pl.Expr:
    """Contracts whose governing-law clause names one of `places`, by any part of the name
    ("England" finds "England and Wales"). A place no contract names is an error that lists the
    places named; a snapshot built before lexkb read the clause says so."""
    if "governing_law" not in documents.columns:
        raise ValueError(
            "this snapshot records no governing law (built before lexkb read it): build it again"
        )
    named = sorted(set(documents["governing_law"].drop_nulls().to_list()))
    for place in places:
        if not any(place.casefold() in law.casefold() for law in named):
            raise ValueError(
                f"no contract is governed by the law of a place like {place!r}; places named: "
                + (", ".join(named[:30]) or "none (no contract names its law)")
            )
    return pl.any_horizontal(
        [
            pl.col("governing_law").str.to_lowercase().str.contains(p.casefold(), literal=True)
            for p in places
        ]
    ).fill_null(False)


def date_range(filters: Mapping[str, object], today: date) -> tuple[date | None, date | None]:
    """The window `start` and `end`, or `period` counted back from `today`, leave open."""
    if (period := filters.get("period")) is not None:
        back_start, back_end = PERIODS[str(period)]
        return today - timedelta(days=back_start), today - timedelta(days=back_end)
    start = (
        as_date(filters["start"], "filter 'start'") if filters.get("start") is not None else None
    )
    end = as_date(filters["end"], "filter 'end'") if filters.get("end") is not None else None
    return start, end


def document_ids(
    documents: pl.DataFrame,
    filters: Mapping[str, object],
    resolve_document: Callable[[str], str],
    today: date,
) -> list[str]:
    """Ids of the documents that pass every document-level filter."""
    expr = pl.lit(True)
    if (names := filters.get("document")) is not None:
        expr &= pl.col("document_id").is_in([resolve_document(n) for n in _values(names)])
    for column in ("document_type", "authority_level", "author"):
        if (wanted := filters.get(column)) is not None:
            _known(documents[column].drop_nulls().to_list(), _values(wanted), column)
            expr &= pl.col(column).str.to_lowercase().is_in([v.casefold() for v in _values(wanted)])
    if (tags := filters.get("tags")) is not None:
        _known([t for ts in documents["tags"].to_list() for t in ts or []], _values(tags), "tag")
        for tag in _values(tags):
            expr &= (
                pl.col("tags")
                .list.eval(pl.element().str.to_lowercase())
                .list.contains(tag.casefold())
            )
    if (party := filters.get("party")) is not None:
        parties = [p for ps in documents["parties"].to_list() for p in ps or []]
        for name in _values(party):
            if not any(name.casefold() in p.casefold() for p in parties):
                raise ValueError(
                    f"no document names a party like {name!r}; parties are: "
                    + (", ".join(sorted(set(parties))[:30]) or "none (no contract is indexed)")
                )
        # A contract's party, by any part of its name ("Acme" finds "Acme Corp., Inc.").
        expr &= pl.any_horizontal(
            [
                pl.col("parties")
                .list.eval(
                    pl.element().str.to_lowercase().str.contains(name.casefold(), literal=True)
                )
                .list.any()
                .fill_null(False)
                for name in _values(party)
            ]
        )
    if (law := filters.get("governing_law")) is not None:
        expr &= _governed_by(documents, _values(law))
    if (source := filters.get("source")) is not None:
        prefixes = [s.casefold() for s in _values(source)]
        expr &= pl.any_horizontal(
            [
                pl.col(column).str.to_lowercase().str.starts_with(prefix).fill_null(False)
                for column in ("source_url", "source_name")
                for prefix in prefixes
            ]
        )
    if filters.get("deprecated") is not None:
        expr &= pl.col("deprecated") == bool(filters["deprecated"])
    start, end = date_range(filters, today)
    when = pl.coalesce("effective", "published")
    if start is not None:
        expr &= (when >= start).fill_null(False)
    if end is not None:
        expr &= (when <= end).fill_null(False)
    return documents.filter(expr)["document_id"].to_list()


_DATE_FILTERS = ("start", "end", "period", "date_range")


def left_undated(
    documents: pl.DataFrame,
    filters: Mapping[str, object],
    resolve_document: Callable[[str], str],
    today: date,
) -> list[str]:
    """Keys of the documents a date window leaves out only because they state no date (every
    other filter keeps them): a search names them rather than dropping them without a word."""
    if all(filters.get(key) is None for key in _DATE_FILTERS):
        return []
    others = {k: v for k, v in filters.items() if k not in _DATE_FILTERS}
    kept = document_ids(documents, others, resolve_document, today)
    undated = pl.col("published").is_null() & pl.col("effective").is_null()
    left = documents.filter(pl.col("document_id").is_in(kept) & undated)
    return sorted(left["document_key"].to_list())


def chunk_mask(
    chunks: pl.DataFrame,
    documents: pl.DataFrame,
    filters: Mapping[str, object],
    resolve_document: Callable[[str], str],
    annotated: Callable[[Mapping[str, object]], pl.Expr],
    today: date | None = None,
) -> np.ndarray:
    """Which chunk rows pass every filter: the document filters (`document_ids`), the chunk
    level, the build's annotations (`annotated`: lexkb.annotations.Annotations.filter) and the
    section."""
    expr = pl.lit(True)
    if any(filters.get(key) is not None for key in DOCUMENT_FILTERS):
        ids = document_ids(documents, filters, resolve_document, today or date.today())
        expr &= pl.col("document_id").is_in(ids)
    if (level := filters.get("chunk_level")) is not None:
        levels = _values(level)
        unknown = set(levels) - set(CHUNK_LEVELS)
        if unknown:
            raise check.QueryError(
                f"unknown chunk_level {sorted(unknown)}; levels are {CHUNK_LEVELS}"
            )
        expr &= pl.col("chunk_level").is_in(levels)
    expr &= annotated(filters)
    if (section := filters.get("section")) is not None:
        # A heading path prefix ("4 CLIENT ASSETS > 4.3"), a heading, or a number ("4.3",
        # "Article 5"): the section so numbered and everything under it.
        prefix = str(section).casefold().strip()
        path = pl.col("section_path").list.eval(pl.element().str.to_lowercase())
        inside = (
            path.list.join(" > ").str.starts_with(prefix)
            | path.list.eval(
                (pl.element() == prefix) | pl.element().str.starts_with(prefix + " ")
            ).list.any()
        ).fill_null(False)
        masks = chunks.select(expr.alias("keep"), inside.alias("inside"))
        # A section no document has is a typo to point out, as an unknown document is, not
        # an empty result.
        if not masks["inside"].any():
            raise ValueError(f"no section is numbered or headed {section!r} in this index")
        return (masks["keep"] & masks["inside"]).to_numpy()
    return chunks.select(expr.alias("keep"))["keep"].to_numpy()


_TERM_QUESTION = re.compile(
    r"^\s*(?:what\s+(?:is|are)\s+(?:meant\s+by\s+)?(?:an?\s+|the\s+)?(?P<a>.+?)"
    r"|what\s+does\s+(?:an?\s+|the\s+)?(?P<b>.+?)\s+mean"
    r"|define\s+(?:an?\s+|the\s+)?(?P<c>.+?)"
    r"|(?:the\s+)?(?:definition|meaning)\s+of\s+(?:an?\s+|the\s+)?(?P<d>.+?))\s*[?.]?\s*$",
    re.IGNORECASE,
)

# The most words such a question can have: the longest opening ("what is meant by the", five),
# a term of ten words, quotes apart and a question mark apart.
_TERM_QUESTION_WORDS = 5 + 10 + 2 + 1


def defined_term_asked(query: str) -> str | None:
    """The term a question asks the meaning of ("What is Client Money?" -> "Client Money"), or
    None when the query is not such a question."""
    if len(query.split()) > _TERM_QUESTION_WORDS:
        return None  # too long to ask after a term; spares the pattern's backtracking (15 µs)
    match = _TERM_QUESTION.match(query)
    if match is None:
        return None
    term = next(g for g in match.groups() if g is not None)
    term = " ".join(term.strip(" \"'“”‘’").split())
    return term if 0 < len(term.split()) <= 10 else None
