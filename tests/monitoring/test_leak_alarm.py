"""The leak alarm fires when state keeps growing while input is steady, and only then."""

from __future__ import annotations

from streamwarden.monitoring import BatchSummary, LeakAlarm, OperatorSummary
from tests.monitoring.conftest import BATCHES, NEW_KEYS_PER_BATCH


def batch(batch_id: int, input_rows: int, state_rows: int, removed: int = 0) -> BatchSummary:
    op = OperatorSummary(0, "agg", state_rows, input_rows, removed, 0, 0)
    return BatchSummary("q", batch_id, 0, input_rows, 0.0, 0.0, {}, None, None, [op])


def feed(alarm: LeakAlarm, inputs: list[int], states: list[int]) -> list[int]:
    """Batch ids at which the alarm fired."""
    fired = []
    for i, (rows, state) in enumerate(zip(inputs, states, strict=True)):
        if alarm.observe(batch(i, rows, state)):
            fired.append(i)
    return fired


def test_linear_growth_under_steady_input_fires_once_the_window_is_full():
    states = [1000 * (i + 1) for i in range(10)]
    assert feed(LeakAlarm(window=6), [500] * 10, states) == [5, 6, 7, 8, 9]


def test_a_warm_up_that_levels_off_stays_quiet():
    states = [800, 1600, 2000, 2010, 1990, 2005, 1995, 2002, 1998, 2003, 2001, 1999]
    assert feed(LeakAlarm(window=6), [500] * 12, states) == []


def test_state_that_grows_with_a_growing_input_is_not_a_leak():
    inputs = [500 * (i + 1) for i in range(10)]
    states = [1000 * (i + 1) for i in range(10)]
    assert feed(LeakAlarm(window=6), inputs, states) == []


def test_slow_growth_below_the_threshold_stays_quiet():
    states = [10_000 + 10 * i for i in range(10)]
    assert feed(LeakAlarm(window=6, growth_threshold=0.2), [500] * 10, states) == []


def test_batches_without_input_do_not_count_towards_the_window():
    alarm = LeakAlarm(window=4)
    assert not alarm.observe(batch(0, 0, 100))
    fired = [i for i in range(1, 6) if alarm.observe(batch(i, 10, 100 * i))]
    assert fired == [4, 5]


def test_the_finding_reports_the_growth_and_what_was_removed():
    alarm = LeakAlarm(window=4)
    findings = [f for i in range(4) for f in alarm.observe(batch(i, 100, 1000 * (i + 1), 3))]
    (finding,) = findings
    assert finding.kind == "state_growth" and finding.operator == "0:agg"
    assert "from 1,000 to 4,000 rows" in finding.message and "12 removed" in finding.message
    assert finding.details["slope_rows_per_batch"] == 1000.0


def test_it_fires_on_a_real_query_whose_state_has_no_deadline(leaking_run):
    records = leaking_run.monitor.records
    assert [r.summary.state_rows for r in records] == [
        NEW_KEYS_PER_BATCH * (b + 1) for b in range(BATCHES)
    ]
    fired = [f.batch_id for f in leaking_run.monitor.findings if f.kind == "state_growth"]
    window = leaking_run.monitor.config.alarm_window
    assert fired == list(range(window - 1, BATCHES))
    assert leaking_run.monitor.errors == []
