"""The PostgreSQL history store against a real server: lookups around times, revision-guarded
upserts, deletions, a batch applied exactly once with its output kept for replays, one column
per aggregate of its own type, and a table made for other aggregates refused."""

from __future__ import annotations

import itertools
import math
from datetime import UTC, date, datetime

import psycopg
import pytest

from streamwarden.errors import ConfigError
from streamwarden.history.base import StoredAggregate, StoredColumns, Wanted
from streamwarden.history.postgres import PostgresHistoryStore, connect
from tests.history.support import history_config, store_connections

_TABLES = itertools.count()
#: Payments' sessions: what the sessions operator tells the store of them.
COLUMNS = StoredColumns(
    "account",
    "aggregate_state",
    (
        StoredAggregate("total", "double"),
        StoredAggregate("merchants", "bigint"),
        StoredAggregate("first_merchant", "string"),
    ),
)


def session(session_id, start, end, revision=0, events=1, account="a"):
    return {
        "session_id": session_id, "key": account, "start_ms": start, "end_ms": end,
        "event_count": events, "bytes": 10 * events, "revision": revision, "truncated": False,
        "state": f"state-{revision}", "total": 2.5 * events, "merchants": 1,
        "first_merchant": "shop",
    }  # fmt: skip


@pytest.fixture
def config(postgres, tmp_path, monkeypatch):
    table = f"store_test_{next(_TABLES)}"
    return history_config(tmp_path, "postgres", postgres, monkeypatch, table)


@pytest.fixture
def store(config):
    opened = PostgresHistoryStore.open(config.history, config.context, COLUMNS)
    yield opened
    opened.close()


def ids(rows):
    return sorted(r["session_id"] for r in rows)


def test_a_lookup_finds_the_sessions_of_a_key_that_reach_into_the_range(store):
    store.apply("run", 0, [session("a", 0, 10), session("b", 100, 110),
                           session("c", 0, 10, account="v")], [], [])  # fmt: skip
    assert ids(store.lookup([Wanted("a", 10, 100)])) == ["a"]
    assert ids(store.lookup([Wanted("a", 11, 101)])) == ["b"]
    assert ids(store.lookup([Wanted("a", 0, 200), Wanted("v", 5, 6)])) == ["a", "b", "c"]


def test_a_stored_session_is_its_fields_its_state_and_its_aggregates(store):
    stored = session("a", 0, 10, revision=1, events=2)
    store.apply("run", 0, [stored], [], [])
    assert store.lookup([Wanted("a", 0, 20)]) == [stored]


def test_a_session_is_only_replaced_by_a_higher_revision(store):
    store.apply("run", 0, [session("a", 0, 10, revision=2, events=3)], [], [])
    store.apply("run", 1, [session("a", 0, 10, revision=1, events=2)], [], [])
    store.apply("run", 2, [session("a", 0, 10, revision=2, events=9)], [], [])
    [a] = store.lookup([Wanted("a", 0, 20)])
    assert (a["revision"], a["event_count"], a["total"], a["state"]) == (2, 3, 7.5, "state-2")
    store.apply("run", 3, [session("a", 0, 20, revision=3, events=4)], [], [])
    [a] = store.lookup([Wanted("a", 0, 20)])
    assert (a["revision"], a["event_count"], a["end_ms"], a["total"]) == (3, 4, 20, 10.0)


def test_an_absorbed_session_is_deleted(store):
    store.apply("run", 0, [session("a", 0, 10), session("b", 30, 40)], [], [])
    store.apply("run", 1, [session("a", 0, 40, revision=1, events=3)], ["b"], [])
    assert ids(store.lookup([Wanted("a", 0, 100)])) == ["a"]
    assert store.size() == 1


def test_a_replayed_batch_changes_nothing_and_gets_its_first_output(store):
    output = [{"kind": "session", "session_id": "a", "revision": 1}]
    store.apply("run", 7, [session("a", 0, 10, revision=1, events=2)], [], output)
    store.apply("run", 7, [session("x", 0, 10)], ["a"], [{"kind": "other"}])
    assert ids(store.lookup([Wanted("a", 0, 20)])) == ["a"]
    assert store.applied("run", 7) == output
    assert store.applied("run", 8) is None
    assert store.applied("another run", 7) is None


def test_the_ledger_keeps_only_the_last_batches(store):
    for batch in range(105):
        store.apply("run", batch, [], [], [{"batch": batch}])
    assert store.applied("run", 4) is None
    assert store.applied("run", 5) == [{"batch": 5}]


def test_an_unreachable_database_is_one_line_without_the_password(postgres, tmp_path,
                                                                 monkeypatch):  # fmt: skip
    config = history_config(tmp_path, "postgres", postgres, monkeypatch, "unused")
    wrong = config.history.model_copy(update={"port": 1})
    with pytest.raises(Exception) as caught:
        connect(wrong)
    message = str(caught.value)
    assert "cannot be reached" in message and "127.0.0.1:1" in message
    assert "\n" not in message and postgres.password not in message
    assert type(caught.value).__name__ == "UnreachableError"


def test_a_refused_login_does_not_show_the_password(postgres, tmp_path, monkeypatch):
    config = history_config(tmp_path, "postgres", postgres, monkeypatch, "unused")
    monkeypatch.setenv("STREAMWARDEN_TEST_HISTORY_PASSWORD", "not-the-password")
    with pytest.raises(Exception) as caught:
        connect(config.history)
    assert "password authentication failed" in str(caught.value)
    assert "not-the-password" not in str(caught.value)


def test_closing_the_store_ends_its_named_connection_on_the_server(postgres, tmp_path,
                                                                   monkeypatch):  # fmt: skip
    config = history_config(tmp_path, "postgres", postgres, monkeypatch, "store_close_test")
    before = store_connections(postgres)
    opened = PostgresHistoryStore.open(config.history, config.context, COLUMNS)
    assert store_connections(postgres) == before + 1
    opened.close()
    assert store_connections(postgres) == before


TYPED = StoredColumns(
    "id",
    "aggregate_state",
    tuple(
        StoredAggregate(name, spark_type)
        for name, spark_type in [
            ("Count", "bigint"), ("order", "int"), ("avg", "double"), ("last_seen", "timestamp"),
            ("day", "date"), ("paid", "boolean"), ("names", "array<string>"),
            ("amounts", "array<double>"), ("times", "array<timestamp>"),
        ]
    ),
)  # fmt: skip


def test_each_aggregate_is_a_column_of_its_own_type_under_its_own_name(config, postgres):
    """Names keep their case and may be words PostgreSQL reserves; values come back as they
    went in, NaN and empty arrays too."""
    typed = PostgresHistoryStore.open(config.history, config.context, TYPED)
    try:
        stored = {
            **session("s", 0, 10), "Count": 3, "order": 2, "avg": math.inf,
            "last_seen": datetime(2026, 1, 1, 12, 30, 15, 250_000, tzinfo=UTC),
            "day": date(2026, 1, 1), "paid": True, "names": ["x", "y"], "amounts": [],
            "times": [datetime(2026, 1, 2, tzinfo=UTC)],
        }  # fmt: skip
        for name in ("total", "merchants", "first_merchant"):
            del stored[name]
        nan = {**stored, "session_id": "n", "avg": math.nan, "names": None}
        typed.apply("run", 0, [stored, nan], [], [])
        found = {r["session_id"]: r for r in typed.lookup([Wanted("a", 0, 20)])}
        assert found["s"] == stored
        assert math.isnan(found["n"]["avg"]) and found["n"]["names"] is None
        with psycopg.connect(postgres.conninfo()) as db:
            kinds = dict(db.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_name = %s", (config.history.table,),
            ).fetchall())  # fmt: skip
        assert kinds["Count"] == "bigint" and kinds["last_seen"] == "timestamp with time zone"
        assert kinds["day"] == "date" and kinds["names"] == "ARRAY" and kinds["key"] == "text"
    finally:
        typed.close()


def test_a_table_made_for_other_aggregates_is_refused_in_one_line_saying_what_to_do(config):
    """At the run's checks and when the store opens: its stored states would be misread."""
    PostgresHistoryStore.open(config.history, config.context, COLUMNS).close()
    other = StoredColumns(
        "account",
        "aggregate_state",
        (StoredAggregate("total", "bigint"), StoredAggregate("biggest", "double"),
         StoredAggregate("first_merchant", "string")),
    )  # fmt: skip
    for attempt in (
        lambda: PostgresHistoryStore.check(config.history, config.context, other),
        lambda: PostgresHistoryStore.open(config.history, config.context, other),
    ):
        with pytest.raises(ConfigError) as caught:
            attempt()
        message = str(caught.value)
        assert "\n" not in message and repr(config.history.table) in message
        assert "no biggest (double precision)" in message
        assert "total is double precision, not bigint" in message
        assert "an extra merchants (bigint)" in message
        assert "set [history] table to a new name" in message
    PostgresHistoryStore.check(config.history, config.context, COLUMNS)  # the same: fine


def test_an_aggregate_named_as_a_column_of_the_store_is_refused(config):
    clash = StoredColumns("account", "aggregate_state", (StoredAggregate("state", "string"),))
    with pytest.raises(ConfigError, match=r"aggregate 'state' has the name of a column"):
        PostgresHistoryStore.check(config.history, config.context, clash)
