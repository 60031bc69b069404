"""The list of source files, which also keeps the `documents` partitions in step with it."""

import dagster as dg

from pipelines.partitions import documents_partitions
from pipelines.resources import LexkbSettings
from transforms import sources as src
from transforms.workdir import WorkDir


@dg.asset(group_name="ingest", description="Supported files found under the configured sources.")
def source_files(context: dg.AssetExecutionContext, lexkb: LexkbSettings) -> dg.MaterializeResult:
    found = src.discover(lexkb.sources)
    work = WorkDir(lexkb.root)
    work.path.mkdir(parents=True, exist_ok=True)
    src.to_frame(found).write_parquet(work.sources)
    keys = [s.key for s in found]
    existing = set(context.instance.get_dynamic_partitions(documents_partitions.name))
    added = [k for k in keys if k not in existing]
    removed = sorted(existing - set(keys))
    if added:
        context.instance.add_dynamic_partitions(documents_partitions.name, added)
    for key in removed:
        context.instance.delete_dynamic_partition(documents_partitions.name, key)
    formats: dict[str, int] = {}
    for s in found:
        formats[s.format] = formats.get(s.format, 0) + 1
    return dg.MaterializeResult(
        metadata={
            "files": len(found),
            "added": len(added),
            "removed": len(removed),
            "by_format": dg.MetadataValue.json(formats),
        }
    )
