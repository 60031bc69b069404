"""Index-wide assets: the tables over every document, the citation graph, the snapshot."""

import json

import dagster as dg
import polars as pl
from dagster._core.storage.tags import PRIORITY_TAG

from assets.documents import document_chunks
from assets.resources import LexkbSettings
from assets.sources import source_files
from lexkb.core.store import root_lock
from transforms import checks_worker, citation_cache, metadata, table_checks
from transforms import edges as graph
from transforms import source_files as src
from transforms.clauses import clause_table
from transforms.defined_terms import definition_table
from transforms.publish import publish, push_snapshot
from transforms.quarantine import quarantine_frame
from transforms.tables import assemble
from transforms.workdir import WorkDir

TABLE_DIR = "tables"


@dg.asset(
    group_name="index",
    deps=[source_files, document_chunks],
    description="Documents, sections and chunks of every source, with BM25 terms and postings, "
    "and the quarantine: every source left out, and why.",
)
def search_tables(context: dg.AssetExecutionContext, lexkb: LexkbSettings) -> dg.MaterializeResult:
    work = WorkDir(lexkb.root_path)
    sources = src.from_frame(pl.read_parquet(work.sources))
    parts, quarantined = [], []
    for source in sources:
        record = work.error_record(source.key)
        if record is not None:
            quarantined.append(record)
            # Its byte-identical copies were never parsed; they fail for the same reason.
            quarantined += [
                {
                    **record,
                    "source": copy,
                    "error": f"{record['error']} (same bytes as {source.key})",
                }
                for copy in source.duplicates
            ]
            continue
        part = work.read_part(source.key)
        if part is None:
            raise dg.Failure(
                f"{source.key} has no chunks yet: materialize document_chunks for its partition",
            )
        parts.append(part)
    scan = json.loads(work.scan_report.read_text(encoding="utf-8"))
    quarantined += [
        {
            "source": r["key"],
            "sha256": None,
            "stage": "scan",
            "kind": r["kind"],
            "error": r["reason"],
        }
        for r in scan["refused"]
    ]
    parts, failing = _plausible(parts, {s.key: s.sha256 for s in sources})
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
    catalog = metadata.load(lexkb.sources, [s.path for s in sources])
    for file, reason in catalog.errors.items():
        context.log.warning(f"metadata ignored: {file}: {reason}")
    kept = work.kept_tokens()
    tables, settings, tokens = assemble(parts, catalog, kept=kept)
    work.keep_tokens(tokens)
    tokenized = (
        tokens.height if kept is None else tokens.join(kept, on="content_hash", how="anti").height
    )
    duplicates = {s.key: list(s.duplicates) for s in sources}
    tables["documents"] = tables["documents"].with_columns(
        pl.col("source_name")
        .replace_strict(duplicates, default=[], return_dtype=pl.List(pl.String))
        .alias("duplicate_sources")
    )
    tables["quarantine"] = quarantine_frame(quarantined)
    out = work.path / TABLE_DIR
    out.mkdir(parents=True, exist_ok=True)
    # Tables derived from older ones must not reach a snapshot of these: citation_edges,
    # chunk_embeddings and the dbt model `standards` write them again.
    derived = (
        "edges",
        "standards",
        "embeddings",
        "line_embeddings",
        "clauses",
        "definitions",
        "topics",
    )
    for name in [f"{table}.parquet" for table in derived] + ["embedder.json"]:
        (out / name).unlink(missing_ok=True)
    for name, frame in tables.items():
        frame.write_parquet(out / f"{name}.parquet")
    settings["sources"] = [{"key": s.key, "sha256": s.sha256, "format": s.format} for s in sources]
    settings["quarantined"] = {r["source"]: r["error"] for r in quarantined}
    settings["ignored_files"] = scan["ignored"]
    settings["metadata_errors"] = catalog.errors
    (out / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    paragraphs = tables["chunks"].filter(pl.col("chunk_level") == "paragraph")
    lengths = paragraphs["content"].str.len_chars()
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
            "median_paragraph_chars": int(lengths.median() or 0),
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


def _plausible(
    parts: list[tuple[pl.DataFrame, ...]], shas: dict[str, str]
) -> tuple[list[tuple[pl.DataFrame, ...]], list[dict]]:
    """Parts whose documents pass the per-document checks, and quarantine records for the
    others: a check about one document quarantines that document, never the build."""
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
    op_tags={PRIORITY_TAG: "1"},
)
def citation_edges(context: dg.AssetExecutionContext, lexkb: LexkbSettings) -> dg.MaterializeResult:
    work = WorkDir(lexkb.root_path).path
    out = work / TABLE_DIR
    settings = json.loads((out / "settings.json").read_text(encoding="utf-8"))
    tables = {name: pl.read_parquet(out / f"{name}.parquet") for name in TABLES_FOR_EDGES}
    stamp = citation_cache.grammar_stamp(
        graph.grammar_names(tables["documents"], settings["aliases"])
    )
    readings = citation_cache.load(work, stamp)
    kept = set(readings)
    edges = graph.build_edges(tables["chunks"], tables["documents"], settings["aliases"], readings)
    citation_cache.save(work, stamp, readings)
    reread = len(readings.keys() - kept)
    edges.write_parquet(out / "edges.parquet")
    stats = graph.summary(edges)
    context.log.info(
        f"{stats['edges']} edges, resolution rate {stats['resolution_rate']:.3f}; "
        f"{reread} of {len(readings)} paragraph texts read for citations, the rest kept"
    )
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
            "paragraphs_read": reread,
            "most_frequent_unresolved": dg.MetadataValue.md(
                "| reference | times |\n| --- | --- |\n"
                + "\n".join(f"| {text} | {n} |" for text, n in unresolved.rows())
            ),
        }
    )


TABLES_FOR_EDGES = ("chunks", "documents")


@dg.asset(
    group_name="index",
    deps=[search_tables],
    description="Defined terms and the paragraphs defining them (definitions.parquet).",
)
def defined_terms(context: dg.AssetExecutionContext, lexkb: LexkbSettings) -> dg.MaterializeResult:
    out = WorkDir(lexkb.root_path).path / TABLE_DIR
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
    "categories by fitted heads (clauses.parquet).",
)
def clause_types(context: dg.AssetExecutionContext, lexkb: LexkbSettings) -> dg.MaterializeResult:
    out = WorkDir(lexkb.root_path).path / TABLE_DIR
    tables = {name: pl.read_parquet(out / f"{name}.parquet") for name in TABLES_FOR_EDGES}
    labelled = clause_table(
        tables["chunks"], tables["documents"], WorkDir(lexkb.root_path).path / "embeddings"
    )
    labelled.write_parquet(out / "clauses.parquet")
    counts = dict(labelled.group_by("clause_type").len().sort("clause_type").rows())
    context.log.info(
        f"{labelled.height} clause labels on {labelled['chunk_id'].n_unique()} paragraphs"
    )
    return dg.MaterializeResult(
        metadata={
            "labels": labelled.height,
            "paragraphs": labelled["chunk_id"].n_unique(),
            "by_type": dg.MetadataValue.json(counts),
        }
    )


@dg.asset(
    group_name="index",
    deps=[
        search_tables,
        citation_edges,
        clause_types,
        defined_terms,
        dg.AssetKey("chunk_embeddings"),
        dg.AssetKey("topic_clusters"),
        dg.AssetKey("standards"),
    ],
    description="The versioned read-only snapshot under ROOT/snapshots, pointed at by ROOT/CURRENT.",
)
def published_snapshot(
    context: dg.AssetExecutionContext, lexkb: LexkbSettings
) -> dg.MaterializeResult:
    out = WorkDir(lexkb.root_path).path / TABLE_DIR
    settings = json.loads((out / "settings.json").read_text(encoding="utf-8"))
    sources = settings.pop("sources")
    settings["embedder"] = json.loads((out / "embedder.json").read_text(encoding="utf-8"))
    tables = {p.stem: pl.read_parquet(p) for p in sorted(out.glob("*.parquet"))}
    with root_lock.hold(lexkb.root_path, wait_seconds=600, purpose="publish"):
        result = publish(lexkb.root_path, tables, settings, sources, keep=lexkb.keep_snapshots)
        if lexkb.remote:
            result = push_snapshot(lexkb.root, result, keep=lexkb.keep_snapshots)
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
            "documents": tables["documents"].height,
            "quarantined": dg.MetadataValue.json(settings["quarantined"]),
            "ignored_files": dg.MetadataValue.json(settings["ignored_files"]),
        }
    )
