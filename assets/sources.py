"""The list of source files, which also keeps the `documents` partitions in step with it."""

import json

import dagster as dg

from assets.partitions import DOCUMENTS
from assets.resources import LexkbSettings
from transforms.reading import source_files as src


@dg.asset(
    group_name="ingest",
    description="Supported files found under the configured sources; what was refused (links "
    "out of the folder, loops, oversized files) or ignored (unsupported types), and why.",
)
def source_files(
    context: dg.AssetExecutionContext, settings: LexkbSettings
) -> dg.MaterializeResult:
    scan = src.scan(settings.sources, settings.follow_symlinks, settings.max_file_mb)
    found = scan.sources
    work = settings.work
    work.path.mkdir(parents=True, exist_ok=True)
    src.to_frame(found).write_parquet(work.sources)
    report = {
        "refused": [vars(item) for item in scan.refused],
        "ignored": scan.ignored,
    }
    work.scan_report.write_text(json.dumps(report, indent=1), encoding="utf-8")
    keys = [s.key for s in found]
    existing = set(context.instance.get_dynamic_partitions(DOCUMENTS))
    added = [k for k in keys if k not in existing]
    removed = sorted(existing - set(keys))
    if added:
        context.instance.add_dynamic_partitions(DOCUMENTS, added)
    for key in removed:
        context.instance.delete_dynamic_partition(DOCUMENTS, key)
    formats: dict[str, int] = {}
    for s in found:
        formats[s.format] = formats.get(s.format, 0) + 1
    for item in scan.refused:
        context.log.warning(f"refused {item.key}: {item.reason}")
    return dg.MaterializeResult(
        metadata={
            "files": len(found),
            "added": len(added),
            "removed": len(removed),
            "by_format": dg.MetadataValue.json(formats),
            "duplicates": dg.MetadataValue.json(
                {s.key: list(s.duplicates) for s in found if s.duplicates}
            ),
            "refused": dg.MetadataValue.json({i.key: i.reason for i in scan.refused}),
            "ignored": dg.MetadataValue.json(scan.ignored),
        }
    )
