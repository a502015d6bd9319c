"""Late events beyond the in-state lateness, merged from a history store, on real Spark with
RocksDB state: each test runs against both stores, the Delta sessions table (the default) and a
real PostgreSQL server.

Payments by account, with three aggregates (``total = sum(amount)``, ``merchants =
count_distinct(merchant)``, ``first_merchant = first(merchant)``); gap 30m, allowed lateness
10m, history lateness 3 days; one file per micro-batch; the ``clock`` account sets the maximum
event time, so each batch's watermark is the previous batches' maximum minus one minute. Day-0
sessions leave state a day before their late events arrive; a session revised from the store
has the aggregates of all its events, as if none had been late.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import account_run, final_sessions, read_output
from tests.history.support import (
    STORES,
    described_payments,
    history_config,
    offline_payments,
    payment,
    revisions,
)
from tests.support import write_batches

pytestmark = pytest.mark.soak  # eight micro-batches and a drain: minutes on a shared machine

DAY = 24 * 60
GAP_MS = 30 * 60_000


def clock(at_minutes):
    return payment("clock", at_minutes, 1.0, "clock")


BATCHES = [
    [  # day 0: the sessions that will leave state
        payment("join", 30, 10.5, "bakery"),
        payment("join", 35, 4.25, "books"),
        *(payment("bridge", m, 1.5, f"shop{m}") for m in (0, 5, 50, 55)),
        payment("new", 0, 7.0, "cafe"),
        payment("same", 0, 2.0, "cafe"),
        payment("same", 5, 3.0, "cafe"),
        clock(10),
    ],
    [clock(DAY)],  # watermark 9m
    # watermark DAY - 1m: "same" leaves state as its late event arrives
    [payment("same", 20, 0.5, "tea"), clock(DAY + 10)],
    # watermark DAY + 9m: a day late, into sessions kept only in the store; "join"'s earliest
    # event comes late: it has the first merchant
    [
        payment("join", 50, 1.0, "bakery"),
        payment("join", 20, 2.0, "garage"),
        payment("bridge", 30, 1.5, "shop30"),
        payment("new", 200, 8.0, "cafe"),
        clock(DAY + 20),
    ],
    [
        payment("join2", 3 * DAY, 20.0, "hotel"),
        payment("join2", 3 * DAY + 5, 30.0, "hotel"),
        clock(5 * DAY),
    ],
    [clock(5 * DAY + 10)],  # watermark 5 days - 1m: join2 leaves state
    # watermark 5 days + 9m: join2's event is almost 2 days late; far's is beyond 3 days
    [
        payment("join2", 3 * DAY + 20, 0.25, "bar"),
        payment("far", DAY + 30, 9.0, "far"),
        clock(5 * DAY + 20),
    ],
]
RECORDS = sum(len(b) for b in BATCHES)
TOO_LATE = [payment("far", DAY + 30, 9.0, "far")]


@pytest.fixture(scope="module", params=STORES)
def run(request, spark, tmp_path_factory):
    store = request.param
    postgres = request.getfixturevalue("postgres") if store == "postgres" else None
    root = Path(tmp_path_factory.mktemp(f"history-{store}"))
    write_batches(root / "landing", BATCHES)
    with pytest.MonkeyPatch.context() as mp:
        config = history_config(root, store, postgres, mp, "history_pipeline")
        result = Pipeline(config, spark).run(once=True, drain=True)
    written = revisions(spark, config)
    if postgres is not None:
        with psycopg.connect(postgres.conninfo()) as db:
            stored = db.execute(
                "SELECT session_id, key, event_count, revision, total, merchants, "
                "first_merchant FROM history_pipeline"
            ).fetchall()
    else:
        table = spark.read.format("delta").load(str(config.sinks["sessions"].path))
        stored = [tuple(r) for r in table.select(
            "session_id", "account", "event_count", "revision", "total", "merchants",
            "first_merchant").collect()]  # fmt: skip
    return {
        "config": config,
        "result": result,
        "revisions": written.collect(),
        "final": final_sessions(written).collect(),
        "dead": read_output(spark, config.sinks["dead_letters"].path).collect(),
        "stored": stored,
    }


def revisions_of(run, account):
    rows = [r for r in run["revisions"] if r["account"] == account]
    return sorted((r["revision"], r["event_count"]) for r in rows)


def test_every_late_event_ends_in_the_session_it_would_have_joined_on_time(run):
    """With the aggregates of all its events: the stored state resumed, never recomputed."""
    on_time = [line for b in BATCHES for line in b if line not in TOO_LATE]
    assert described_payments(run["final"]) == offline_payments(on_time, GAP_MS)


def test_late_events_of_one_batch_revise_their_stored_session_once(run):
    assert revisions_of(run, "join") == [(0, 2), (1, 4)]
    assert revisions_of(run, "join2") == [(0, 2), (1, 3)]
    [join] = [r for r in run["final"] if r["account"] == "join"]
    assert (join["total"], join["merchants"], join["first_merchant"]) == (17.75, 3, "garage")


def test_a_late_event_bridging_two_stored_sessions_merges_them_and_the_later_is_absorbed(run):
    rows = sorted((r for r in run["revisions"] if r["account"] == "bridge"),
                  key=lambda r: (r["revision"], r["session_start"]))  # fmt: skip
    first, second, merged = rows
    assert (merged["session_id"], merged["revision"], merged["event_count"]) == (
        first["session_id"], 1, 5,
    )  # fmt: skip
    assert merged["merged_session_ids"] == [second["session_id"]]
    assert (merged["total"], merged["merchants"]) == (7.5, 5)


def test_a_late_event_touching_no_stored_session_starts_one(run):
    assert sorted(p for _, p in revisions_of(run, "new")) == [1, 1]
    assert [rev for rev, _ in revisions_of(run, "new")] == [0, 0]


def test_each_session_is_written_at_most_once_per_batch(run):
    written = [(r["session_id"], r["batch_id"]) for r in run["revisions"]]
    assert len(written) == len(set(written))
    assert revisions_of(run, "same")[-1] == (1, 3)


def test_an_event_beyond_the_history_lateness_is_too_late(run):
    [d] = [d for d in run["dead"] if d["key"] == "far"]
    assert d["reason"] == "too_late" and "history_lateness" in d["detail"]


def test_every_record_is_in_exactly_one_final_session_or_dead_letter(spark, run):
    accounting = account_run(spark, run["config"], RECORDS)
    assert accounting.balanced, accounting.describe()
    assert accounting.dead_letters == {"too_late": 1}


def test_the_store_holds_exactly_the_final_sessions_in_their_latest_revision(run):
    final = {
        (r["session_id"], r["account"], r["event_count"], r["revision"], r["total"],
         r["merchants"], r["first_merchant"])
        for r in run["final"]
    }  # fmt: skip
    assert set(run["stored"]) == final


def test_no_state_is_kept_for_the_history_and_draining_frees_all(run):
    last = run["result"].progress[-1]
    assert [op["numRowsTotal"] for op in last["stateOperators"]] == [0]
