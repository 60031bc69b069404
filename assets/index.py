"""Index-wide assets: the tables over every document, the citation graph, the snapshot."""

import json

import dagster as dg
import polars as pl

from assets.documents import document_chunks
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
    deps=[document_chunks],
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
    # Edges of older tables must not reach a snapshot of these: citation_edges rewrites them.
    (out / "edges.parquet").unlink(missing_ok=True)
    for name, frame in tables.items():
        frame.write_parquet(out / f"{name}.parquet")
    settings["sources"] = [{"key": s.key, "sha256": s.sha256, "format": s.format} for s in sources]
    settings["skipped_sources"] = skipped
    settings["metadata_errors"] = catalog.errors
    (out / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    lengths = tables["chunks"]["content"].str.len_chars()
    context.log.info(f"{tables['chunks'].height} chunks from {len(parts)} sources")
    return dg.MaterializeResult(
        metadata={
            "documents": tables["documents"].height,
            "chunks": tables["chunks"].height,
            "terms": tables["bm25_terms"].height,
            "postings": tables["bm25_postings"].height,
            "median_chunk_chars": int(lengths.median() or 0),
            "skipped_sources": dg.MetadataValue.json(skipped),
            "metadata_errors": dg.MetadataValue.json(catalog.errors),
        }
    )


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
    deps=[search_tables, citation_edges],
    description="The versioned read-only snapshot under ROOT/snapshots, pointed at by ROOT/CURRENT.",
)
def published_snapshot(
    context: dg.AssetExecutionContext, lexkb: LexkbSettings
) -> dg.MaterializeResult:
    out = WorkDir(lexkb.root).path / TABLE_DIR
    settings = json.loads((out / "settings.json").read_text(encoding="utf-8"))
    sources = settings.pop("sources")
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
