"""Index-wide assets: the tables over every document and the citation graph."""

import json

import dagster as dg
import polars as pl

from assets import tags
from assets.documents import document_chunks
from assets.resources import EmbedderSettings, LexkbSettings
from assets.sources import source_files
from lexkb.core.clauses.labels import decider
from transforms.edges import citation_cache, resolve
from transforms.publishing import staging
from transforms.publishing.snapshot_tables import assemble_reusing_tokens, with_duplicate_sources
from transforms.reading import metadata, source_parts
from transforms.reading import source_files as src
from transforms.reading.plausibility import drop_implausible
from transforms.reading.quarantine import quarantine_frame, refused_records
from transforms.structure.clauses import clause_table
from transforms.structure.defined_terms import definition_table


@dg.asset(
    group_name="index",
    deps=[source_files, document_chunks],
    description="Documents, sections and chunks of every source, with BM25 terms and postings, "
    "and the quarantine: every source left out, and why.",
)
def search_tables(
    context: dg.AssetExecutionContext, settings: LexkbSettings
) -> dg.MaterializeResult:
    work = settings.work
    sources = src.from_frame(pl.read_parquet(work.sources))
    try:
        parts, quarantined = source_parts.gather(work, sources)
    except source_parts.PartMissing as missing:
        raise dg.Failure(
            f"{missing.key} has no chunks yet: materialize document_chunks for its partition",
        ) from None
    scan = json.loads(work.scan_report.read_text(encoding="utf-8"))
    quarantined += refused_records(scan["refused"])
    parts, failing = drop_implausible(parts, {s.key: s.sha256 for s in sources})
    quarantined += failing
    for record in failing:
        context.log.warning(f"quarantined {record['source']}: {record['error']}")
    if not parts:
        summary = "; ".join(f"{r['source']}: {r['error']}" for r in quarantined[:20])
        raise dg.Failure(
            f"nothing to publish: every source file was quarantined ({len(quarantined)}): "
            f"{summary or 'no source files'}",
            metadata={"quarantined": dg.MetadataValue.json(quarantined)},
        )
    catalog = metadata.load(settings.sources, [s.path for s in sources])
    for file, reason in catalog.errors.items():
        context.log.warning(f"metadata ignored: {file}: {reason}")
    tables, table_settings, tokenized = assemble_reusing_tokens(work, parts, catalog)
    tables["documents"] = with_duplicate_sources(tables["documents"], sources)
    tables["quarantine"] = quarantine_frame(quarantined)
    table_settings = staging.with_inputs(
        table_settings, sources, quarantined, scan["ignored"], catalog.errors
    )
    staging.stage(settings.tables, tables, table_settings)
    paragraphs = tables["chunks"].filter(pl.col("chunk_level") == "paragraph")
    lengths = paragraphs["content"].str.len_chars()
    median = lengths.median()
    context.log.info(
        f"{tables['chunks'].height} chunks from {len(parts)} sources, "
        f"{len(quarantined)} quarantined"
    )
    return dg.MaterializeResult(
        metadata={
            "documents": tables["documents"].height,
            "chunks": tables["chunks"].height,
            "terms": tables["bm25_terms"].height,
            "texts_tokenized": tokenized,
            "postings": tables["bm25_postings"].height,
            "median_paragraph_chars": int(median) if isinstance(median, int | float) else 0,
            "paragraph_length_chart": dg.MetadataValue.md(length_chart(lengths.to_list())),
            "by_chunk_level": dg.MetadataValue.json(
                dict(tables["chunks"].group_by("chunk_level").len().sort("chunk_level").rows())
            ),
            "quarantined": len(quarantined),
            "quarantine": dg.MetadataValue.md(quarantine_table(quarantined)),
            "ignored_files": dg.MetadataValue.json(scan["ignored"]),
            "metadata_errors": dg.MetadataValue.json(catalog.errors),
        }
    )


def quarantine_table(records: list[dict], limit: int = 50) -> str:
    """The quarantine as a Markdown table for the asset view."""
    rows = ["| file | stage | reason |", "| --- | --- | --- |"]
    rows += [f"| {r['source']} | {r['stage']} | {r['error']} |" for r in records[:limit]]
    if len(records) > limit:
        rows.append(f"| … {len(records) - limit} more | | |")
    return "\n".join(rows)


LENGTH_BUCKETS = (0, 100, 250, 500, 1000, 1500, 3000)


def length_chart(lengths: list[int], width: int = 30) -> str:
    """Paragraph lengths as a small bar chart, a row per bucket, readable in the asset view."""
    counts = [0] * len(LENGTH_BUCKETS)
    for length in lengths:
        counts[sum(length >= edge for edge in LENGTH_BUCKETS) - 1] += 1
    top = max(counts, default=0) or 1
    rows = ["| characters | paragraphs | |", "| --- | ---: | --- |"]
    for n, (edge, count) in enumerate(zip(LENGTH_BUCKETS, counts, strict=True)):
        label = f"{edge}–{LENGTH_BUCKETS[n + 1] - 1}" if n + 1 < len(LENGTH_BUCKETS) else f"{edge}+"
        rows.append(f"| {label} | {count} | {'█' * round(width * count / top)} |")
    return "\n".join(rows)


@dg.asset(
    group_name="index",
    deps=[search_tables],
    description="Cross-references between paragraphs, resolved to chunks (edges.parquet).",
    # Before the embeddings: with the edges, dbt has its inputs and starts (pipelines.dbt).
    op_tags={tags.PRIORITY: "1"},
)
def citation_edges(
    context: dg.AssetExecutionContext, settings: LexkbSettings
) -> dg.MaterializeResult:
    work = settings.work.path
    out = settings.tables
    aliases = staging.settings(out)["aliases"]
    tables = {name: pl.read_parquet(out / f"{name}.parquet") for name in TABLES_FOR_EDGES}
    edges, reread, paragraphs = citation_cache.build_edges(
        work, tables["chunks"], tables["documents"], aliases
    )
    edges.write_parquet(out / "edges.parquet")
    stats = resolve.summary(edges)
    context.log.info(
        f"{stats['edges']} edges, resolution rate {stats['resolution_rate']:.3f}; "
        f"{reread} of {paragraphs} paragraph texts read for citations, the rest kept"
    )
    return dg.MaterializeResult(
        metadata={
            **stats,
            "paragraphs_read": reread,
            "most_frequent_unresolved": dg.MetadataValue.md(
                "| reference | times |\n| --- | --- |\n"
                + "\n".join(f"| {text} | {n} |" for text, n in resolve.most_unresolved(edges))
            ),
        }
    )


TABLES_FOR_EDGES = ("chunks", "documents")


@dg.asset(
    group_name="index",
    deps=[search_tables],
    description="Defined terms and the paragraphs defining them (definitions.parquet).",
)
def defined_terms(
    context: dg.AssetExecutionContext, settings: LexkbSettings
) -> dg.MaterializeResult:
    out = settings.tables
    found = definition_table(pl.read_parquet(out / "chunks.parquet"))
    found.write_parquet(out / "definitions.parquet")
    context.log.info(f"{found.height} definitions in {found['document_id'].n_unique()} documents")
    by_document = found.group_by("document_id").len().sort("len", descending=True).head(10)
    return dg.MaterializeResult(
        metadata={
            "definitions": found.height,
            "terms": found["term_key"].n_unique(),
            "by_document": dg.MetadataValue.json(dict(by_document.rows())),
        }
    )


@dg.asset(
    group_name="index",
    deps=[search_tables],
    description="Contract paragraphs labelled by clause type: default types zero-shot, CUAD "
    "categories by fitted heads; without an embedder, by the names they say (clauses.parquet).",
)
def clause_types(
    context: dg.AssetExecutionContext, settings: LexkbSettings, embedder: EmbedderSettings
) -> dg.MaterializeResult:
    out = settings.tables
    tables = {name: pl.read_parquet(out / f"{name}.parquet") for name in TABLES_FOR_EDGES}
    labelled = clause_table(
        tables["chunks"],
        tables["documents"],
        settings.work.path / "embeddings",
        embed=embedder.embeds,
    )
    labelled.write_parquet(out / "clauses.parquet")
    decided = out / staging.CLAUSE_MODEL_FILE
    if embedder.embeds:  # a model decided them: query time may read them rather than decide again
        decided.write_text(json.dumps(decider(), sort_keys=True), encoding="utf-8")
    else:
        decided.unlink(missing_ok=True)
    counts = dict(labelled.group_by("clause_type").len().sort("clause_type").rows())
    context.log.info(
        f"{labelled.height} clause labels on {labelled['chunk_id'].n_unique()} paragraphs"
    )
    return dg.MaterializeResult(
        metadata={
            "labels": labelled.height,
            "paragraphs": labelled["chunk_id"].n_unique(),
            "by_type": dg.MetadataValue.json(counts),
            "by_method": dg.MetadataValue.json(
                dict(labelled.group_by("method").len().sort("method").rows())
            ),
        }
    )
