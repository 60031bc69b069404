"""What a document says about itself where no catalog does: its type and authority, read from
how its family titles it, and its dates, read from its text.

Without this every document of a corpus without a catalog has no type, no authority and no
date, so a type filter offers nothing, a date filter returns nothing and answers cannot weigh a
regulation above a company's policy. The catalog (transforms.reading.metadata) still overrides every
field found here.
"""

from __future__ import annotations

import re
from datetime import date

import polars as pl

from lexkb.core.text.dates import find_date, find_month
from lexkb.core.text.refs import title_type

# How binding each type of document is (the catalog's `authority_level`; lexkb.answers.
# evidence weighs them): law made by a legislature, a standard, a contract, a company's policy.
AUTHORITY = {
    "regulation": "primary",
    "directive": "primary",
    "decision": "primary",
    "act": "primary",
    "code": "primary",
    "standard": "standard",
    "contract": "contract",
    "policy": "internal",
}
_EU_ACTS = ("regulation", "directive", "decision")
# The day an EU act applies from: "It shall apply from 17 January 2025." (its final article).
_APPLIES = re.compile(
    r"\b(?:It|This (?:Regulation|Directive|Decision)) shall apply from ([^.;]{6,40})"
)
# A UK Act's Royal Assent, printed in brackets under its long title: "[8th April 2010]".
_ASSENT = re.compile(r"\[([^\]\n]{6,30})\]")
# The first day a standard applies to: "... for annual reporting periods beginning on or after
# 1 January 2019".
_STANDARD_APPLIES = re.compile(
    r"shall apply (?:this|these) (?:Standard|amendments?) for annual (?:reporting )?periods "
    r"beginning on or after ([^.;]{6,30})"
)
# A standard's cover: its month of issue on a line of its own.
_COVER_MONTH = re.compile(
    r"^\s*(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December)\s+\d{4}\s*$"
)
# A policy's control table: "Effective Date December 2024".
_POLICY_EFFECTIVE = re.compile(r"\bEffective\s+Date:?\s+([^|\n]{4,30})")
# How far into a document its front matter (Royal Assent, control table) is looked for.
_FRONT_PARAGRAPHS = 5


def infer(documents: pl.DataFrame, chunks: pl.DataFrame) -> pl.DataFrame:
    """`documents` with `document_type`, `authority_level`, `published` and `effective` filled
    in where the document states them and nothing has set them yet."""
    paragraphs = (
        chunks.filter(pl.col("chunk_level") == "paragraph")
        .sort("document_id", "chunk_index")
        .group_by("document_id", maintain_order=True)
        .agg(pl.col("content"))
    )
    texts = dict(zip(paragraphs["document_id"], paragraphs["content"].to_list(), strict=True))
    columns: dict[str, list] = {
        n: [] for n in ("document_type", "authority_level", "published", "effective")
    }
    for doc in documents.iter_rows(named=True):
        kind = doc["document_type"] or title_type(
            doc["title"], doc["document_key"], doc["aliases"] or []
        )
        published, effective = stated_dates(
            kind, doc["title"] or "", texts.get(doc["document_id"], [])
        )
        columns["document_type"].append(kind)
        columns["authority_level"].append(
            doc["authority_level"] or AUTHORITY.get((kind or "").casefold())
        )
        columns["published"].append(doc["published"] or published)
        columns["effective"].append(doc["effective"] or effective)
    return documents.with_columns(
        pl.Series("document_type", columns["document_type"], dtype=pl.String),
        pl.Series("authority_level", columns["authority_level"], dtype=pl.String),
        pl.Series("published", columns["published"], dtype=pl.Date),
        pl.Series("effective", columns["effective"], dtype=pl.Date),
    )


def stated_dates(
    kind: str | None, title: str, paragraphs: list[str]
) -> tuple[date | None, date | None]:
    """(published, effective) as a document of type `kind` states them: an EU act's date in its
    title ("of 14 December 2022") and the day it applies from; an Act's Royal Assent; the day a
    standard applies from; a policy's effective date (a month alone is read as its first day)."""
    front = "\n".join(paragraphs[:_FRONT_PARAGRAPHS])
    if kind in _EU_ACTS:
        applies = next((m for p in paragraphs if (m := _APPLIES.search(p))), None)
        return _day(title), _day(applies.group(1)) if applies else None
    if kind == "act":
        assent = next((d for m in _ASSENT.finditer(front) if (d := _day(m.group(1)))), None)
        return assent, None
    if kind == "standard":
        applies = next((m for p in paragraphs if (m := _STANDARD_APPLIES.search(p))), None)
        # The month a standard was issued, printed alone on its cover ("June 2023").
        issued = next(
            (m for p in paragraphs[:_FRONT_PARAGRAPHS] if (m := _COVER_MONTH.match(p))), None
        )
        return (
            find_month(issued.group(0)) if issued else None,
            _day(applies.group(1)) if applies else None,
        )
    if kind == "policy" and (stated := _POLICY_EFFECTIVE.search(front)):
        return None, _day(stated.group(1)) or find_month(stated.group(1))
    return None, None


def _day(text: str) -> date | None:
    found = find_date(text)
    return found[0] if found else None


# What a catalog entry gives that a document's text may not: the fields `lexkb build` reports
# missing, each with the documents that lack it.
CATALOG_FIELDS = ("document_type", "authority_level", "dates", "source_url")


def catalog_gaps(documents: pl.DataFrame) -> dict[str, list[str]]:
    """Field -> the keys of the documents that neither state it nor have it from a catalog
    ("dates": neither a published nor an effective day); fields no document lacks are left
    out."""
    lacking = {
        "document_type": pl.col("document_type").is_null(),
        "authority_level": pl.col("authority_level").is_null(),
        "dates": pl.col("published").is_null() & pl.col("effective").is_null(),
        "source_url": pl.col("source_url").is_null(),
    }
    gaps = {
        name: documents.filter(lacking[name]).sort("document_key")["document_key"].to_list()
        for name in CATALOG_FIELDS
    }
    return {name: keys for name, keys in gaps.items() if keys}
