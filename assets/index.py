"""Index-wide assets: the tables over every document, the citation graph, the snapshot."""

import json

import dagster as dg
import polars as pl

from assets.documents import document_chunks
from assets.sources import source_files
from pipelines.resources import LexkbSettings
from transforms import edges as graph
from transforms import metadata
from transforms import sources as src
from transforms.publish import publish
from transforms.tables import assemble
from transforms.workdir import WorkDir

TABLE_DIR = "tables"


@dg.asset(
    group_name="index",
    deps=[source_files, document_chunks],
    description="Documents, sections and chunks of every source, with BM25 terms and postings.",
)
def search_tables(context: dg.AssetExecutionContext, lexkb: LexkbSettings) -> dg.MaterializeResult:
    work = WorkDir(lexkb.root)
    sources = src.from_frame(pl.read_parquet(work.sources))
    parts, skipped = [], {}
    for source in sources:
        error = work.error(source.key)
        if error is not None:
            skipped[source.key] = error
            continue
        part = work.read_part(source.key)
        if part is None:
            raise dg.Failure(
                f"{source.key} has no chunks yet: materialize document_chunks for its partition",
            )
        parts.append(part)
    catalog = metadata.load(lexkb.sources, [s.path for s in sources])
    for file, reason in catalog.errors.items():
        context.log.warning(f"metadata ignored: {file}: {reason}")
    tables, settings = assemble(parts, catalog)
    out = work.path / TABLE_DIR
    out.mkdir(parents=True, exist_ok=True)
    # Tables derived from older ones must not reach a snapshot of these: citation_edges,
    # chunk_embeddings and the dbt model `standards` write them again.
    derived = ("edges", "standards", "embeddings", "line_embeddings")
    for name in [f"{table}.parquet" for table in derived] + ["embedder.json"]:
        (out / name).unlink(missing_ok=True)
    for name, frame in tables.items():
        frame.write_parquet(out / f"{name}.parquet")
    settings["sources"] = [{"key": s.key, "sha256": s.sha256, "format": s.format} for s in sources]
    settings["skipped_sources"] = skipped
    settings["metadata_errors"] = catalog.errors
    (out / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    paragraphs = tables["chunks"].filter(pl.col("chunk_level") == "paragraph")
    lengths = paragraphs["content"].str.len_chars()
    context.log.info(f"{tables['chunks'].height} chunks from {len(parts)} sources")
    return dg.MaterializeResult(
        metadata={
            "documents": tables["documents"].height,
            "chunks": tables["chunks"].height,
            "terms": tables["bm25_terms"].height,
            "postings": tables["bm25_postings"].height,
            "median_paragraph_chars": int(lengths.median() or 0),
            "paragraph_length_chart": dg.MetadataValue.md(length_chart(lengths.to_list())),
            "by_chunk_level": dg.MetadataValue.json(
                dict(tables["chunks"].group_by("chunk_level").len().sort("chunk_level").rows())
            ),
            "skipped_sources": dg.MetadataValue.json(skipped),
            "metadata_errors": dg.MetadataValue.json(catalog.errors),
        }
    )


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
)
def citation_edges(context: dg.AssetExecutionContext, lexkb: LexkbSettings) -> dg.MaterializeResult:
    out = WorkDir(lexkb.root).path / TABLE_DIR
    settings = json.loads((out / "settings.json").read_text(encoding="utf-8"))
    tables = {name: pl.read_parquet(out / f"{name}.parquet") for name in TABLES_FOR_EDGES}
    edges = graph.build_edges(tables["chunks"], tables["documents"], settings["aliases"])
    edges.write_parquet(out / "edges.parquet")
    stats = graph.summary(edges)
    context.log.info(f"{stats['edges']} edges, resolution rate {stats['resolution_rate']:.3f}")
    unresolved = (
        edges.filter(pl.col("reference_type") == "unresolved")
        .group_by("reference_text")
        .len()
        .sort("len", descending=True)
        .head(10)
    )
    return dg.MaterializeResult(
        metadata={
            **stats,
            "most_frequent_unresolved": dg.MetadataValue.md(
                "| reference | times |\n| --- | --- |\n"
                + "\n".join(f"| {text} | {n} |" for text, n in unresolved.rows())
            ),
        }
    )


TABLES_FOR_EDGES = ("chunks", "documents")


@dg.asset(
    group_name="index",
    deps=[search_tables, citation_edges, dg.AssetKey("chunk_embeddings"), dg.AssetKey("standards")],
    description="The versioned read-only snapshot under ROOT/snapshots, pointed at by ROOT/CURRENT.",
)
def published_snapshot(
    context: dg.AssetExecutionContext, lexkb: LexkbSettings
) -> dg.MaterializeResult:
    out = WorkDir(lexkb.root).path / TABLE_DIR
    settings = json.loads((out / "settings.json").read_text(encoding="utf-8"))
    sources = settings.pop("sources")
    settings["embedder"] = json.loads((out / "embedder.json").read_text(encoding="utf-8"))
    tables = {p.stem: pl.read_parquet(p) for p in sorted(out.glob("*.parquet"))}
    result = publish(lexkb.root_path, tables, settings, sources, keep=lexkb.keep_snapshots)
    if result.created:
        context.log.info(f"published {result.version}")
    else:
        context.log.info(f"content unchanged; CURRENT stays {result.version}")
    return dg.MaterializeResult(
        metadata={
            "version": result.version,
            "path": dg.MetadataValue.path(str(result.path)),
            "published_new": result.created,
            "chunks": tables["chunks"].height,
            "skipped_sources": dg.MetadataValue.json(settings["skipped_sources"]),
        }
    )
