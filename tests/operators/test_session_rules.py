"""The session rules, specified with explicit event times through the engine's own logic: plain
pageview records (``user_id STRING, ts BIGINT, page_number INT, url STRING``, ``ts`` in epoch
milliseconds) in, session revisions and dead letters out."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from streamwarden.operators.sessions import SessionParams
from streamwarden.schema import Schema
from streamwarden.testing import (
    DeadLetter,
    HistoryEvent,
    SessionOutput,
    SessionRevision,
    SessionTester,
)
from tests.support import PAGEVIEW_AGGREGATES, PAGEVIEW_SCHEMA, minutes

PAGEVIEWS = Schema(**PAGEVIEW_SCHEMA)
MIN = timedelta(minutes=1)
GAP = 30 * MIN
GAP_MS = GAP // timedelta(milliseconds=1)
#: The pageview aggregates, and every url in event-time order.
AGGREGATES = {**PAGEVIEW_AGGREGATES, "urls": "collect_list(url)"}


def at(m: float) -> int:
    """Epoch milliseconds of T0 + ``m`` minutes: an event time, or a watermark."""
    return minutes(m)


def view(user: str, m: float, url: str | None = "/p", page: int = 1) -> dict[str, Any]:
    """A pageview of ``user`` at T0 + ``m`` minutes."""
    return {"user_id": user, "ts": at(m), "page_number": page, "url": url}


def sessions(out: list[SessionOutput]) -> list[SessionRevision]:
    return [o for o in out if isinstance(o, SessionRevision)]


def dead(out: list[SessionOutput]) -> list[DeadLetter]:
    return [o for o in out if isinstance(o, DeadLetter)]


def make_tester(**overrides: Any) -> SessionTester:
    params: dict[str, Any] = {"gap": GAP, "aggregates": AGGREGATES, **overrides}
    return SessionTester(PAGEVIEWS, SessionParams(**params))


def record_bytes(record: dict[str, Any]) -> int:
    """What one record counts toward ``max_session_bytes`` (a session of it alone says)."""
    t = make_tester(aggregates={})
    t.run_batch([record], watermark=at(0))
    [s] = t.advance_watermark(at(600))
    return s.bytes


# -- when sessions start and end ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("second_after_ms", "expected_sessions"),
    [(GAP_MS - 1, 1), (GAP_MS, 2), (GAP_MS + 1, 2)],
    ids=["just-under-gap-joins", "exactly-gap-splits", "just-over-gap-splits"],
)
def test_a_gap_of_exactly_gap_or_more_starts_a_new_session(second_after_ms, expected_sessions):
    t = make_tester()
    first, second = view("u", 0), {**view("u", 0), "ts": at(0) + second_after_ms}
    t.run_batch([first, second], watermark=at(0))
    out = t.advance_watermark(at(120))
    assert len(sessions(out)) == expected_sessions
    assert sum(s.event_count for s in sessions(out)) == 2


def test_a_session_is_emitted_once_the_watermark_reaches_its_end_plus_gap():
    t = make_tester()
    t.run_batch([view("u", 0), view("u", 5)], watermark=at(0))
    assert t.advance_watermark(at(35) - 1) == []
    out = t.advance_watermark(at(35))
    assert [(s.key, s.start_ms, s.end_ms, s.event_count, s.revision) for s in out] == [
        ("u", at(0), at(5), 2, 0)
    ]


def test_state_is_freed_when_a_session_closes_without_lateness():
    t = make_tester()
    t.run_batch([view("u", 0)], watermark=at(0))
    assert t.state_rows == 1
    t.advance_watermark(at(30))
    assert t.state_rows == 0 and t.peek_state("u") is None


def test_out_of_order_events_in_one_batch_give_the_same_session_as_in_order():
    t = make_tester()
    t.run_batch([view("u", 10, "/b"), view("u", 5, "/a"), view("u", 12, "/c")], watermark=at(0))
    [s] = t.advance_watermark(at(60))
    assert (s.start_ms, s.end_ms, s.event_count) == (at(5), at(12), 3)
    assert s.aggregates == {"first_url": "/a", "last_url": "/c", "urls": ("/a", "/b", "/c")}


def test_session_ids_are_deterministic_and_differ_by_key_and_start():
    ids = []
    for user, start in (("u", 0), ("u", 0), ("v", 0), ("u", 1)):
        t = make_tester()
        t.run_batch([view(user, start)], watermark=at(0))
        [s] = t.advance_watermark(at(60))
        ids.append(s.session_id)
    assert ids[0] == ids[1] and len(set(ids)) == 3


def test_the_key_of_an_integer_field_keys_sessions_as_its_value():
    schema = Schema(key="device", time="ts", fields="device BIGINT, ts BIGINT")
    t = SessionTester(schema, SessionParams(gap=GAP))
    t.run_batch([{"device": 7, "ts": at(0)}, {"device": 70, "ts": at(1)}], watermark=at(0))
    assert t.peek_state(7) is not None and t.peek_state(70) is not None
    out = t.advance_watermark(at(60))
    assert sorted((s.key, s.event_count) for s in sessions(out)) == [("7", 1), ("70", 1)]


# -- late events -------------------------------------------------------------------------------
def test_a_late_event_updates_its_closed_session_once_per_batch_without_duplicates():
    t = make_tester(allowed_lateness=10 * MIN)
    t.run_batch([view("u", 0), view("u", 2)], watermark=at(0))
    [first] = t.advance_watermark(at(33))
    out = t.run_batch([view("u", 1, "/x"), view("u", 3, "/y")], watermark=at(35))
    assert [(s.session_id, s.revision, s.event_count) for s in out] == [(first.session_id, 1, 4)]
    assert out[0].aggregates["urls"] == ("/p", "/x", "/p", "/y")


def test_a_closed_summary_is_forgotten_after_the_allowed_lateness():
    t = make_tester(allowed_lateness=10 * MIN)
    t.run_batch([view("u", 0)], watermark=at(0))
    t.advance_watermark(at(30))
    assert t.state_rows == 1  # summary kept for late events
    t.advance_watermark(at(40))
    assert t.state_rows == 0


def test_an_event_later_than_the_allowed_lateness_is_dead_lettered_as_too_late():
    t = make_tester(allowed_lateness=10 * MIN)
    t.run_batch([view("u", 0)], watermark=at(0))
    t.advance_watermark(at(45))
    late = view("u", 1)
    out = t.run_batch([late], watermark=at(45))
    [letter] = dead(out)
    assert (letter.reason, letter.key, letter.event_ts_ms) == ("too_late", "u", at(1))
    assert letter.raw is not None and f'"ts": {at(1)}' in letter.raw
    assert sessions(out) == [] and t.state_rows == 0


@pytest.mark.parametrize(
    "aggregates",
    [
        pytest.param({}, id="no-aggregates"),
        pytest.param(
            AGGREGATES,
            id="with-aggregates",
        ),
    ],
)
def test_with_history_lateness_such_an_event_leaves_for_the_history_store_not_too_late(
    aggregates,
):
    t = make_tester(
        allowed_lateness=10 * MIN, history_lateness=timedelta(days=3), aggregates=aggregates
    )
    t.run_batch([view("u", 0)], watermark=at(0))
    t.advance_watermark(at(45))
    out = t.run_batch([view("u", 1), view("u", -3 * 24 * 60)], watermark=at(45))
    assert sorted((o.kind, o.event_ts_ms) for o in out) == [
        ("dead_letter", at(-3 * 24 * 60)),
        ("history", at(1)),
    ]
    assert [type(o) for o in out if o.kind == "history"] == [HistoryEvent]
    assert t.state_rows == 0


@pytest.mark.parametrize("together", [True, False], ids=["one-batch", "later-event-first"])
def test_a_late_event_joins_the_open_session_a_later_event_opens_however_they_are_batched(
    together,
):
    # 80 is behind the watermark (100) with no session of its own, but 101 opens one within the
    # gap: whether 101 comes in the same batch or an earlier one, 80 joins it
    t = make_tester()
    if together:
        out = t.run_batch([view("u", 80, "/a"), view("u", 101, "/b")], watermark=at(100))
    else:
        t.run_batch([view("u", 101, "/b")], watermark=at(100))
        out = t.run_batch([view("u", 80, "/a")], watermark=at(100))
    assert dead(out) == []
    [s] = t.advance_watermark(at(200))
    assert (s.start_ms, s.end_ms, s.event_count) == (at(80), at(101), 2)
    assert s.aggregates == {"first_url": "/a", "last_url": "/b", "urls": ("/a", "/b")}


def test_a_chain_of_late_events_reaches_the_session_of_a_later_event_in_the_same_batch():
    t = make_tester()
    batch = [view("u", m) for m in (20, 45, 72, 101)] + [view("u", 5)]
    out = t.run_batch(batch, watermark=at(100))
    # 20 -> 45 -> 72 -> 101 are each under the gap apart; 5 is 15 before 20, so it joins too
    assert dead(out) == []
    [s] = t.advance_watermark(at(200))
    assert (s.start_ms, s.event_count) == (at(5), 5)
    out = t.run_batch([view("u", 300), view("u", 120)], watermark=at(290))
    assert [d.reason for d in dead(out)] == ["too_late"]  # 120: that session was freed


def test_a_session_past_its_lateness_horizon_is_not_joined_even_before_its_timer_fires():
    t = make_tester(allowed_lateness=10 * MIN)
    t.run_batch([view("u", 0)], watermark=at(0))
    out = t.run_batch([view("u", 1)], watermark=at(45))  # timer (at 30) not yet fired
    assert [
        (
            o.kind,
            o.revision if isinstance(o, SessionRevision) else None,
            o.reason if isinstance(o, DeadLetter) else None,
        )
        for o in out
    ] == [
        ("session", 0, None),
        ("dead_letter", None, "too_late"),
    ]
    assert t.state_rows == 0


def test_a_late_event_without_a_session_but_within_lateness_starts_one():
    t = make_tester(allowed_lateness=10 * MIN)
    out = t.run_batch([view("u", 55)], watermark=at(60))
    assert dead(out) == []
    [s] = t.advance_watermark(at(90))
    assert s.event_count == 1


# -- merges ------------------------------------------------------------------------------------
def test_a_late_event_bridging_two_emitted_sessions_merges_them_into_the_earlier_one():
    t = make_tester(allowed_lateness=45 * MIN)
    t.run_batch([view("u", 0, "/a"), view("u", 31, "/c")], watermark=at(0))
    [a] = t.advance_watermark(at(34))
    [b] = t.advance_watermark(at(64))
    [merged] = t.run_batch([view("u", 15, "/b")], watermark=at(69))
    assert merged.session_id == a.session_id
    assert (merged.revision, merged.event_count, merged.start_ms, merged.end_ms) == (
        1,
        3,
        at(0),
        at(31),
    )
    assert merged.merged_session_ids == (b.session_id,)
    assert merged.bytes == a.bytes + b.bytes + record_bytes(view("u", 15, "/b"))
    assert merged.aggregates == {"first_url": "/a", "last_url": "/c", "urls": ("/a", "/b", "/c")}


def test_a_late_event_bridging_an_emitted_and_an_open_session_reemits_when_it_closes():
    t = make_tester(allowed_lateness=10 * MIN)
    t.run_batch([view("u", 0, "/a"), view("u", 31, "/c")], watermark=at(0))
    [a] = t.advance_watermark(at(34))
    assert t.run_batch([view("u", 15, "/b")], watermark=at(39)) == []
    [merged] = t.advance_watermark(at(61))
    assert (merged.session_id, merged.revision, merged.event_count) == (a.session_id, 1, 3)
    assert merged.merged_session_ids is None  # the open session was never emitted
    assert merged.aggregates["urls"] == ("/a", "/b", "/c")


def test_urls_are_collected_in_event_time_order_across_batches():
    t = make_tester()
    t.run_batch([view("u", 10, "/c"), view("u", 0, "/a")], watermark=at(0))
    t.run_batch([view("u", 5, "/b")], watermark=at(9))
    [s] = t.advance_watermark(at(60))
    assert s.aggregates["urls"] == ("/a", "/b", "/c")


# -- ties and nulls ----------------------------------------------------------------------------
@pytest.mark.parametrize("batched", ["one-batch", "two-batches"])
def test_events_of_one_time_go_by_arrival_first_keeping_the_earlier_and_last_the_later(batched):
    t = make_tester()
    earlier, later = view("u", 5, "/z"), view("u", 5, "/a")
    if batched == "one-batch":
        t.run_batch([earlier, later], watermark=at(0))
    else:
        t.run_batch([earlier], watermark=at(0))
        t.run_batch([later], watermark=at(0))
    [s] = t.advance_watermark(at(60))
    assert s.aggregates == {"first_url": "/z", "last_url": "/a", "urls": ("/z", "/a")}


def test_within_a_batch_events_of_one_time_keep_their_arrival_order_whatever_they_hold():
    orders = []
    for arrival in (["/z", "/a", "/m"], ["/a", "/m", "/z"]):
        t = make_tester()
        t.run_batch([view("u", 5, url) for url in arrival] + [view("u", 1, "/0")], at(0))
        [s] = t.advance_watermark(at(60))
        orders.append(s.aggregates["urls"])
    assert orders == [("/0", "/z", "/a", "/m"), ("/0", "/a", "/m", "/z")]


def test_null_values_are_skipped_by_every_aggregate_but_count_of_events():
    t = make_tester(
        aggregates={
            **AGGREGATES,
            "views": "count()",
            "with_url": "count(url)",
            "distinct_urls": "count_distinct(url)",
            "url_set": "collect_set(url)",
        }
    )
    t.run_batch([view("u", 0, None), view("u", 1, "/a"), view("u", 2, None)], watermark=at(0))
    [s] = t.advance_watermark(at(60))
    assert s.aggregates == {
        "first_url": "/a",
        "last_url": "/a",
        "urls": ("/a",),
        "views": 3,
        "with_url": 1,
        "distinct_urls": 1,
        "url_set": ("/a",),
    }


# -- caps --------------------------------------------------------------------------------------
def test_events_past_the_event_cap_are_dead_lettered_and_the_session_is_truncated():
    t = make_tester(max_events=3)
    out = t.run_batch([view("u", i, f"/{i}") for i in range(5)], watermark=at(0))
    assert [(d.reason, d.detail, d.event_ts_ms) for d in dead(out)] == [
        ("session_event_cap", "session already holds the maximum of 3 events", at(i))
        for i in (3, 4)
    ]
    [s] = t.advance_watermark(at(60))
    assert (s.event_count, s.truncated) == (3, True)
    assert s.aggregates["urls"] == ("/0", "/1", "/2")  # what it holds, not what it refused


def test_a_session_of_exactly_the_event_cap_is_not_truncated():
    t = make_tester(max_events=3)
    assert dead(t.run_batch([view("u", i) for i in range(3)], watermark=at(0))) == []
    [s] = t.advance_watermark(at(60))
    assert (s.event_count, s.truncated) == (3, False)


@pytest.mark.parametrize(("extra", "held"), [(0, 2), (-1, 1)], ids=["at-cap", "one-byte-over"])
def test_an_event_joins_while_the_records_bytes_are_at_most_the_byte_cap(extra, held):
    size = record_bytes(view("u", 0))
    cap = 2 * size + extra
    t = make_tester(aggregates={}, max_session_bytes=cap)
    out = t.run_batch([view("u", i) for i in range(3)], watermark=at(0))
    assert [d.reason for d in dead(out)] == ["session_byte_cap"] * (3 - held)
    assert dead(out)[0].detail == (
        f"session would hold {(held + 1) * size} bytes of records and 0 bytes of aggregate "
        f"values, over max_session_bytes {cap}"
    )
    [s] = t.advance_watermark(at(60))
    assert (s.event_count, s.bytes, s.truncated) == (held, held * size, True)


@pytest.mark.parametrize(
    ("aggregates", "held"),
    [({"views": "count()", "first_url": "first(url)"}, 2), ({"url_set": "collect_set(url)"}, 1)],
    ids=["aggregates-holding-no-values", "values-held-by-collect_set"],
)
def test_the_values_aggregates_hold_count_toward_the_byte_cap(aggregates, held):
    records = [view("u", i, f"/{i}") for i in range(2)]
    cap = 2 * record_bytes(records[0])  # both records, and not a byte more
    t = make_tester(aggregates=aggregates, max_session_bytes=cap)
    out = t.run_batch(records, watermark=at(0))
    assert [d.reason for d in dead(out)] == ["session_byte_cap"] * (2 - held)
    [s] = t.advance_watermark(at(60))
    assert s.event_count == held


def test_a_record_over_the_byte_cap_on_its_own_is_dead_lettered_saying_so():
    size = record_bytes(view("u", 0))
    t = make_tester(aggregates={}, max_session_bytes=size - 1)
    [letter] = t.run_batch([view("u", 0)], watermark=at(0))
    assert isinstance(letter, DeadLetter)
    assert (letter.reason, letter.detail) == (
        "session_byte_cap",
        f"record of {size} bytes exceeds max_session_bytes {size - 1} on its own",
    )
    assert t.state_rows == 0


# -- every piece of state has a deadline -------------------------------------------------------
def test_a_user_who_never_returns_holds_no_state_after_gap_plus_lateness():
    t = make_tester(allowed_lateness=10 * MIN)
    t.run_batch([view(f"u{i}", i) for i in range(100)], watermark=at(0))
    t.advance_watermark(at(99 + 30 + 10) - 1)
    assert t.state_rows == 1
    t.advance_watermark(at(99 + 30 + 10))
    assert t.state_rows == 0


def test_a_kept_early_timer_fires_without_emitting_and_the_session_closes_at_its_deadline():
    # The timer registered for the first event (due at 30) is kept when the second event moves
    # the deadline to 50; when it fires at 30 nothing is due, and it re-arms at 50.
    t = make_tester()
    t.run_batch([view("u", 0)], watermark=at(0))
    t.run_batch([view("u", 20)], watermark=at(10))
    state = t.peek_state("u")
    assert state is not None and state.timer_ms == at(30)
    assert t.advance_watermark(at(30)) == []
    state = t.peek_state("u")
    assert state is not None and state.timer_ms == at(50)
    assert t.advance_watermark(at(50) - 1) == []
    [s] = t.advance_watermark(at(50))
    assert (s.start_ms, s.end_ms, s.event_count) == (at(0), at(20), 2)
    assert t.state_rows == 0


def test_peeked_state_shows_held_sessions_open_then_closed_until_their_lateness_passes():
    t = make_tester(allowed_lateness=10 * MIN)
    t.run_batch([view("u", 0), view("u", 2)], watermark=at(0))
    state = t.peek_state("u")
    assert state is not None
    [held] = state.sessions
    assert (held.start_ms, held.end_ms, held.event_count, held.closed, held.session_id) == (
        at(0),
        at(2),
        2,
        False,
        None,
    )
    [emitted] = t.advance_watermark(at(32))
    state = t.peek_state("u")
    assert state is not None
    [held] = state.sessions
    assert (held.closed, held.session_id, held.revision) == (True, emitted.session_id, 0)
    assert state.timer_ms == at(42)
