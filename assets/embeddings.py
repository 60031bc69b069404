"""Dense vectors of every chunk and of the lines of multi-line paragraphs, from the configured
embedder, cached across builds."""

import json

import dagster as dg
import polars as pl

from assets.index_tables import search_tables
from assets.progress import EMBEDDED
from assets.resources import EmbedderSettings, LexkbSettings
from transforms.indexing.chunk_embeddings import (
    CHUNK_VECTORS,
    LINE_VECTORS,
    embed_chunks,
    embedder_record,
)
from transforms.indexing.topics import topic_table
from transforms.publishing.staging import EMBEDDER_FILE


@dg.asset(
    group_name="index",
    deps=[search_tables],
    description="One vector per chunk (embeddings.parquet) and per line of a multi-line paragraph "
    "(line_embeddings.parquet); both empty when no embedder is set.",
)
def chunk_embeddings(
    context: dg.AssetExecutionContext, settings: LexkbSettings, embedder: EmbedderSettings
) -> dg.MaterializeResult:
    work = settings.work
    out = settings.tables
    chunks = pl.read_parquet(
        out / "chunks.parquet",
        columns=[
            "chunk_id",
            "chunk_level",
            "content",
            "content_hash",
            "parent_chunk_id",
            "section_path",
        ],  # fmt: skip
    )
    model = embedder.build()
    if model is None:
        context.log.warning("no embedder configured: the snapshot will be keyword-only")
        table, lines = pl.DataFrame(schema=CHUNK_VECTORS), pl.DataFrame(schema=LINE_VECTORS)
        info, stats = None, {"embedded": 0, "reused": 0, "dimension": 0, "lines": 0}
    else:
        table, lines, stats = embed_chunks(
            chunks,
            model,
            work.path / "embeddings",
            lambda done, total: context.log.info(f"{EMBEDDED}{done}/{total} texts"),
        )
        info = embedder_record(model, stats["dimension"])
    table.write_parquet(out / "embeddings.parquet")
    lines.write_parquet(out / "line_embeddings.parquet")
    (out / EMBEDDER_FILE).write_text(json.dumps(info), encoding="utf-8")
    return dg.MaterializeResult(
        metadata={"embedder": info["name"] if info else "none", **stats, "vectors": table.height}
    )


@dg.asset(
    group_name="index",
    deps=[chunk_embeddings],
    description="Paragraphs clustered by their vectors, each cluster named by its top words "
    "(topics.parquet); empty for a keyword-only build.",
)
def topic_clusters(
    context: dg.AssetExecutionContext, settings: LexkbSettings
) -> dg.MaterializeResult:
    out = settings.tables
    chunks = pl.read_parquet(out / "chunks.parquet", columns=["chunk_id", "chunk_level", "content"])
    topics = topic_table(chunks, pl.read_parquet(out / "embeddings.parquet"))
    topics.write_parquet(out / "topics.parquet")
    sizes = topics.group_by("cluster_id", "label").len().sort("len", descending=True)
    context.log.info(f"{sizes.height} topic clusters over {topics.height} paragraphs")
    return dg.MaterializeResult(
        metadata={
            "clusters": sizes.height,
            "largest": dg.MetadataValue.md(
                "| cluster | label | paragraphs |\n| --- | --- | --- |\n"
                + "\n".join(f"| {c} | {label} | {n} |" for c, label, n in sizes.head(10).rows())
            ),
        }
    )
