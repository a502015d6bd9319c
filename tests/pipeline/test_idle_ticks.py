"""When input goes quiet, idle ticks move event time forward so sessions close (lesson L2)."""

from __future__ import annotations

import itertools
from datetime import timedelta
from typing import Any

import pytest

from streamwarden.config.model import PipelineConfig
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.idle import IdleTicker, ticks_log, write_tick
from streamwarden.pipeline.interrupt import StopRequest
from streamwarden.pipeline.outputs import account, read_output
from streamwarden.pipeline.runner import ticks_dir
from streamwarden.sources.file_log import latest_compact
from tests.support import minutes, pageview, pipeline_config, spark_settings, write_batches

TIMEOUT = timedelta(minutes=5)
NOW = 1_000_000_000
COMPACT = "spark.sql.streaming.fileSource.log.compactInterval"


def test_no_tick_while_input_keeps_arriving():
    ticker = IdleTicker(TIMEOUT)
    for step in range(10):
        now = NOW + step * 60_000
        ticker.observe(now, input_rows=5, max_event_ms=minutes(step))
        assert ticker.due_tick(now) is None


def test_a_tick_after_the_idle_timeout_advances_event_time_by_the_idle_time():
    ticker = IdleTicker(TIMEOUT)
    ticker.observe(NOW, input_rows=5, max_event_ms=minutes(10))
    ticker.observe(NOW + 60_000, input_rows=0, max_event_ms=None)
    assert ticker.due_tick(NOW + 299_999) is None
    assert ticker.due_tick(NOW + 300_000) == minutes(10) + 300_000


def test_ticks_keep_advancing_while_idle_and_never_go_back():
    ticker = IdleTicker(TIMEOUT)
    ticker.observe(NOW, input_rows=5, max_event_ms=minutes(10))
    first = ticker.due_tick(NOW + 300_000)
    assert ticker.due_tick(NOW + 300_000) is None
    second = ticker.due_tick(NOW + 900_000)
    assert first is not None and second is not None and second > first


def test_no_tick_before_any_event_was_seen():
    ticker = IdleTicker(TIMEOUT)
    ticker.observe(NOW, input_rows=0, max_event_ms=None)
    assert ticker.due_tick(NOW + 10 * 300_000) is None


def test_a_tick_closes_sessions_of_a_quiet_input_and_frees_their_state(spark, workdir):
    write_batches(workdir / "landing", [[pageview("a", 0), pageview("b", 5), pageview("a", 10)]])
    config = pipeline_config(workdir)
    pipeline = Pipeline(config, spark)
    before = pipeline.run(once=True)
    assert before.progress[-1]["stateOperators"][0]["numRowsTotal"] == 2
    assert read_output(spark, config.sinks["sessions"].path) is None

    ticker = IdleTicker(TIMEOUT)  # what the continuous runner does when input stays quiet
    ticker.observe(NOW, input_rows=3, max_event_ms=minutes(10))
    tick = ticker.due_tick(NOW + int(timedelta(hours=1).total_seconds() * 1000))
    assert tick is not None
    write_tick(ticks_dir(config), tick)
    after = pipeline.run(once=True)

    assert after.progress[-1]["stateOperators"][0]["numRowsTotal"] == 0
    assert not list(ticks_dir(config).glob("tick-*"))  # a spent tick's file is deleted
    accounting = account(spark, config.sinks["sessions"].path, config.sinks["dead_letters"].path, 3)
    assert accounting.balanced and accounting.sessions == 2  # the tick is not an input record


def test_an_idle_week_writes_a_bounded_number_of_ticks():
    """A continuous run polls every half second for a simulated week after its input stopped,
    each batch reporting state until the ticks closed everything: at most one tick per
    trigger, and none once no state is left, so the count does not grow with the idle time."""
    trigger_ms, poll_ms, week_ms = 5_000, 500, 7 * 24 * 3600 * 1000
    closes_after_ms = 45 * 60_000  # gap + lateness: the last session closes by then
    ticker = IdleTicker(TIMEOUT, min_interval=timedelta(milliseconds=trigger_ms))
    ticker.observe(NOW, input_rows=5, max_event_ms=minutes(10), state_rows=5)
    ticks = []
    for now in range(NOW + poll_ms, NOW + week_ms, poll_ms):
        if (tick := ticker.due_tick(now)) is not None:
            ticks.append(now)
            left = 0 if tick - minutes(10) >= closes_after_ms else 5
            ticker.observe(now, input_rows=0, max_event_ms=None, state_rows=left)
    assert all(b - a >= trigger_ms for a, b in itertools.pairwise(ticks))
    assert len(ticks) <= (closes_after_ms - TIMEOUT.total_seconds() * 1000) / trigger_ms + 1
    assert ticks[-1] - NOW <= closes_after_ms + trigger_ms


def test_ticks_resume_when_input_brings_state_again():
    ticker = IdleTicker(TIMEOUT)
    ticker.observe(NOW, input_rows=5, max_event_ms=minutes(10), state_rows=0)
    assert ticker.due_tick(NOW + 600_000) is None
    ticker.observe(NOW + 700_000, input_rows=1, max_event_ms=minutes(30), state_rows=1)
    assert ticker.due_tick(NOW + 700_000 + 300_000) == minutes(30) + 300_000


@pytest.mark.soak  # 13 batches and a restart, ~2.5 minutes: `make soak`
def test_the_tick_streams_own_log_stays_bounded_over_many_ticks(spark, workdir):
    """Spark's log of the tick files read (``sources/1``) would list every tick ever read;
    the runner drops the entries of spent ticks whenever Spark compacts it, so after 12 ticks
    in one continuous run its compact file lists at most two, and a restart reads no tick
    again."""
    write_batches(workdir / "landing", [[pageview("a", 0)]])
    config = pipeline_config(
        workdir, spark={"trigger_interval": "500ms"}, monitoring={"prometheus_port": "off"}
    )
    stop = StopRequest()
    ticks: list[int] = []
    read: list[int] = []

    def tick_after_each_batch(progress: dict[str, Any], _: object) -> None:
        read.append(_tick_rows(progress, config))
        if sum(read) == 12:  # every tick written was read
            stop.set()
        elif len(ticks) < 12:
            ticks.append(minutes(1 + len(ticks)))
            write_tick(ticks_dir(config), ticks[-1])

    with spark_settings(spark, {COMPACT: "2"}):  # a compact file every 2 batches, not 10
        Pipeline(config, spark).run(
            once=False, poll_seconds=0.2, on_progress=tick_after_each_batch, stop=stop
        )
        log = ticks_log(config.checkpoint.path)
        compact = latest_compact(log)
        assert compact is not None
        listed = compact.read_text().splitlines()[1:]
        assert all(str(ticks_dir(config)) in line for line in listed)  # the ticks' log
        assert len(ticks) == 12 and int(compact.name.split(".")[0]) >= 9
        assert 1 <= len(listed) <= 2  # unpruned it would list every tick read up to it
        again = Pipeline(config, spark).run(once=True)
    assert sum(_tick_rows(p, config) for p in again.progress) == 0  # no spent tick read again


def _tick_rows(progress: dict[str, Any], config: PipelineConfig) -> int:
    """The rows a batch read from the tick stream."""
    tick_dir = str(ticks_dir(config))
    return sum(int(s["numInputRows"]) for s in progress["sources"] if tick_dir in s["description"])
