"""The scale benchmarks' steady traffic (bench/scale/traffic.py) keeps what it promises: exactly
N active keys, every active key touched within the session gap, a stated churn, files in time
order. Pure Python, no Spark."""

from __future__ import annotations

import itertools
import json
import sys
from collections import Counter
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from scale.traffic import SteadyTraffic, cycle_batches, settling_warmup, write_files

GAP_MS = 30 * 60_000


def test_every_revisit_period_has_exactly_n_active_keys() -> None:
    traffic = SteadyTraffic(slots=500, batch_events=120, steady_batches=60, lifetime=10)
    events = list(traffic.events(0, traffic.total_events))
    for period in range(len(events) // 500):
        keys = {e.user_id for e in events[period * 500 : (period + 1) * 500]}
        assert len(keys) == 500


def test_an_active_key_is_touched_again_within_the_gap_so_its_session_stays_open() -> None:
    traffic = SteadyTraffic(slots=300, batch_events=50, steady_batches=40, lifetime=8)
    last: dict[str, int] = {}
    for e in traffic.events(0, traffic.total_events):
        if e.user_id in last:
            assert e.ts_ms - last[e.user_id] == traffic.revisit_ms < GAP_MS
        last[e.user_id] = e.ts_ms


def test_churn_replaces_one_lifetimes_share_of_the_keys_each_revisit_period() -> None:
    traffic = SteadyTraffic(slots=1000, batch_events=1000, steady_batches=30, lifetime=20)
    events = list(traffic.events(0, traffic.total_events))
    periods = [{e.user_id for e in events[p * 1000 : (p + 1) * 1000]} for p in range(30)]
    for before, after in itertools.pairwise(periods):
        assert len(after - before) == 1000 * traffic.churn_per_revisit == 50


def test_event_time_advances_by_a_fixed_step_per_batch_of_b_events() -> None:
    traffic = SteadyTraffic(
        slots=10_000, batch_events=5_000, steady_batches=3, revisit=timedelta(minutes=15)
    )
    first = traffic.warmup_events
    spans = [
        traffic.event(first + (b + 1) * 5_000).ts_ms - traffic.event(first + b * 5_000).ts_ms
        for b in range(2)
    ]
    assert spans == [15 * 60_000 // 2] * 2


def test_files_hold_warmup_then_one_batch_each_in_time_order(tmp_path: Path) -> None:
    traffic = SteadyTraffic(
        slots=700, batch_events=90, steady_batches=5, warmup_revisits=2, warmup_file_events=600
    )
    folder = write_files(traffic, tmp_path / "data")
    files = sorted(folder.glob("events-*.jsonl"))
    sizes = [sum(1 for _ in f.open()) for f in files]
    assert sizes == [600, 600, 200, 90, 90, 90, 90, 90]
    mtimes = [f.stat().st_mtime for f in files]
    assert mtimes == sorted(mtimes) and len(set(mtimes)) == len(mtimes)
    stamps = [json.loads(line)["ts"] for f in files for line in f.open()]
    assert stamps == sorted(stamps)
    users = Counter(json.loads(line)["user_id"] for f in files for line in f.open())
    assert sum(users.values()) == traffic.total_events


def test_the_settling_warmup_puts_the_measured_quarter_past_every_keys_first_deadline() -> None:
    deadline = timedelta(minutes=31)
    slots, batch, steady = 1_000, 5, 40
    revisits = settling_warmup(slots, batch, steady, deadline)

    def tail_start_ms(warmup: int) -> int:
        traffic = SteadyTraffic(slots, batch, steady, warmup_revisits=warmup)
        return traffic.event(traffic.warmup_events + (steady - steady // 4) * batch).ts_ms

    traffic = SteadyTraffic(slots, batch, steady, warmup_revisits=revisits)
    last_first_deadline = traffic.event(slots - 1).ts_ms + deadline // timedelta(milliseconds=1)
    assert revisits > 1
    assert tail_start_ms(revisits) >= last_first_deadline
    assert tail_start_ms(revisits - 1) < last_first_deadline


def test_a_long_steady_phase_needs_no_more_than_one_warmup_revisit() -> None:
    assert settling_warmup(10_000, 5_000, 40, timedelta(minutes=31)) == 1


def test_a_cycle_of_event_time_is_counted_in_whole_batches() -> None:
    # 1M keys, 5k events per batch: 0.075 minutes of event time per batch
    assert cycle_batches(1_000_000, 5_000, timedelta(minutes=30)) == 400
    assert cycle_batches(10_000, 50_000, timedelta(minutes=30)) == 1
