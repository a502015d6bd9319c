"""The PostgreSQL history store against a real server: lookups around times, revision-guarded
upserts, deletions, and a batch applied exactly once with its output kept for replays."""

from __future__ import annotations

import itertools

import pytest

from streamwarden.history.base import Wanted
from streamwarden.history.postgres import PostgresHistoryStore, connect
from tests.history.support import history_config, store_connections

_TABLES = itertools.count()


def session(session_id, start, end, revision=0, pages=1, user="u"):
    return {
        "session_id": session_id, "user_id": user, "start_ms": start, "end_ms": end,
        "page_count": pages, "bytes": 10 * pages, "first_url": "/a", "last_url": "/b",
        "urls": None, "url_times": None, "revision": revision, "truncated": False,
    }  # fmt: skip


@pytest.fixture
def store(postgres, tmp_path, monkeypatch):
    table = f"store_test_{next(_TABLES)}"
    config = history_config(tmp_path, "postgres", postgres, monkeypatch, table)
    opened = PostgresHistoryStore.open(config.history, config.context, collect_urls=False)
    yield opened
    opened.close()


def ids(rows):
    return sorted(r["session_id"] for r in rows)


def test_a_lookup_finds_the_sessions_of_a_user_that_reach_into_the_range(store):
    store.apply("run", 0, [session("a", 0, 10), session("b", 100, 110),
                           session("c", 0, 10, user="v")], [], [])  # fmt: skip
    assert ids(store.lookup([Wanted("u", 10, 100)])) == ["a"]
    assert ids(store.lookup([Wanted("u", 11, 101)])) == ["b"]
    assert ids(store.lookup([Wanted("u", 0, 200), Wanted("v", 5, 6)])) == ["a", "b", "c"]


def test_a_session_is_only_replaced_by_a_higher_revision(store):
    store.apply("run", 0, [session("a", 0, 10, revision=2, pages=3)], [], [])
    store.apply("run", 1, [session("a", 0, 10, revision=1, pages=2)], [], [])
    store.apply("run", 2, [session("a", 0, 10, revision=2, pages=9)], [], [])
    [a] = store.lookup([Wanted("u", 0, 20)])
    assert (a["revision"], a["page_count"]) == (2, 3)
    store.apply("run", 3, [session("a", 0, 20, revision=3, pages=4)], [], [])
    [a] = store.lookup([Wanted("u", 0, 20)])
    assert (a["revision"], a["page_count"], a["end_ms"]) == (3, 4, 20)


def test_an_absorbed_session_is_deleted(store):
    store.apply("run", 0, [session("a", 0, 10), session("b", 30, 40)], [], [])
    store.apply("run", 1, [session("a", 0, 40, revision=1, pages=3)], ["b"], [])
    assert ids(store.lookup([Wanted("u", 0, 100)])) == ["a"]
    assert store.size() == 1


def test_a_replayed_batch_changes_nothing_and_gets_its_first_output(store):
    output = [{"kind": "session", "session_id": "a", "revision": 1}]
    store.apply("run", 7, [session("a", 0, 10, revision=1, pages=2)], [], output)
    store.apply("run", 7, [session("x", 0, 10)], ["a"], [{"kind": "other"}])
    assert ids(store.lookup([Wanted("u", 0, 20)])) == ["a"]
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
    opened = PostgresHistoryStore.open(config.history, config.context, collect_urls=False)
    assert store_connections(postgres) == before + 1
    opened.close()
    assert store_connections(postgres) == before
