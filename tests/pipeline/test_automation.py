"""The source sensor and the daily schedule, evaluated and run against a real instance."""

from __future__ import annotations

import dagster as dg
import pytest

from assets.partitions import documents_partitions
from assets.resources import LexkbSettings
from lexkb import Index
from pipelines.automation import daily_rebuild, source_changes
from pipelines.definitions import defs
from pipelines.in_process import run_build

pytestmark = pytest.mark.build


def _tick(instance: dg.DagsterInstance, settings: LexkbSettings) -> dg.SensorResult:
    context = dg.build_sensor_context(instance=instance, resources={"settings": settings})
    result = source_changes(context)
    for request in result.dynamic_partitions_requests or []:
        if isinstance(request, dg.AddDynamicPartitionsRequest):
            instance.add_dynamic_partitions(
                request.partitions_def_name, list(request.partition_keys)
            )
        else:
            for key in request.partition_keys:
                instance.delete_dynamic_partition(request.partitions_def_name, key)
    return result


def _run(instance, settings, request: dg.RunRequest) -> set[str]:
    """Execute what the sensor asked for; return the document partitions the run parsed."""
    result = defs.resolve_job_def(request.job_name).execute_in_process(
        instance=instance, resources={"settings": settings}, partition_key=request.partition_key
    )
    assert result.success
    return {
        event.partition
        for event in result.get_asset_materialization_events()
        if event.asset_key == dg.AssetKey("document_elements")
    }


def test_sensor_reruns_only_the_partition_of_the_file_that_changed(corpus_copy, tmp_path):
    root = tmp_path / "root"
    instance = dg.DagsterInstance.ephemeral()
    settings = LexkbSettings(sources=[str(corpus_copy)], root=str(root))
    run_build([corpus_copy], root, instance=instance)
    assert _tick(instance, settings).skip_reason

    # A new file: a partition and a run of that partition only.
    (corpus_copy / "notice.md").write_text(
        "# Notice 7/2026\n\n1. Firms shall report breaches of Rule 4.3.1 of the Lexkb Rulebook "
        "within five business days.\n",
        encoding="utf-8",
    )
    result = _tick(instance, settings)
    assert [r.partition_key for r in result.run_requests] == ["notice.md"]
    assert "notice.md" in instance.get_dynamic_partitions(documents_partitions.name)
    assert _run(instance, settings, result.run_requests[0]) == {"notice.md"}
    index = Index.open(root)
    assert index.get("notice 1").hit.document_key == "notice"
    assert index.get("notice 1").cites[0].ref == "4.3.1"
    assert _tick(instance, settings).skip_reason

    # A changed file: its partition re-runs, nothing else is parsed.
    act = corpus_copy / "records-retention-act.txt"
    act.write_text(act.read_text().replace("seven years", "nine years"), encoding="utf-8")
    result = _tick(instance, settings)
    assert [r.partition_key for r in result.run_requests] == ["records-retention-act.txt"]
    assert _run(instance, settings, result.run_requests[0]) == {"records-retention-act.txt"}
    assert "nine years" in Index.open(root).get("Records Retention Act § 103(b)").hit.text

    # A removed file: its partition goes, and the index is rebuilt without parsing anything.
    (corpus_copy / "client-assets-faq.jsonl").unlink()
    result = _tick(instance, settings)
    assert "client-assets-faq.jsonl" not in instance.get_dynamic_partitions(
        documents_partitions.name
    )
    assert [(r.job_name, r.partition_key) for r in result.run_requests] == [("reindex", None)]
    assert _run(instance, settings, result.run_requests[0]) == set()
    assert "LKB-FAQ" not in {d["document_key"] for d in Index.open(root).documents()}
    assert _tick(instance, settings).skip_reason


def test_daily_schedule_rebuilds_every_partition(corpus_copy, tmp_path):
    home = tmp_path / "dagster_home"
    home.mkdir()
    instance = dg.DagsterInstance.local_temp(str(home))
    context = dg.build_schedule_context(instance=instance)
    assert isinstance(daily_rebuild(context), dg.SkipReason)
    run_build([corpus_copy], tmp_path / "root", instance=instance)
    request = daily_rebuild(dg.build_schedule_context(instance=instance))
    keys = sorted(instance.get_dynamic_partitions(documents_partitions.name))
    assert request.tags["dagster/asset_partition_range_start"] == keys[0]
    assert request.tags["dagster/asset_partition_range_end"] == keys[-1]
    assert defs.get_schedule_def("daily_rebuild").cron_schedule == "0 3 * * *"


def test_writer_runs_queue_one_at_a_time(tmp_path, monkeypatch):
    import shutil

    from pipelines.definitions import defs
    from tests.conftest import REPO

    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(REPO / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    with dg.DagsterInstance.get() as instance:
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
        assert instance.nux_enabled is False  # no newsletter dialog over the UI
        queue = instance.get_concurrency_config().run_queue_config
        assert {"key": "lexkb/writer", "limit": 1} in queue.tag_concurrency_limits
    for name in ("scan_sources", "build_index", "update_index", "reindex"):
        assert defs.resolve_job_def(name).tags.get("lexkb/writer") == "index", name
