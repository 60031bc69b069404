"""Great Expectations suites over the tables a snapshot is made of.

A service loads snapshots unattended, so a build must prove its tables sound before they are
published: ids unique, hashes matching the text, no empty chunks, refs unique per document, every
edge endpoint present, and no document silently lost since the last snapshot. Each suite runs in
an ephemeral GX context (nothing written, nothing sent) and reports, per expectation, how many
rows failed and which.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Set
from dataclasses import dataclass, field

import polars as pl

# Rows of a failing expectation carried into the report (and the Dagster UI).
MAX_FAILING_ROWS = 20
# A paragraph averaging fewer characters than this, or more, means the structure went wrong.
CHARS_PER_PARAGRAPH = (8, 50_000)


@dataclass(frozen=True)
class Expectation:
    description: str
    success: bool
    unexpected_count: int
    failing_rows: list[dict] = field(default_factory=list)


@dataclass(frozen=True)
class SuiteResult:
    suite: str
    rows: int
    expectations: list[Expectation]

    @property
    def success(self) -> bool:
        return all(e.success for e in self.expectations)

    def failures(self) -> list[Expectation]:
        return [e for e in self.expectations if not e.success]


def load_gx():
    """Great Expectations and one ephemeral context (cheap once GX is imported)."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "False")
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    return gx, context


def run_suite(
    name: str,
    frame: pl.DataFrame,
    expectations: list[tuple[str, Callable]],
    id_columns: list[str],
    max_rows: int | None = MAX_FAILING_ROWS,
) -> SuiteResult:
    """Validate `frame` with GX; `expectations` pairs a description with a factory taking the
    `gx.expectations` module. Failing rows are reported by their `id_columns`, at most
    `max_rows` of them (None: all)."""
    gx, context = load_gx()
    data = frame.to_pandas()
    source = context.data_sources.add_pandas(f"{name}_source")
    batch = source.add_dataframe_asset(name).add_batch_definition_whole_dataframe("all")
    suite = context.suites.add(gx.ExpectationSuite(name=name))
    for _, make in expectations:
        suite.add_expectation(make(gx.expectations))
    definition = context.validation_definitions.add(
        gx.ValidationDefinition(name=f"{name}_validation", data=batch, suite=suite)
    )
    outcome = definition.run(
        batch_parameters={"dataframe": data}, result_format={"result_format": "COMPLETE"}
    )
    results = []
    for (description, _), result in zip(expectations, outcome.results, strict=True):
        indices = (result.result or {}).get("unexpected_index_list") or []
        rows = frame.select(id_columns)[list(indices)[:max_rows]].to_dicts() if indices else []
        count = (result.result or {}).get("unexpected_count")
        results.append(
            Expectation(
                description,
                bool(result.success),
                int(count if count is not None else (0 if result.success else 1)),
                rows,
            )
        )
    return SuiteResult(name, frame.height, results)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_chunks(chunks: pl.DataFrame) -> SuiteResult:
    frame = chunks.select(
        "chunk_id",
        "document_id",
        "chunk_level",
        "ref",
        "content_hash",
        pl.col("content").map_elements(_sha256, return_dtype=pl.String).alias("content_sha256"),
        pl.col("content").str.strip_chars().str.len_chars().alias("content_chars"),
        # Refs must be unique per document among paragraphs; other levels repeat them.
        pl.when(pl.col("chunk_level") == "paragraph")
        .then(pl.col("document_id") + "\u241f" + pl.col("ref"))
        .alias("paragraph_ref"),
    )
    return run_suite(
        "chunks",
        frame,
        [
            (
                "chunk_id is never null",
                lambda e: e.ExpectColumnValuesToNotBeNull(column="chunk_id"),
            ),
            ("chunk_id is unique", lambda e: e.ExpectColumnValuesToBeUnique(column="chunk_id")),
            (
                "content_hash is the SHA-256 of content",
                lambda e: e.ExpectColumnPairValuesToBeEqual(
                    column_A="content_hash", column_B="content_sha256"
                ),
            ),
            (
                "no chunk is empty",
                lambda e: e.ExpectColumnValuesToBeBetween(column="content_chars", min_value=1),
            ),
            (
                "paragraph refs are unique per document",
                lambda e: e.ExpectColumnValuesToBeUnique(column="paragraph_ref"),
            ),
        ],
        ["chunk_id", "document_id", "ref"],
    )


def _exists(column: str, ids: pl.Series) -> pl.Expr:
    """Whether the column's id is among `ids` (null counts as none to look for). Reference checks
    read this column rather than handing GX every id as a value set, which it copies into every
    result it builds (36 s for ObliQA's edges against 16,779 chunk ids; now well under a second)."""
    return (pl.col(column).is_null() | pl.col(column).is_in(ids.implode())).alias(
        f"{column}_exists"
    )


def check_sections(sections: pl.DataFrame) -> SuiteResult:
    return run_suite(
        "sections",
        sections.select(
            "section_id",
            "document_id",
            "parent_id",
            "title",
            _exists("parent_id", sections["section_id"]),
        ),
        [
            (
                "section_id is never null",
                lambda e: e.ExpectColumnValuesToNotBeNull(column="section_id"),
            ),
            ("section_id is unique", lambda e: e.ExpectColumnValuesToBeUnique(column="section_id")),
            (
                "every parent section exists",
                lambda e: e.ExpectColumnValuesToBeInSet(
                    column="parent_id_exists", value_set=[True]
                ),
            ),
        ],
        ["section_id", "document_id", "title"],
    )


def _document_sizes(documents: pl.DataFrame, chunks: pl.DataFrame) -> pl.DataFrame:
    sizes = (
        chunks.filter(pl.col("chunk_level") == "paragraph")
        .group_by("document_id")
        .agg(
            pl.len().cast(pl.Int64).alias("paragraphs_in_chunks"),
            pl.col("content").str.len_chars().sum().alias("paragraph_chars"),
        )
    )
    return (
        documents.select("document_id", "document_key", pl.col("chunk_count").cast(pl.Int64))
        .join(sizes, on="document_id", how="left")
        .with_columns(
            pl.col("paragraphs_in_chunks").fill_null(0),
            (pl.col("paragraph_chars").fill_null(0) / pl.col("chunk_count").clip(1)).alias(
                "chars_per_paragraph"
            ),
        )
    )


def check_documents(documents: pl.DataFrame, chunks: pl.DataFrame) -> SuiteResult:
    """Index-wide: document ids unique, every paragraph a document counts present in the chunks
    table, and no document without one. A document that reads implausibly is quarantined
    before this check (`implausible_documents`), so one odd file never blocks a publish."""
    frame = _document_sizes(documents, chunks)
    return run_suite(
        "documents",
        frame,
        [
            (
                "document_id is unique",
                lambda e: e.ExpectColumnValuesToBeUnique(column="document_id"),
            ),
            (
                "the chunks table holds every paragraph the document counts",
                lambda e: e.ExpectColumnPairValuesToBeEqual(
                    column_A="chunk_count", column_B="paragraphs_in_chunks"
                ),
            ),
            (
                "every document has a paragraph",
                lambda e: e.ExpectColumnValuesToBeBetween(column="chunk_count", min_value=1),
            ),
        ],
        ["document_id", "document_key", "chunk_count"],
    )


def implausible_documents(documents: pl.DataFrame, chunks: pl.DataFrame) -> dict[str, str]:
    """document_id -> the expectation it fails, for documents whose paragraphs cannot be right
    (none at all, or averaging fewer than 8 or more than 50,000 characters)."""
    frame = _document_sizes(documents, chunks)
    low, high = CHARS_PER_PARAGRAPH
    result = run_suite(
        "document_plausibility",
        frame,
        [
            (
                "the document has a paragraph",
                lambda e: e.ExpectColumnValuesToBeBetween(column="chunk_count", min_value=1),
            ),
            (
                f"its paragraphs average {low} to {high} characters",
                lambda e: e.ExpectColumnValuesToBeBetween(
                    column="chars_per_paragraph", min_value=low, max_value=high
                ),
            ),
        ],
        ["document_id", "document_key", "chars_per_paragraph"],
        max_rows=None,
    )
    failed: dict[str, str] = {}
    for expectation in result.failures():
        for row in expectation.failing_rows:
            average = row.get("chars_per_paragraph")
            detail = f" (it averages {average:,.0f})" if average is not None else ""
            reason = f"failed the check: {expectation.description}{detail}"
            failed.setdefault(row["document_id"], reason)
    return failed


def check_edges(edges: pl.DataFrame, chunks: pl.DataFrame) -> SuiteResult:
    ids = chunks["chunk_id"]
    return run_suite(
        "edges",
        edges.select(
            "source_chunk_id",
            "target_chunk_id",
            "reference_text",
            "reference_type",
            "weight",
            _exists("source_chunk_id", ids),
            _exists("target_chunk_id", ids),
        ),
        [
            (
                "every source chunk exists",
                lambda e: e.ExpectColumnValuesToBeInSet(
                    column="source_chunk_id_exists", value_set=[True]
                ),
            ),
            (
                "every target chunk exists",
                lambda e: e.ExpectColumnValuesToBeInSet(
                    column="target_chunk_id_exists", value_set=[True]
                ),
            ),
            (
                "reference_type is known",
                lambda e: e.ExpectColumnValuesToBeInSet(
                    column="reference_type",
                    value_set=["internal", "external", "outside", "unresolved"],
                ),
            ),
            (
                "weight is between 0 and 1",
                lambda e: e.ExpectColumnValuesToBeBetween(
                    column="weight", min_value=0, max_value=1
                ),
            ),
        ],
        ["source_chunk_id", "target_chunk_id", "reference_text"],
    )


def check_continuity(
    previous: pl.DataFrame | None,
    documents: pl.DataFrame,
    sources: dict[str, str],
    quarantined: Set[str] = frozenset(),
) -> SuiteResult:
    """No document of the previous snapshot may disappear while its source file is still there
    with the same bytes (a parser or structure regression). `sources` maps source key to SHA-256;
    a document whose file changed and now fails is quarantined, which is accounted for."""
    rows = [] if previous is None else previous.to_dicts()
    # A document is still there under another key once its key was made readable
    # (transforms.structure.document_keys): its id, derived from its file, has not moved.
    present = set(documents["document_key"])
    present_ids = set(documents["document_id"]) if "document_id" in documents.columns else set()

    def status(row: dict) -> str:
        if row["document_key"] in present or row.get("document_id") in present_ids:
            return "present"
        if row["source_name"] not in sources:
            return "source removed"
        if (
            row["source_name"] in quarantined
            and sources[row["source_name"]] != row["source_sha256"]
        ):
            return "changed and quarantined"
        return "lost"

    statuses = [status(row) for row in rows]
    frame = pl.DataFrame(
        {
            "document_key": [r["document_key"] for r in rows],
            "source_name": [r["source_name"] for r in rows],
            "status": statuses,
        },
        schema={"document_key": pl.String, "source_name": pl.String, "status": pl.String},
    )
    return run_suite(
        "continuity",
        frame,
        [
            (
                "no document lost while its source file remains",
                lambda e: e.ExpectColumnValuesToBeInSet(
                    column="status",
                    value_set=["present", "source removed", "changed and quarantined"],
                ),
            )
        ],
        ["document_key", "source_name", "status"],
    )


def vector_measures(vectors: pl.DataFrame) -> pl.DataFrame:
    """Each vector's dimension and length, in place of the vector: what `check_embeddings`
    looks at, computed where the table is read so the checks' worker is sent a few numbers a
    row, not the vectors (82 MB on ObliQA, a second of pickling)."""
    return vectors.select(
        pl.exclude("vector"),
        pl.col("vector").list.len().alias("dimension"),
        pl.col("vector").list.eval(pl.element() ** 2).list.sum().sqrt().alias("norm"),
    )


def check_embeddings(
    embeddings: pl.DataFrame, lines: pl.DataFrame, chunks: pl.DataFrame, embedder: dict | None
) -> SuiteResult:
    """One vector per chunk, line vectors only for paragraphs, all of the declared dimension and
    unit length when declared normalized. Rows are chunks (line 0) and then lines.
    `embeddings` and `lines` are `vector_measures` of the two tables."""
    if embedder is None:
        return run_suite(
            "embeddings",
            pl.concat([embeddings.select("chunk_id"), lines.select("chunk_id")]),
            [("no vectors without an embedder", lambda e: e.ExpectTableRowCountToEqual(value=0))],
            ["chunk_id"],
        )
    dimension = embedder["dimension"]

    measured = ["dimension", "norm"]
    whole = chunks.select(
        "chunk_id", pl.lit(0, pl.Int32).alias("line"), pl.lit(True).alias("owner")
    ).join(embeddings.select("chunk_id", *measured), on="chunk_id", how="left")
    levels = chunks.select("chunk_id", (pl.col("chunk_level") == "paragraph").alias("owner"))
    parts = (
        lines.select("chunk_id", "line", *measured)
        .join(levels, on="chunk_id", how="left")
        .with_columns(pl.col("owner").fill_null(False))
    )
    frame = pl.concat([whole, parts.select(whole.columns)], how="vertical_relaxed")
    expectations = [
        (
            "every chunk has a vector",
            lambda e: e.ExpectColumnValuesToNotBeNull(column="dimension"),
        ),
        (
            "every line vector belongs to a paragraph",
            lambda e: e.ExpectColumnValuesToBeInSet(column="owner", value_set=[True]),
        ),
        (
            f"every vector has {dimension} dimensions",
            lambda e: e.ExpectColumnValuesToBeBetween(
                column="dimension", min_value=dimension, max_value=dimension
            ),
        ),
    ]
    if embedder.get("normalized"):
        expectations.append(
            (
                "every vector has unit length",
                lambda e: e.ExpectColumnValuesToBeBetween(
                    column="norm", min_value=0.999, max_value=1.001
                ),
            )
        )
    return run_suite("embeddings", frame, expectations, ["chunk_id", "line", "dimension", "norm"])
