"""A policy's document-control table: the title, owner and dates it is governed by.

Company policies open with a small table ("Policy Name | Anti-Money Laundering (AML) Policy |
Responsible Party | ... | Effective Date | December 2024") instead of a title line; the
paragraph under it is often the company's name, which is not the policy's title. The table's
cells arrive joined by spaces (unstructured's element text), so its values are read between the
field names such tables use.
"""

from __future__ import annotations

import re

import polars as pl

from lexkb.core.text.dates import find_date

# How far into a document its control table may stand.
FIRST_ELEMENTS = 5
_TITLE_FIELDS = ("Policy Name", "Policy Title", "Document Title", "Document Name", "Title")
_OWNER_FIELDS = ("Responsible Party", "Policy Owner", "Document Owner", "Owner")
_OTHER_FIELDS = (
    *_OWNER_FIELDS,
    "Contact",
    "Status",
    "Version",
    "Effective Date",
    "Revision Date",
    "Review Date",
    "Last Reviewed",
    "Approved By",
    "Approval Date",
    "Classification",
    "Department",
)
_FIELD = re.compile(
    r"\b(" + "|".join(re.escape(f) for f in (*_TITLE_FIELDS, *_OTHER_FIELDS)) + r")\b:?\s*"
)


def control_fields(elements: pl.DataFrame) -> dict[str, str]:
    """Field name -> value of the document-control table among the first elements, if any."""
    for row in elements.head(FIRST_ELEMENTS).iter_rows(named=True):
        if row["category"] != "Table":
            continue
        text = " ".join((row["text"] or "").split())
        marks = list(_FIELD.finditer(text))
        if len(marks) < 2 or marks[0].start() != 0:
            continue
        return {
            mark.group(1): text[mark.end() : following.start() if following else None].strip()
            for mark, following in zip(marks, [*marks[1:], None], strict=True)
        }
    return {}


def control_metadata(elements: pl.DataFrame) -> dict:
    """The document's title, author (the policy's owner) and effective day from its
    document-control table; empty without one. A date without its day ("December 2024") is no
    effective day."""
    fields = control_fields(elements)
    found: dict = {}
    if title := next((fields[f] for f in _TITLE_FIELDS if fields.get(f)), None):
        found["title"] = title
    if owner := next((fields[f] for f in _OWNER_FIELDS if fields.get(f)), None):
        found["author"] = owner
    if (dated := find_date(fields.get("Effective Date", ""))) is not None:
        found["effective"] = dated[0]
    return found
