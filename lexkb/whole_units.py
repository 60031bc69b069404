"""Units without sub-paragraphs: a section whose text is one paragraph is one unit in two chunks.

An article with no numbered paragraphs ("Article 46 Penalties / Member States shall ...") is
stored as a section chunk and, below it, its one paragraph, often under the same reference.
Citations land on whichever chunk the build resolved them to (the paragraph when one carries the
reference), so a reader asking for the unit must get one chunk, not "ambiguous", and see every
citation of either chunk.
"""

from __future__ import annotations

import polars as pl

from lexkb.core.vocabulary import ChunkLevel


def whole_units(chunks: pl.DataFrame) -> dict[int, tuple[int, int]]:
    """Row -> (section row, paragraph row) for every section chunk with exactly one paragraph
    below it, and for that paragraph."""
    rows = chunks.select("chunk_id", "chunk_level", "parent_chunk_id").with_row_index("row")
    sections = rows.filter(pl.col("chunk_level") == ChunkLevel.SECTION).select(
        pl.col("chunk_id").alias("parent_chunk_id"), pl.col("row").alias("section")
    )
    only = (
        rows.filter(pl.col("chunk_level") == ChunkLevel.PARAGRAPH)
        .group_by("parent_chunk_id")
        .agg(pl.col("row").first().alias("paragraph"), pl.len().alias("paragraphs"))
        .filter(pl.col("paragraphs") == 1)
        .join(sections, on="parent_chunk_id")
    )
    pairs: dict[int, tuple[int, int]] = {}
    for section, paragraph in only.select("section", "paragraph").iter_rows():
        pairs[section] = pairs[paragraph] = (section, paragraph)
    return pairs
