"""Idle input in a continuous run (not ``--drain``): once traffic stops for longer than
``idle_timeout``, the runner's idle ticks move event time on, so that every session closes,
every partial match times out, and the state drops to zero without another record
(docs/failure-modes.md#idle-input). Processing time is passed in: a clock that runs an hour per
second of wall time, so that minutes of idleness take a fraction of a second."""

from __future__ import annotations

import _thread
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from streamwarden.config import PipelineConfig
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import account, read_output
from tests.support import pageview, pattern_pipeline_config, pipeline_config, write_batches

pytestmark = pytest.mark.spark

FAST = {"trigger_interval": "500ms", "shuffle_partitions": 2}


class _Closed(Exception):
    """Raised from the progress callback once the state is empty: ends the continuous run."""


def run_until_state_is_empty(spark: Any, config: PipelineConfig) -> list[int]:
    """Runs ``config`` continuously until its state, once non-empty, is empty again; returns the
    state rows of every batch. A timer bounds the wait, should the ticks never come."""
    started = time.monotonic()
    hour_per_second = lambda: int((time.monotonic() - started) * 3_600_000)  # noqa: E731
    state_rows: list[int] = []

    def watch(progress: dict[str, Any], _stats: Any) -> None:
        state_rows.append(int(progress["stateOperators"][0]["numRowsTotal"]))
        if state_rows[-1] == 0 and max(state_rows) > 0:
            raise _Closed

    guard = threading.Timer(300, _thread.interrupt_main)
    guard.start()
    try:
        with pytest.raises(_Closed):
            Pipeline(config, spark).run(once=False, on_progress=watch, now_ms=hour_per_second)
    finally:
        guard.cancel()
    return state_rows


def test_a_quiet_input_closes_every_session_and_state_drops_to_zero(spark, workdir: Path):
    records = [pageview("a", 0), pageview("b", 5), pageview("a", 10), pageview("c", 12, page=2)]
    write_batches(workdir / "landing", [records])
    config = pipeline_config(workdir, sessions={"idle_timeout": "10m"}, spark=FAST)

    state_rows = run_until_state_is_empty(spark, config)

    assert max(state_rows) == 3  # three users' sessions were open when the input went quiet
    sessions = read_output(spark, config.sinks["sessions"].path)
    assert sorted((r.user_id, r.event_count) for r in sessions.collect()) == [
        ("a", 2),
        ("b", 1),
        ("c", 1),
    ]
    accounting = account(spark, config.sinks["sessions"].path, config.sinks["dead_letters"].path, 4)
    assert accounting.balanced and accounting.sessions == 3


def test_a_quiet_input_times_out_every_partial_match_and_state_drops_to_zero(spark, workdir: Path):
    # a and b each begin a match ("scan" then "other") that never completes; c completes one
    records = [
        pageview("a", 0, url="/scan/1"),
        pageview("b", 3, url="/scan/1"),
        pageview("c", 4, url="/scan/1"),
        pageview("c", 6, url="/scan/2"),
    ]
    write_batches(workdir / "landing", [records])
    patterns = {
        "within": "30m",
        "skip": "skip_past_last_event",
        "emit_timeouts": True,
        "idle_timeout": "10m",
        "stages": [
            {"name": "scan", "contiguity": "begin", "where": "url LIKE '/scan/%'"},
            {
                "name": "other",
                "where": "url LIKE '/scan/%'",
                "previous": [{"field": "url", "op": "!=", "stage": "scan"}],
            },
        ],
    }
    config = pattern_pipeline_config(workdir, patterns, spark=FAST)

    state_rows = run_until_state_is_empty(spark, config)

    assert max(state_rows) > 0
    matches = read_output(spark, workdir / "matches").collect()
    timeouts = read_output(spark, workdir / "timeouts").orderBy("key").collect()
    assert [r.key for r in matches] == ["c"]
    assert [r.key for r in timeouts] == ["a", "b"]
