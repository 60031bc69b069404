"""Each document's key made readable, once every document of a build is known.

A key is made from the document's file name (transforms.reading.source_files), before the document's
title is read; here, with titles and the catalog applied, a file named by a publisher's number is
keyed by the name it is cited by instead (lexkb.core.text.keys), and a key two documents would
share takes a suffix. Ids stay derived from the file-name key (transforms.structure.ids), so they do not
move when a title is read better; the catalog's references to file-name keys (`refers_to`, its
alias table) are carried over to the new keys.
"""

from __future__ import annotations

import polars as pl

from lexkb.core.text.keys import file_key, readable_key, unique_keys


def readable(
    documents: pl.DataFrame, chunks: pl.DataFrame, aliases: dict[str, str]
) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, str]]:
    """(documents, chunks, the catalog's aliases) with readable keys. A key that is not its
    file's name (given by a passages file) is the publisher's own and stays."""
    rows = documents.select("document_key", "source_name", "title", "short_name").rows()
    own = [key != file_key(source) for key, source, _, _ in rows]
    wanted = [
        key if kept else readable_key(key, title, short)
        for (key, _, title, short), kept in zip(rows, own, strict=True)
    ]
    kept_keys = {key for key, kept in zip(wanted, own, strict=True) if kept}
    made = iter(
        unique_keys([k for k, kept in zip(wanted, own, strict=True) if not kept], kept_keys)
    )
    keys = [key if kept else next(made) for key, kept in zip(wanted, own, strict=True)]
    renamed = {old: new for (old, *_), new in zip(rows, keys, strict=True) if old != new}
    if not renamed:
        return documents, chunks, aliases
    by_id = dict(zip(documents["document_id"], keys, strict=True))
    documents = documents.with_columns(
        pl.Series("document_key", keys, dtype=pl.String),
        pl.col("refers_to").list.eval(pl.element().replace(renamed)),
    )
    chunks = chunks.with_columns(
        pl.col("document_id")
        .replace_strict(by_id, default=pl.col("document_key"))
        .alias("document_key")
    )
    return documents, chunks, {name: renamed.get(key, key) for name, key in aliases.items()}
