"""Which source files a parse run must parse, and which it takes from the cache.

Parsed elements are cached by the file's SHA-256 (transforms.publishing.workdir), so a partition whose
bytes were parsed before, by any run, is not parsed again; only the rest go to the workers
(transforms.reading.isolation).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from transforms.publishing.workdir import WorkDir
from transforms.reading.source_files import SourceFile


@dataclass
class ParsePlan:
    """`jobs`: (source, where its elements go) for the files to parse; `cached`: how many
    files' elements were found; `failed`: partition key -> why it cannot be parsed."""

    jobs: list[tuple[SourceFile, Path]] = field(default_factory=list)
    cached: int = 0
    failed: dict[str, str] = field(default_factory=dict)


def plan(work: WorkDir, by_key: dict[str, SourceFile], keys: list[str]) -> ParsePlan:
    """The plan for the partitions `keys` of the sources `by_key`. A cached file's quarantine
    record is cleared: these bytes did parse, so a record left by an earlier run is stale."""
    result = ParsePlan()
    for key in keys:
        source = by_key.get(key)
        if source is None:
            result.failed[key] = "not among the current source files; materialize source_files"
            continue
        target = work.elements(source.sha256)
        if target.is_file():
            result.cached += 1
            work.clear_error(key)
        else:
            result.jobs.append((source, target))
    return result
