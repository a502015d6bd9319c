"""The operations tools on the pattern operator's real checkpoints (lesson L1's test 2, stopped
with the last hour's keys still live): ``inspect`` suspects nothing in bounded pattern state and
flags exactly the keys a deliberately leaking run keeps without a deadline; the leak alarm fires
on that run's growth and stays quiet on the bounded one; ``rescale`` in the middle of a run
loses no match."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from streamwarden.checkpoints.inspect import InspectReport, inspect_checkpoint
from streamwarden.checkpoints.rescale import rescale_checkpoint
from streamwarden.config import MonitoringConfig
from streamwarden.monitoring import QueryMonitor
from tests.operators.pattern_load import LoadRun, run_load, stream_matches, write_landing
from tests.operators.test_pattern_bounded_state import MATCHES_PER_SLOT_HOUR

pytestmark = pytest.mark.spark
KEYS, HOURS = 64, 6


@dataclass
class InspectedRun:
    load: LoadRun
    monitor: QueryMonitor
    report: InspectReport


def inspected_run(spark, root: Path, *, leak: bool) -> Iterator[InspectedRun]:
    name = "patterns_leaking" if leak else "patterns_bounded"
    config = MonitoringConfig(alarm_window=4, prometheus_port=None, slow_batch_threshold=None)
    monitor = QueryMonitor(spark, name, checkpoint=root / "checkpoint", config=config).start()
    try:
        load = run_load(
            spark, root, test=2, keys=KEYS, hours=HOURS, leak=leak, query_name=name, close=False
        )
        monitor.flush()
        yield InspectedRun(load, monitor, inspect_checkpoint(spark, root / "checkpoint"))
    finally:
        monitor.close()


@pytest.fixture(scope="module")
def bounded(spark, tmp_path_factory) -> Iterator[InspectedRun]:
    yield from inspected_run(spark, tmp_path_factory.mktemp("patterns-bounded"), leak=False)


@pytest.fixture(scope="module")
def leaking(spark, tmp_path_factory) -> Iterator[InspectedRun]:
    yield from inspected_run(spark, tmp_path_factory.mktemp("patterns-leaking"), leak=True)


def state_growth_batches(run: InspectedRun) -> list[int]:
    return [f.batch_id for f in run.monitor.findings if f.kind == "state_growth"]


def test_bounded_pattern_state_is_reported_and_not_suspected(bounded):
    (op,) = bounded.report.operators
    assert op.name.startswith("transformWithState") and op.time_mode == "EventTime"
    (state,) = op.states
    assert state.name == "pattern_state" and not state.ttl
    # the run stopped mid-stream: the keys whose events still wait hold state, each with its timer
    assert 0 < state.keys < bounded.load.state_rows[-1]
    assert op.timers is not None and op.timers.rows == state.keys
    assert state.leak.suspect_keys == 0
    assert not bounded.report.leak_suspected


def test_keys_kept_without_a_deadline_are_flagged_and_only_those(leaking, bounded):
    (op,) = leaking.report.operators
    (state,) = op.states
    # the leak keeps every key ever seen; the live ones are the bounded run's keys, with timers
    assert state.keys == leaking.load.distinct_keys
    (bounded_state,) = bounded.report.operators[0].states
    assert op.timers is not None and op.timers.rows == bounded_state.keys
    assert state.leak.suspect_keys == leaking.load.distinct_keys - op.timers.rows
    assert state.leak.reason == "no TTL and no registered timer for these keys"
    # the suspects are retired keys: generations older than the last hour's
    last_hour_generation = (HOURS - 1) * 3
    sample = [json.loads(k) for k in state.leak.sample]
    assert sample and all(
        int(next(iter(key.values())).split("-g")[1]) < last_hour_generation for key in sample
    )
    assert leaking.report.leak_suspected


def test_the_leak_alarm_fires_on_the_leaking_pattern_run(leaking):
    window = leaking.monitor.config.alarm_window
    # every batch whose window has left the warm-up behind (in the first hour fewer keys write
    # state per batch, so the key rate is not yet steady and the alarm holds back)
    assert state_growth_batches(leaking) == list(range(window, HOURS))
    assert leaking.monitor.errors == []


def test_the_leak_alarm_stays_quiet_on_bounded_pattern_state(bounded):
    assert len(bounded.monitor.records) >= HOURS
    assert state_growth_batches(bounded) == []
    assert bounded.monitor.errors == []


def test_a_rescaled_pattern_checkpoint_resumes_with_every_match(spark, tmp_path):
    """L1 test 2 in two halves: 2 -> 4 state partitions between them; the matches of both halves
    are exactly the analytic count of the whole run, and the state ends empty."""
    staged, landing = tmp_path / "staged", tmp_path / "landing"
    write_landing(staged, test=2, keys=KEYS, hours=HOURS)
    landing.mkdir()
    files = sorted(staged.iterdir())
    checkpoint = tmp_path / "checkpoint"
    matched: list[int] = []
    for path in files[: HOURS // 2]:
        path.rename(landing / path.name)
    matched += stream_matches(spark, landing, checkpoint)[1]
    report = rescale_checkpoint(spark, checkpoint, 4)
    assert (report.partitions_before, report.partitions_after) == (2, 4)
    assert report.rows_after == report.rows_before
    # keys whose events still wait for the watermark cross the rescale, each with its timer
    assert report.rows_before["0/pattern_state"] == report.rows_before["0/timers"] > 0
    for path in files[HOURS // 2 :]:
        path.rename(landing / path.name)
    matched += stream_matches(spark, landing, checkpoint)[1]
    assert sum(matched) == KEYS * HOURS * MATCHES_PER_SLOT_HOUR
    (op,) = inspect_checkpoint(spark, checkpoint).operators
    assert op.partitions == 4 and op.states[0].keys == 0
