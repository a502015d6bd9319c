"""The history store's acceptance run (issue 18): four days of pageviews with 5% of events up to
two days late, ``allowed_lateness`` 10 minutes, ``history_lateness`` 3 days, PostgreSQL as the
store. Every late event ends in its session, none twice; streaming state stays flat while the
store grows. Prints both series, one line per micro-batch."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from streamwarden.history.postgres import PostgresHistoryStore
from streamwarden.monitoring.checkpoint_usage import CheckpointMeter
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import account, final_sessions, read_output
from streamwarden.testing.late_traffic import write_late_traffic
from tests.history.support import history_config, offline_sessions

pytestmark = pytest.mark.soak

GAP_MS = 30 * 60_000


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


@pytest.fixture(scope="module")
def run(spark, postgres, tmp_path_factory):
    root = Path(tmp_path_factory.mktemp("history-soak"))
    traffic = write_late_traffic(root / "landing", users=150, days=4)
    series: list[tuple[int, int, int, int, int]] = []
    with pytest.MonkeyPatch.context() as mp:
        config = history_config(root, postgres, mp, "history_soak")
        store = PostgresHistoryStore.open(config)
        meter = None

        def measure(progress, stats):
            nonlocal meter
            meter = meter or CheckpointMeter(config.checkpoint.path)
            rows = sum(op["numRowsTotal"] for op in progress.get("stateOperators", []))
            written = meter.measure(progress["batchId"]).state_bytes_written
            state = folder_bytes(config.checkpoint.path / "state")
            series.append((progress["batchId"], rows, written, state, store.size()))

        result = Pipeline(config, spark).run(once=True, drain=True, on_progress=measure)
        store.close()
    for batch, rows, written, state, stored in series:
        print(f"batch {batch:3d}: state rows {rows:5d}  state bytes written {written:7d}  "
              f"checkpoint state bytes {state:8d}  stored sessions {stored:6d}")  # fmt: skip
    revisions = read_output(spark, config.sinks.sessions.path)
    return {"config": config, "traffic": traffic, "series": series, "result": result,
            "revisions": revisions, "final": final_sessions(revisions).collect()}  # fmt: skip


def test_late_events_up_to_two_days_late_end_in_their_sessions(run):
    assert run["traffic"].late > 100
    assert run["traffic"].max_delay_ms == 2 * 24 * 3600 * 1000
    expected = offline_sessions(run["traffic"].events, GAP_MS)
    got = {
        (r["user_id"], int(r["session_start"].timestamp() * 1000),
         int(r["session_end"].timestamp() * 1000), r["page_count"])
        for r in run["final"]
    }  # fmt: skip
    assert got == expected


def test_late_events_were_counted_as_revisions(run):
    revised = run["revisions"].where("revision > 0").count()
    assert revised > 0


def test_events_in_equal_events_in_final_sessions_and_none_is_dead_lettered(spark, run):
    cfg, records = run["config"], run["traffic"].records
    accounting = account(spark, cfg.sinks.sessions.path, cfg.sinks.dead_letters.path, records)
    assert accounting.balanced, accounting.describe()
    assert accounting.dead_letters == {}


def test_state_stays_flat_while_the_history_grows(run):
    """Day 1 against days 2-4 (the drain's batches left out): the state rows and the median
    state bytes a batch writes to the checkpoint stay within 1.5x, while the store keeps growing.
    (A batch that also uploads a RocksDB snapshot writes the whole state once: the median leaves
    those out; the snapshot's size follows the rows.)"""
    series = [s for s in run["series"] if s[4] > 0][:-2]
    day = len(series) // 4
    first, rest = series[day : 2 * day], series[2 * day :]
    assert max(s[1] for s in rest) <= 1.5 * max(s[1] for s in first)
    assert statistics.median(s[2] for s in rest) <= 1.5 * statistics.median(s[2] for s in first)
    assert rest[-1][4] >= 2 * first[0][4]
