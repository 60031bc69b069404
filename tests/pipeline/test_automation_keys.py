"""The sensor's run keys name one change each, and the daily schedule selects every partition,
against a real Dagster instance.

Dagster launches a sensor's request only when no run of that sensor carries its run key yet;
`_launch` does the same against the instance's runs, then executes the request in process with
the key as a tag, as the daemon would launch it. The sensor's cursor is carried from tick to
tick as the daemon carries it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest

from assets.partitions import documents_partitions
from assets.resources import LexkbSettings
from lexkb import Index
from pipelines.automation import daily_rebuild, source_changes
from pipelines.definitions import defs
from pipelines.in_process import run_build
from tests.conftest import CORPUS

pytestmark = pytest.mark.build

RUN_KEY = "dagster/run_key"
NOTICE = "# Notice 7/2026\n\n1. Firms shall report breaches within {days} business days.\n"


class Sensor:
    """Ticks of `source_changes` with the cursor carried over, and the runs they launched."""

    def __init__(self, instance: dg.DagsterInstance, settings: LexkbSettings) -> None:
        self.instance, self.settings, self.cursor = instance, settings, None
        self.launched: list[str] = []

    def tick(self) -> dg.SensorResult:
        context = dg.build_sensor_context(
            instance=self.instance, resources={"settings": self.settings}, cursor=self.cursor
        )
        result = source_changes(context)
        self.cursor = result.cursor
        for request in result.dynamic_partitions_requests or []:
            if isinstance(request, dg.AddDynamicPartitionsRequest):
                self.instance.add_dynamic_partitions(
                    request.partitions_def_name, list(request.partition_keys)
                )
            else:
                for key in request.partition_keys:
                    self.instance.delete_dynamic_partition(request.partitions_def_name, key)
        return result

    def change(self) -> str:
        """Tick, tick again before anything ran, then launch the request; its run key. The
        second tick asks for the same change under the same key, except for a removal: its
        partition went at the first tick, so there is nothing to ask again."""
        first = self.tick().run_requests
        again = [r.run_key for r in self.tick().run_requests]
        assert len(first) == 1
        assert again == ([] if first[0].job_name == "reindex" else [first[0].run_key])
        self._launch(first[0])
        assert self.tick().skip_reason  # the run caught the change up
        return first[0].run_key

    def _launch(self, request: dg.RunRequest) -> None:
        done = self.instance.get_runs(filters=dg.RunsFilter(tags={RUN_KEY: request.run_key}))
        if done:
            return  # Dagster skips a key it has run
        result = defs.resolve_job_def(request.job_name).execute_in_process(
            instance=self.instance,
            resources={"settings": self.settings},
            partition_key=request.partition_key,
            tags={RUN_KEY: request.run_key},
        )
        assert result.success
        self.launched.append(request.run_key)


def _days(root: Path) -> str | None:
    """The reporting deadline the index holds for the notice, or None without the notice."""
    lookup = Index.open(root).get("notice 1")
    return lookup.hit.text.split("within ")[1].split()[0] if lookup.found else None


def test_every_change_of_a_file_gets_its_own_run_key(tmp_path):
    sources = tmp_path / "sources"
    sources.mkdir()
    shutil.copy(CORPUS / "records-retention-act.txt", sources)
    root = tmp_path / "root"
    instance = dg.DagsterInstance.ephemeral()
    settings = LexkbSettings(sources=[str(sources)], root=str(root))
    run_build([sources], root, instance=instance, embedder="none")
    sensor = Sensor(instance, settings)
    assert sensor.tick().skip_reason
    notice = sources / "notice.md"

    keys = []
    for days in ("five", "ten", "five"):  # A -> B -> A
        notice.write_text(NOTICE.format(days=days), encoding="utf-8")
        keys.append(sensor.change())
        assert _days(root) == days
    notice.unlink()  # removed, re-added (as A), removed again
    keys.append(sensor.change())
    assert _days(root) is None
    notice.write_text(NOTICE.format(days="five"), encoding="utf-8")
    keys.append(sensor.change())
    assert _days(root) == "five"
    notice.unlink()
    keys.append(sensor.change())
    assert _days(root) is None
    assert len(set(keys)) == len(keys) == 6
    assert sensor.launched == keys
    assert sum(k.startswith("removed:notice.md#") for k in keys) == 2


def test_daily_rebuild_selects_partitions_added_out_of_name_order(tmp_path):
    home = tmp_path / "dagster_home"
    home.mkdir()
    instance = dg.DagsterInstance.local_temp(str(home))
    added = ["manual.md", "rules.txt", "annex.pdf"]
    instance.add_dynamic_partitions(documents_partitions.name, added)
    request = daily_rebuild(dg.build_schedule_context(instance=instance))
    chosen = dg.PartitionKeyRange(
        request.tags["dagster/asset_partition_range_start"],
        request.tags["dagster/asset_partition_range_end"],
    )
    with dg.partition_loading_context(dynamic_partitions_store=instance):  # as a run resolves it
        selected = documents_partitions.get_partition_keys_in_range(chosen)
    assert sorted(selected) == sorted(added)
