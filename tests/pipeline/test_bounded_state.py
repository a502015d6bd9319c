"""State stays bounded (lessons L1, L2): over 12+ simulated hours of users who come, hold two
sessions and never return, the operator's state rows track the users active within the last
gap + allowed lateness, batch after batch, and do not trend upward."""

from __future__ import annotations

import json
from datetime import timedelta
from statistics import mean

import pytest

from streamwarden.local.generator import TrafficSpec, generate_traffic
from streamwarden.pipeline import Pipeline
from tests.support import pipeline_config

GAP_MS, LATENESS_MS, DELAY_MS = 30 * 60_000, 10 * 60_000, 60_000
SPEC = TrafficSpec(
    users=2_000,
    events=54_000,
    rate_per_second=1.0,
    sessions_per_user=2,
    events_per_file=2_100,
    ts_format="millis",
    seed=11,  # about 30 simulated minutes a file
)


def expected_state_rows(files) -> list[int]:
    """Per batch: users whose last event so far is within gap + lateness of the watermark."""
    last_seen: dict[str, int] = {}
    max_ts, expected = None, []
    for path in files:
        watermark = 0 if max_ts is None else max_ts - DELAY_MS
        for line in path.read_text().splitlines():
            event = json.loads(line)
            last_seen[event["user_id"]] = max(last_seen.get(event["user_id"], 0), event["ts"])
            max_ts = max(max_ts or 0, event["ts"])
        expected.append(sum(1 for t in last_seen.values() if t + GAP_MS + LATENESS_MS > watermark))
    return expected


@pytest.fixture(scope="module")
def series(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("bounded")
    summary = generate_traffic(SPEC, root / "landing")
    hours = (summary.last_event - summary.first_event) / timedelta(hours=1)
    assert hours >= 12, f"only {hours:.1f} simulated hours"
    pipeline = Pipeline(pipeline_config(root, sessions={"allowed_lateness": "10m"}), spark)
    result = pipeline.run(once=True)
    observed = [
        p["stateOperators"][0]["numRowsTotal"] for p in result.progress if p["numInputRows"] > 0
    ]
    expected = expected_state_rows(summary.files)
    print(f"\n{hours:.1f} simulated hours, {summary.distinct_users} users")
    print("batch  state-rows  users-active-in-gap+lateness")
    for i, (o, e) in enumerate(zip(observed, expected, strict=True)):
        print(f"{i:5d}  {o:10d}  {e:10d}")
    return observed, expected, summary, pipeline.monitor


def test_the_run_covers_thousands_of_users_who_never_return(series):
    _, _, summary, _ = series
    assert summary.distinct_users > 1.5 * SPEC.users


def test_state_rows_track_the_users_active_in_the_last_gap_plus_lateness(series):
    observed, expected, _, _ = series
    after_first_hour = list(zip(observed, expected, strict=True))[2:]
    for batch, (o, e) in enumerate(after_first_hour, start=2):
        assert abs(o - e) <= 0.1 * e, f"batch {batch}: {o} state rows, {e} active users"


def test_state_rows_level_off_and_do_not_trend_upward(series):
    """Over the second half of the run, the fitted trend moves state by less than 10%."""
    observed, _, _, _ = series
    half = observed[len(observed) // 2 :]
    xs = range(len(half))
    x_mean, y_mean = mean(xs), mean(half)
    slope = sum((x - x_mean) * (y - y_mean) for x, y in zip(xs, half, strict=True)) / sum(
        (x - x_mean) ** 2 for x in xs
    )
    drift = slope * (len(half) - 1)
    assert drift < 0.1 * y_mean, f"state trends up by {drift:.0f} rows over {len(half)} batches"


def test_the_leak_alarm_stays_quiet_on_bounded_sessions(series):
    """The alarm that fires on a query without deadlines (tests/monitoring) does not fire here:
    the pipeline's own monitor judged every batch of this run."""
    observed, _, _, monitor = series
    assert len(monitor.records) >= len(observed) and monitor.errors == []
    assert [f for f in monitor.findings if f.kind == "state_growth"] == []
