"""A keyed processor as a pipeline runs it (``operator = "process"``): the state of keys that
retire and never return is freed, also when the whole input idles, and the state rows follow
the model of the plain-Python tester batch by batch (the FLINK-19970 shape); a crash at any
point resumes to the output of an uninterrupted run; a checkpoint refuses a processor whose
states changed; a raising processor dead-letters its key's records and the run finishes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from streamwarden.errors import ConfigError
from streamwarden.monitoring.progress_log import read_progress_log
from streamwarden.monitoring.prometheus import PrometheusExporter
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import read_output
from streamwarden.sinks.parquet import batch_dir_name
from streamwarden.testing import ProcessorTester
from tests.operators.processors import PageCounter
from tests.support import (
    PAGEVIEW_TOML,
    kill_when_written,
    pageview,
    process_pipeline_config,
    run_command,
    write_batches,
)

pytestmark = pytest.mark.spark


def retiring_users(batches: int, per_batch: int = 4) -> list[list[str]]:
    """Each batch five minutes after the one before: ``per_batch`` new users with two pages
    each, who never come back (the users of a hundred days of churn, in miniature)."""
    out = []
    for b in range(batches):
        users = [f"u{b}-{i}" for i in range(per_batch)]
        out.append([pageview(u, b * 5 + p, page=p + 1) for u in users for p in (0, 1)])
    return out


def test_the_state_of_keys_that_never_return_follows_the_model_and_is_freed(spark, tmp_path):
    batches = retiring_users(10)
    write_batches(tmp_path / "landing", batches)
    config = process_pipeline_config(tmp_path, process={"max_out_of_orderness": "0s"})
    run = Pipeline(config, spark).run(once=True)
    spark_rows = [sum(o["numRowsTotal"] for o in p["stateOperators"]) for p in run.progress]

    # Spark's batch N runs under the watermark of batches 0..N-1 (for late events and timers
    # alike), and once the input is read, one batch without data under the last watermark
    model, watermark, rows = ProcessorTester(PageCounter(), key="user_id", time="ts"), 0, []
    by_state = []
    for batch in batches:
        records = [json.loads(r) for r in batch]
        model.run_batch(records, watermark)
        rows.append(model.state_rows)
        by_state.append({"count": model.state_rows_by_state.get("count", 0)})
        watermark = max(watermark, *(r["ts"] for r in records))
    model.advance_watermark(watermark)
    rows.append(model.state_rows)
    by_state.append({"count": model.state_rows_by_state.get("count", 0)})
    assert spark_rows == rows
    # the rows per state name, as the progress log and Prometheus carry them
    logged = read_progress_log(tmp_path / "checkpoint.progress")
    assert [r.state_rows_by_state for r in logged] == by_state
    exporter = PrometheusExporter("process-test")
    try:
        exporter.update(logged[-1])
        labels = {"query": "process-test", "state": "count"}
        gauge = exporter.registry.get_sample_value("streamwarden_process_state_rows", labels)
        assert gauge == by_state[-1]["count"]
    finally:
        exporter.close()
    # flat: each key's count is freed once the watermark is 30 minutes (and at most a grid
    # step) past its last page, so eight batches' users are held, however many come and go
    assert set(rows[7:-1]) == {8 * 4}

    idle = Pipeline(config, spark).run(once=True, drain=True)  # no new input: the drain
    assert sum(o["numRowsTotal"] for o in idle.progress[-1]["stateOperators"]) == 0


def test_a_raising_processor_dead_letters_its_key_and_the_run_goes_on(spark, tmp_path):
    write_batches(
        tmp_path / "landing",
        [[pageview("a", 0), pageview("bad", 1), pageview("b", 2)], [pageview("a", 3)]],
    )
    config = process_pipeline_config(tmp_path, "tests.operators.processors:RaisesOnBad")
    Pipeline(config, spark).run(once=True, drain=True)
    dead = read_output(spark, tmp_path / "dead_letters")
    output = read_output(spark, tmp_path / "output")
    assert dead is not None and output is not None
    assert [(d.key, d.reason) for d in dead.collect()] == [("bad", "processor_error")]
    assert "RuntimeError: bad user" in dead.collect()[0].detail
    assert sorted((r.user_id, r.pages) for r in output.collect()) == [("a", 1), ("a", 2), ("b", 1)]


def test_a_checkpoint_refuses_a_processor_whose_states_changed(spark, tmp_path):
    write_batches(tmp_path / "landing", [[pageview("a", 0)]])
    Pipeline(process_pipeline_config(tmp_path), spark).run(once=True)
    renamed = process_pipeline_config(tmp_path, "tests.operators.processors:RenamedCounter")
    with pytest.raises(ConfigError, match="holds the states of a processor with another layout"):
        Pipeline(renamed, spark).run(once=True)


CONFIG_TOML = (
    """
name = "process-crash"
operator = "process"
[source]
path = "landing"
max_files_per_trigger = 1
[process]
processor = "tests.operators.processors:PageCounter"
[sinks.output]
path = "output"
[sinks.dead_letters]
path = "dead_letters"
[checkpoint]
path = "checkpoint"
[spark]
shuffle_partitions = 2
"""
    + PAGEVIEW_TOML
)


def rows_of(spark: Any, folder: Path) -> list[tuple[Any, ...]]:
    frame = read_output(spark, folder)
    return [] if frame is None else sorted(tuple(r) for r in frame.drop("batch_id").collect())


@pytest.mark.soak  # fault injection: two pipeline processes, one SIGKILLed (make soak)
def test_a_killed_run_resumes_to_the_output_of_an_uninterrupted_run(spark, tmp_path):
    batches = [[pageview(f"u{i % 7}", b * 3 + i * 0.1) for i in range(40)] for b in range(5)]
    batches[2].append("{not json")
    reference, crashed = tmp_path / "reference", tmp_path / "crashed"
    for root in (reference, crashed):
        write_batches(root / "landing", batches)
        (root / "pipeline.toml").write_text(CONFIG_TOML)
    Pipeline(process_pipeline_config(reference), spark).run(once=True, drain=True)

    command = run_command(crashed / "pipeline.toml", "--once", "--drain")
    kill_when_written(command, crashed / "output" / batch_dir_name(2))
    restarted = subprocess.run(command, capture_output=True, text=True, check=False)
    assert restarted.returncode == 0, restarted.stderr[-2000:]

    assert rows_of(spark, crashed / "output") == rows_of(spark, reference / "output")
    assert len(rows_of(spark, reference / "output")) == 200  # one row per page, none twice
    dead = [r[:2] for r in rows_of(spark, crashed / "dead_letters")]
    assert dead == [("{not json", "malformed_json")]


def test_a_quiet_input_frees_the_state_through_the_idle_ticks(spark, tmp_path):
    """No drain: a continuous run whose input stops; the ticks move event time on."""
    import _thread
    import threading
    import time

    write_batches(tmp_path / "landing", [[pageview("a", 0), pageview("b", 1)]])
    config = process_pipeline_config(
        tmp_path,
        process={"idle_timeout": "10m"},
        spark={"trigger_interval": "500ms", "shuffle_partitions": 2},
    )
    started = time.monotonic()
    seen: list[int] = []

    class Freed(Exception):
        pass

    def watch(progress: dict[str, Any], _stats: Any) -> None:
        seen.append(sum(o["numRowsTotal"] for o in progress["stateOperators"]))
        if seen[-1] == 0 and max(seen) > 0:
            raise Freed

    guard = threading.Timer(300, _thread.interrupt_main)  # should the ticks never come
    guard.start()
    try:
        with pytest.raises(Freed):
            Pipeline(config, spark).run(
                once=False,
                on_progress=watch,
                now_ms=lambda: int((time.monotonic() - started) * 3_600_000),  # an hour a second
            )
    finally:
        guard.cancel()
    assert max(seen) == 2  # two users: a count each


def test_the_rows_per_state_name_are_carried_on_only_while_no_batch_goes_unseen():
    from streamwarden.monitoring.progress_log import BatchRecord, StateRowsTally
    from streamwarden.monitoring.summary import BatchSummary
    from streamwarden.operators.observed import OBSERVATION

    def progress(batch: int, added: int) -> dict[str, Any]:
        metrics = {"output": 0, "state_rows_added_count": added}
        return {"batchId": batch, "observedMetrics": {OBSERVATION: metrics}}

    tally = StateRowsTally()
    assert [tally.add(b, progress(b, n)) for b, n in enumerate((3, 2, -4))] == [
        {"count": 3},
        {"count": 5},
        {"count": 1},
    ]
    summary = BatchSummary.from_progress({"batchId": 2, "timestamp": "2026-01-01T00:00:00Z"})
    restarted = StateRowsTally(BatchRecord(summary, state_rows_by_state={"count": 1}))
    assert restarted.add(3, progress(3, 2)) == {"count": 3}
    assert restarted.add(5, progress(5, 1)) is None  # batch 4 was never seen
    assert restarted.add(6, progress(6, 1)) is None
    assert StateRowsTally().add(4, progress(4, 1)) is None  # no log to carry on from
