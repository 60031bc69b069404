"""Dagster's run and op tags that lexkb sets, by the names Dagster documents.

Dagster keeps their constants in a private module (`dagster._core.storage.tags`), which may move
between releases; the tag names themselves are its public contract (op priority in the
multiprocess executor, a run over a range of partitions).
"""

from __future__ import annotations

# An op with a higher priority starts first when several are ready ("dagster/priority").
PRIORITY = "dagster/priority"
# A run over a range of partitions, its first and last key.
PARTITION_RANGE_START = "dagster/asset_partition_range_start"
PARTITION_RANGE_END = "dagster/asset_partition_range_end"
