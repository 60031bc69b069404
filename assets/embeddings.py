"""Dense vectors of every chunk, from the configured embedder, cached across builds."""

import json

import dagster as dg
import polars as pl

from assets.index import TABLE_DIR, search_tables
from pipelines.resources import EmbedderSettings, LexkbSettings
from transforms.embeddings import embed_chunks
from transforms.workdir import WorkDir

EMBEDDER_FILE = "embedder.json"


@dg.asset(
    group_name="index",
    deps=[search_tables],
    description="One vector per chunk (embeddings.parquet); empty when no embedder is set.",
)
def chunk_embeddings(
    context: dg.AssetExecutionContext, lexkb: LexkbSettings, embedder: EmbedderSettings
) -> dg.MaterializeResult:
    work = WorkDir(lexkb.root)
    out = work.path / TABLE_DIR
    chunks = pl.read_parquet(
        out / "chunks.parquet", columns=["chunk_id", "content", "content_hash"]
    )
    model = embedder.build()
    if model is None:
        context.log.warning("no embedder configured: the snapshot will be keyword-only")
        table = pl.DataFrame(
            schema={"chunk_id": pl.String, "model": pl.String, "vector": pl.List(pl.Float32)}
        )
        info, stats = None, {"embedded": 0, "reused": 0, "dimension": 0}
    else:
        table, stats = embed_chunks(chunks, model, work.path / "embeddings")
        info = {"name": model.name, "dimension": stats["dimension"], "normalized": True}
    table.write_parquet(out / "embeddings.parquet")
    (out / EMBEDDER_FILE).write_text(json.dumps(info), encoding="utf-8")
    return dg.MaterializeResult(
        metadata={"embedder": info["name"] if info else "none", **stats, "vectors": table.height}
    )
