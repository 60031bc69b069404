"""The snapshot, where the build's branches meet: the tables, the citation graph, the clause
and term tables, the vectors and topics, and the dbt models. It sits above assets/ because one
of its inputs is a dbt model (pipelines.dbt), named here by dagster-dbt's lookup rather than by
a string."""

import dagster as dg
from dagster_dbt import get_asset_key_for_model

from assets.embeddings import chunk_embeddings, topic_clusters
from assets.index_tables import citation_edges, clause_types, defined_terms, search_tables
from assets.resources import LexkbSettings
from pipelines.dbt import dbt_models
from transforms.publishing import staging
from transforms.publishing.publish import publish


@dg.asset(
    group_name="index",
    deps=[
        search_tables,
        citation_edges,
        clause_types,
        defined_terms,
        chunk_embeddings,
        topic_clusters,
        get_asset_key_for_model([dbt_models], "standards"),
    ],
    description="The versioned read-only snapshot under ROOT/snapshots, pointed at by ROOT/CURRENT.",
)
def published_snapshot(
    context: dg.AssetExecutionContext, settings: LexkbSettings
) -> dg.MaterializeResult:
    tables, recorded, sources = staging.for_publishing(settings.tables)
    result = publish(
        settings.root_path,
        tables,
        recorded,
        sources,
        keep=settings.keep_snapshots,
        remote=settings.root if settings.remote else None,
    )
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
            "quarantined": dg.MetadataValue.json(recorded["quarantined"]),
            "ignored_files": dg.MetadataValue.json(recorded["ignored_files"]),
        }
    )
