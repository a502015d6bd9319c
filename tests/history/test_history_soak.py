"""The history store's acceptance run (issue 18), once with each store (the Delta sessions table,
the default, and PostgreSQL): four days of pageviews, one landing file per two hours of event
time, with 5% of events up to two days late, ``allowed_lateness`` 10 minutes,
``history_lateness`` 3 days, four hours of event time per micro-batch. Every late event ends
in its session, none twice; streaming state stays flat while the store grows. Prints both
series, one line per micro-batch.

The checkpoint keeps the state of the last 4 batches (``minBatchesToRetain``; the test
session's 20 would be most of the run's 24 batches, Spark's default 100 all of them) and
RocksDB uploads a snapshot every 2 versions (``minDeltasForSnapshot``, 10 by default).

RocksDB uploads snapshots and deletes files older than the retained versions only in Spark's
background maintenance, every ``stateStore.maintenanceInterval`` (60 s by default, read once
per JVM when the first state store is loaded). A production run does dozens of maintenance
passes an hour; this run lasts about a minute, so it compresses time the same way for the
maintenance as for the traffic: it stops the JVM's state stores before the run (unloading
them, which ends the maintenance task) and sets the interval to 1 s, so the first store loaded
by the run starts the maintenance anew at that interval; after the run the stores are stopped
again and the session's settings restored. Its ``state/`` folder then reaches the size it keeps
early in the run, in a saw-tooth much shorter than a third of the run, and can be seen to stay
there."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from streamwarden.monitoring.checkpoint_usage import CheckpointMeter
from streamwarden.operators.sessions.history import open_history
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import account_run, final_sessions
from streamwarden.testing.late_traffic import write_late_traffic
from tests.history.support import (
    STORES,
    history_config,
    offline_sessions,
    revisions,
    store_connections,
)
from tests.support import PAGEVIEW_SCHEMA, spark_settings

pytestmark = pytest.mark.soak

GAP_MS = 30 * 60_000
#: Spark settings of this run, restored after it: a short retention, frequent snapshots, and
#: maintenance at the pace of a minute-long run.
SETTINGS = {
    "spark.sql.streaming.minBatchesToRetain": "4",
    "spark.sql.streaming.stateStore.minDeltasForSnapshot": "2",
    "spark.sql.streaming.stateStore.maintenanceInterval": "1s",
}
#: Landing files (two hours of event time each) per micro-batch: 24 batches over the 4 days.
FILES_PER_BATCH = 2
#: How far a flat series may move between the second and the last third of the run (medians).
FLAT = 1.5
#: The pageviews' sessions keep their pages and their first and last pages' numbers.
AGGREGATES = {
    "pages": "count(page_number)",
    "first_page": "first(page_number)",
    "last_page": "last(page_number)",
}


def restart_state_store_maintenance(spark) -> None:
    """Unload this JVM's state stores and stop their maintenance task: the next store loaded
    starts it again with the session's current ``maintenanceInterval``. Only between queries."""
    spark._jvm.org.apache.spark.sql.execution.streaming.state.StateStore.stop()


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


@pytest.fixture(scope="module", params=STORES)
def run(request, spark, tmp_path_factory):
    kind = request.param
    postgres = request.getfixturevalue("postgres") if kind == "postgres" else None
    root = Path(tmp_path_factory.mktemp(f"history-soak-{kind}"))
    traffic = write_late_traffic(root / "landing", users=150, days=4)
    series: list[tuple[int, int, int, int, int]] = []
    try:
        with spark_settings(spark, SETTINGS), pytest.MonkeyPatch.context() as mp:
            restart_state_store_maintenance(spark)  # its next store runs maintenance as set
            config = history_config(
                root, kind, postgres, mp, "history_soak",
                schema=PAGEVIEW_SCHEMA, aggregates=AGGREGATES,
            )  # fmt: skip
            source = config.source.model_copy(update={"max_files_per_trigger": FILES_PER_BATCH})
            config = config.model_copy(update={"source": source})
            store = open_history(config)
            meter = CheckpointMeter(config.checkpoint.path)

            def measure(progress, stats):
                rows = sum(op["numRowsTotal"] for op in progress.get("stateOperators", []))
                # the changes the batch wrote: its changelogs, not the snapshots maintenance
                # uploads every minDeltasForSnapshot versions (the whole state: the folder's)
                written = meter.measure(progress["batchId"]).changelog_bytes_written
                state = folder_bytes(config.checkpoint.path / "state")
                series.append((progress["batchId"], rows, written, state, store.size()))

            result = Pipeline(config, spark).run(once=True, drain=True, on_progress=measure)
            store.close()
            left_open = store_connections(postgres) if postgres is not None else None
    finally:  # the stores after this one run maintenance as the test session sets it
        restart_state_store_maintenance(spark)
    print(f"\nhistory soak, {kind} store: {traffic.records} records, {traffic.late} late")
    for batch, rows, written, state, stored in series:
        print(f"batch {batch:3d}: state rows {rows:5d}  changelog bytes {written:7d}  "
              f"checkpoint state bytes {state:8d}  stored sessions {stored:6d}")  # fmt: skip
    written_revisions = revisions(spark, config)
    return {"config": config, "traffic": traffic, "series": series, "result": result,
            "left_open": left_open,
            "revisions": written_revisions,
            "final": final_sessions(written_revisions).collect()}  # fmt: skip


def test_late_events_up_to_two_days_late_end_in_their_sessions(run):
    assert run["traffic"].late > 100
    assert run["traffic"].max_delay_ms == 2 * 24 * 3600 * 1000
    expected = offline_sessions(run["traffic"].events, GAP_MS)
    got = {
        (r["user_id"], int(r["session_start"].timestamp() * 1000),
         int(r["session_end"].timestamp() * 1000), r["event_count"])
        for r in run["final"]
    }  # fmt: skip
    assert got == expected


def test_the_aggregates_of_each_final_session_are_those_of_all_its_events(run):
    """Each visit is pages 1 to 4 in order (:func:`write_late_traffic`), however late some
    arrive: a session of whole visits counts every page, starts at page 1 and ends at page 4."""
    assert run["final"]
    for r in run["final"]:
        assert r["pages"] == r["event_count"], r
        assert (r["first_page"], r["last_page"]) == (1, 4), r


def test_late_events_were_counted_as_revisions(run):
    revised = run["revisions"].where("revision > 0").count()
    assert revised > 0


def test_events_in_equal_events_in_final_sessions_and_none_is_dead_lettered(spark, run):
    accounting = account_run(spark, run["config"], run["traffic"].records)
    assert accounting.balanced, accounting.describe()
    assert accounting.dead_letters == {}


def test_the_run_leaves_no_connection_to_the_store_open(run):
    """The runner closes the store when the query ends (PostgreSQL counts the connections)."""
    if run["left_open"] is None:
        pytest.skip("the Delta store holds no connection")
    assert run["left_open"] == 0


def thirds(series):
    """The second and last thirds of the run's batches (the drain's last two left out: they
    free the state)."""
    kept = series[:-2]
    third = len(kept) // 3
    return kept[third : 2 * third], kept[2 * third :]


@pytest.mark.parametrize(
    ("column", "what"),
    [(1, "state rows"), (2, "changelog bytes a batch"), (3, "checkpoint state folder bytes")],
)
def test_state_stays_flat_while_the_history_grows(run, column, what):
    """The median of each state series over the last third of the run is within 1.5x of (and
    not below 1/1.5 of) its median over the second third, while the store's median grows by
    more than 1.3x between the same thirds. The bytes a batch writes are its changelogs: the
    snapshot uploads of every other version write the whole (flat) state and show in the
    folder's series."""
    middle, last = thirds(run["series"])
    before = statistics.median(s[column] for s in middle)
    after = statistics.median(s[column] for s in last)
    assert before > 0, f"{what}: nothing measured"
    assert before / FLAT <= after <= before * FLAT, f"{what}: {before} -> {after}"
    stored_before = statistics.median(s[4] for s in middle)
    assert statistics.median(s[4] for s in last) > 1.3 * stored_before
