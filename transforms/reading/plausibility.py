"""Sources whose documents cannot be right, quarantined before the index is built from them.

A check about one document (it has no paragraph; its paragraphs average a few characters, or
tens of thousands) quarantines that document's source, never the build: the blocking checks
on the whole tables (assets.checks) then see only plausible documents.
"""

from __future__ import annotations

import polars as pl

from transforms.publishing import checks_worker, table_checks
from transforms.publishing.workdir import Part


def drop_implausible(parts: list[Part], shas: dict[str, str]) -> tuple[list[Part], list[dict]]:
    """The parts whose documents pass the per-document checks
    (transforms.publishing.table_checks.implausible_documents), and quarantine records for the others;
    `shas` gives each source's SHA-256 for its record."""
    if not parts:
        return parts, []
    documents = pl.concat([p[0] for p in parts])
    chunks = pl.concat([p[2].select("document_id", "chunk_level", "content") for p in parts])
    failing = checks_worker.run(table_checks.implausible_documents, documents, chunks)
    if not failing:
        return parts, []
    kept, records = [], []
    for part in parts:
        bad = [doc for doc in part[0]["document_id"] if doc in failing]
        if not bad:
            kept.append(part)
            continue
        name = part[0]["source_name"][0]
        records.append(
            {
                "source": name,
                "sha256": shas.get(name),
                "stage": "check",
                "kind": "implausible",
                "error": failing[bad[0]],
            }
        )
    return kept, records
