"""Late events beyond the in-state lateness, merged from a history store, on real Spark with
RocksDB state: each test runs against both stores, the Delta sessions table (the default) and a
real PostgreSQL server.

Gap 30m, allowed lateness 10m, history lateness 3 days; one file per micro-batch; ``clock``
users set the maximum event time, so each batch's watermark is the previous batches' maximum
minus one minute. Day-0 sessions leave state a day before their late events arrive.
"""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import account_run, final_sessions, read_output
from tests.history.support import STORES, history_config, offline_sessions, revisions
from tests.support import minutes, pageview, write_batches

pytestmark = pytest.mark.soak  # eight micro-batches and a drain: minutes on a shared machine

DAY = 24 * 60
GAP_MS = 30 * 60_000

BATCHES = [
    [  # day 0: the sessions that will leave state
        *(pageview("join", m) for m in (0, 5)),
        *(pageview("bridge", m) for m in (0, 5, 50, 55)),
        pageview("new", 0),
        *(pageview("same", m) for m in (0, 5)),
        pageview("clock", 10),
    ],
    [pageview("clock", DAY)],  # watermark 9m
    # watermark DAY - 1m: "same" leaves state as its late event arrives
    [pageview("same", 20), pageview("clock", DAY + 10)],
    # watermark DAY + 9m: a day late, into sessions kept only in the store
    [
        *(pageview("join", m) for m in (20, 40)),
        pageview("bridge", 30),
        pageview("new", 200),
        pageview("clock", DAY + 20),
    ],
    [*(pageview("join2", m) for m in (3 * DAY, 3 * DAY + 5)), pageview("clock", 5 * DAY)],
    [pageview("clock", 5 * DAY + 10)],  # watermark 5 days - 1m: join2 leaves state
    # watermark 5 days + 9m: join2's event is almost 2 days late; far's is beyond 3 days
    [pageview("join2", 3 * DAY + 20), pageview("far", DAY + 30), pageview("clock", 5 * DAY + 20)],
]
RECORDS = sum(len(b) for b in BATCHES)
TOO_LATE = [("far", minutes(DAY + 30))]


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
                "SELECT session_id, user_id, page_count, revision FROM history_pipeline"
            ).fetchall()
    else:
        table = spark.read.format("delta").load(str(config.sinks["sessions"].path))
        stored = [tuple(r) for r in table.select("session_id", "user_id", "page_count",
                                                 "revision").collect()]  # fmt: skip
    return {
        "config": config,
        "result": result,
        "revisions": written.collect(),
        "final": final_sessions(written).collect(),
        "dead": read_output(spark, config.sinks["dead_letters"].path).collect(),
        "stored": stored,
    }


def revisions_of(run, user):
    rows = [r for r in run["revisions"] if r["user_id"] == user]
    return sorted((r["revision"], r["page_count"]) for r in rows)


def ms(ts):
    return int(ts.timestamp() * 1000)


def test_every_late_event_ends_in_the_session_it_would_have_joined_on_time(run):
    events = [(json.loads(line)["user_id"], json.loads(line)["ts"]) for b in BATCHES for line in b]
    expected = offline_sessions([e for e in events if e not in TOO_LATE], GAP_MS)
    got = {(r["user_id"], ms(r["session_start"]), ms(r["session_end"]), r["page_count"])
           for r in run["final"]}  # fmt: skip
    assert got == expected


def test_late_events_of_one_batch_revise_their_stored_session_once(run):
    assert revisions_of(run, "join") == [(0, 2), (1, 4)]
    assert revisions_of(run, "join2") == [(0, 2), (1, 3)]


def test_a_late_event_bridging_two_stored_sessions_merges_them_and_the_later_is_absorbed(run):
    rows = sorted((r for r in run["revisions"] if r["user_id"] == "bridge"),
                  key=lambda r: (r["revision"], r["session_start"]))  # fmt: skip
    first, second, merged = rows
    assert (merged["session_id"], merged["revision"], merged["page_count"]) == (
        first["session_id"], 1, 5,
    )  # fmt: skip
    assert merged["merged_session_ids"] == [second["session_id"]]


def test_a_late_event_touching_no_stored_session_starts_one(run):
    assert sorted(p for _, p in revisions_of(run, "new")) == [1, 1]
    assert [rev for rev, _ in revisions_of(run, "new")] == [0, 0]


def test_each_session_is_written_at_most_once_per_batch(run):
    written = [(r["session_id"], r["batch_id"]) for r in run["revisions"]]
    assert len(written) == len(set(written))
    assert revisions_of(run, "same")[-1] == (1, 3)


def test_an_event_beyond_the_history_lateness_is_too_late(run):
    [d] = [d for d in run["dead"] if d["user_id"] == "far"]
    assert d["reason"] == "too_late" and "history_lateness" in d["detail"]


def test_every_record_is_in_exactly_one_final_session_or_dead_letter(spark, run):
    accounting = account_run(spark, run["config"], RECORDS)
    assert accounting.balanced, accounting.describe()
    assert accounting.dead_letters == {"too_late": 1}


def test_the_store_holds_exactly_the_final_sessions_in_their_latest_revision(run):
    final = {(r["session_id"], r["user_id"], r["page_count"], r["revision"]) for r in run["final"]}
    assert set(run["stored"]) == final


def test_no_state_is_kept_for_the_history_and_draining_frees_all(run):
    last = run["result"].progress[-1]
    assert [op["numRowsTotal"] for op in last["stateOperators"]] == [0]
