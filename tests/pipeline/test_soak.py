"""Soak: rotating-key traffic for sessions and for patterns, one run each, through the whole
pipeline with its leak alarm on. After warm-up the state rows stay within ±10% of their level,
the driver's resident memory does not keep growing, and the alarm stays silent. Two simulated
hours in the default suite; 24 in ``make soak`` (the figures are in BENCHMARKS.md, Reliability)."""

from __future__ import annotations

import pytest

from tests.pipeline.soak import SoakRun, soak_patterns, soak_sessions

pytestmark = pytest.mark.spark

HOURS = [2, pytest.param(24, marks=pytest.mark.soak)]
#: How much the driver's memory may grow from the first hour after warm-up to the last: the
#: JVM's live heap (after a full collection) and the Python process's resident memory. A leak
#: of state or of per-batch objects keeps them climbing; noise stays well within this.
MEMORY_GROWTH_LIMIT = 0.10


def check_soak(run: SoakRun, hours: int) -> None:
    assert run.hours >= hours - 0.5, f"only {run.hours:.1f} simulated hours"
    assert run.monitor_errors == []
    assert run.state_growth_findings == []  # the alarm judged every batch and stayed silent
    assert min(run.state_rows[run.warm_up :]) > 0  # there was live state to judge
    assert run.state_level() <= 0.10, run.hourly(run.state_rows)
    if hours >= 24:  # two hours are too few to tell the heap settling from a leak
        assert run.growth(run.live_heap_mib) <= MEMORY_GROWTH_LIMIT, run.live_heap_mib
        assert run.growth(run.python_rss_mib) <= MEMORY_GROWTH_LIMIT, run.python_rss_mib


# the default suite's sessions run of many simulated hours is test_bounded_state's (12 hours)
@pytest.mark.parametrize("hours", [pytest.param(24, marks=pytest.mark.soak)])
def test_sessions_of_rotating_users_keep_state_and_memory_flat(spark, workdir, hours):
    run = soak_sessions(spark, workdir, hours)
    print(run.table("sessions soak"))
    check_soak(run, hours)
    # and the level is the one it should be: the users active within gap + lateness
    pairs = list(zip(run.state_rows, run.expected_rows, strict=True))[run.warm_up :]
    assert all(abs(o - e) <= 0.1 * e for o, e in pairs), pairs


@pytest.mark.parametrize("hours", HOURS)
def test_patterns_of_rotating_keys_keep_state_and_memory_flat(spark, workdir, hours):
    run = soak_patterns(spark, workdir, hours)
    print(run.table("patterns soak"))
    check_soak(run, hours)
