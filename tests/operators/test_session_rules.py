"""The session rules, specified with explicit event times through the engine's own logic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from streamwarden.operators.sessions import SessionParams
from streamwarden.testing import (
    DeadLetter,
    HistoryEvent,
    SessionOutput,
    SessionRevision,
    SessionTester,
)
from streamwarden.testing.session_tester import PageView, to_ms

T0 = datetime(2026, 1, 1, tzinfo=UTC)
MIN = timedelta(minutes=1)
MS = timedelta(milliseconds=1)
GAP = 30 * MIN


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def sessions(out: list[SessionOutput]) -> list[SessionRevision]:
    return [o for o in out if isinstance(o, SessionRevision)]


def dead(out: list[SessionOutput]) -> list[DeadLetter]:
    return [o for o in out if isinstance(o, DeadLetter)]


def make_tester(**overrides: object) -> SessionTester:
    return SessionTester(SessionParams(**{"gap": GAP, **overrides}))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("second_after", "expected_sessions"),
    [(GAP - MS, 1), (GAP, 2), (GAP + MS, 2)],
    ids=["just-under-gap-joins", "exactly-gap-splits", "just-over-gap-splits"],
)
def test_a_gap_of_exactly_gap_or_more_starts_a_new_session(second_after, expected_sessions):
    t = make_tester()
    t.run_batch([PageView("u", T0), PageView("u", T0 + second_after)], watermark=T0)
    out = t.advance_watermark(T0 + 3 * GAP)
    assert len(sessions(out)) == expected_sessions
    assert sum(s.page_count for s in sessions(out)) == 2


def test_a_session_is_emitted_once_the_watermark_reaches_its_end_plus_gap():
    t = make_tester()
    t.run_batch([PageView("u", at(0)), PageView("u", at(5))], watermark=at(0))
    assert t.advance_watermark(at(35) - MS) == []
    out = t.advance_watermark(at(35))
    assert [(s.start_ms, s.end_ms, s.page_count, s.revision) for s in out] == [
        (to_ms(at(0)), to_ms(at(5)), 2, 0)
    ]


def test_state_is_freed_when_a_session_closes_without_lateness():
    t = make_tester()
    t.run_batch([PageView("u", at(0))], watermark=at(0))
    assert t.state_rows == 1
    t.advance_watermark(at(30))
    assert t.state_rows == 0 and t.peek_state("u") is None


def test_out_of_order_events_in_one_batch_give_the_same_session_as_in_order():
    t = make_tester()
    t.run_batch(
        [
            PageView("u", at(10), url="/b"),
            PageView("u", at(5), url="/a"),
            PageView("u", at(12), url="/c"),
        ],
        watermark=at(0),
    )
    [s] = t.advance_watermark(at(60))
    assert (s.start_ms, s.end_ms, s.first_url, s.last_url, s.page_count) == (
        to_ms(at(5)),
        to_ms(at(12)),
        "/a",
        "/c",
        3,
    )


def test_a_late_event_updates_its_closed_session_once_per_batch_without_duplicates():
    t = make_tester(allowed_lateness=10 * MIN)
    t.run_batch([PageView("u", at(0)), PageView("u", at(2))], watermark=at(0))
    [first] = t.advance_watermark(at(33))
    out = t.run_batch([PageView("u", at(1)), PageView("u", at(3))], watermark=at(35))
    assert [(s.session_id, s.revision, s.page_count) for s in out] == [(first.session_id, 1, 4)]


def test_a_closed_summary_is_forgotten_after_the_allowed_lateness():
    t = make_tester(allowed_lateness=10 * MIN)
    t.run_batch([PageView("u", at(0))], watermark=at(0))
    t.advance_watermark(at(30))
    assert t.state_rows == 1  # summary kept for late events
    t.advance_watermark(at(40))
    assert t.state_rows == 0


def test_an_event_later_than_the_allowed_lateness_is_dead_lettered_as_too_late():
    t = make_tester(allowed_lateness=10 * MIN)
    t.run_batch([PageView("u", at(0))], watermark=at(0))
    t.advance_watermark(at(45))
    out = t.run_batch([PageView("u", at(1))], watermark=at(45))
    assert [d.reason for d in dead(out)] == ["too_late"]
    assert sessions(out) == [] and t.state_rows == 0


def test_with_history_lateness_such_an_event_leaves_for_the_history_store_not_too_late():
    t = make_tester(allowed_lateness=10 * MIN, history_lateness=timedelta(days=3))
    t.run_batch([PageView("u", at(0))], watermark=at(0))
    t.advance_watermark(at(45))
    out = t.run_batch([PageView("u", at(1)), PageView("u", at(-3 * 24 * 60))], watermark=at(45))
    assert sorted((o.kind, o.event_ts_ms) for o in out) == [
        ("dead_letter", to_ms(at(-3 * 24 * 60))),
        ("history", to_ms(at(1))),
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
        out = t.run_batch([PageView("u", at(80)), PageView("u", at(101))], watermark=at(100))
    else:
        t.run_batch([PageView("u", at(101))], watermark=at(100))
        out = t.run_batch([PageView("u", at(80))], watermark=at(100))
    assert dead(out) == []
    [s] = t.advance_watermark(at(200))
    assert (s.start_ms, s.end_ms, s.page_count) == (to_ms(at(80)), to_ms(at(101)), 2)


def test_a_chain_of_late_events_reaches_the_session_of_a_later_event_in_the_same_batch():
    t = make_tester()
    batch = [PageView("u", at(m)) for m in (20, 45, 72, 101)] + [PageView("u", at(5))]
    out = t.run_batch(batch, watermark=at(100))
    # 20 -> 45 -> 72 -> 101 are each under the gap apart; 5 is 15 before 20, so it joins too
    assert dead(out) == []
    [s] = t.advance_watermark(at(200))
    assert (s.start_ms, s.page_count) == (to_ms(at(5)), 5)
    out = t.run_batch([PageView("u", at(300)), PageView("u", at(120))], watermark=at(290))
    assert [d.reason for d in dead(out)] == ["too_late"]  # 120: that session was freed


def test_a_session_past_its_lateness_horizon_is_not_joined_even_before_its_timer_fires():
    t = make_tester(allowed_lateness=10 * MIN)
    t.run_batch([PageView("u", at(0))], watermark=at(0))
    out = t.run_batch([PageView("u", at(1))], watermark=at(45))  # timer (at 30) not yet fired
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
    out = t.run_batch([PageView("u", at(55))], watermark=at(60))
    assert dead(out) == []
    [s] = t.advance_watermark(at(90))
    assert s.page_count == 1


def test_a_late_event_bridging_two_emitted_sessions_merges_them_into_the_earlier_one():
    t = make_tester(allowed_lateness=45 * MIN)
    t.run_batch([PageView("u", at(0)), PageView("u", at(31))], watermark=at(0))
    [a] = t.advance_watermark(at(34))
    [b] = t.advance_watermark(at(64))
    [merged] = t.run_batch([PageView("u", at(15))], watermark=at(69))
    assert merged.session_id == a.session_id
    assert merged.revision == 1 and merged.page_count == 3
    assert merged.merged_session_ids == (b.session_id,)


def test_a_late_event_bridging_an_emitted_and_an_open_session_reemits_when_it_closes():
    t = make_tester(allowed_lateness=10 * MIN)
    t.run_batch([PageView("u", at(0)), PageView("u", at(31))], watermark=at(0))
    [a] = t.advance_watermark(at(34))
    assert t.run_batch([PageView("u", at(15))], watermark=at(39)) == []
    [merged] = t.advance_watermark(at(61))
    assert (merged.session_id, merged.revision, merged.page_count) == (
        a.session_id,
        1,
        3,
    )


def test_events_past_the_page_cap_are_dead_lettered_and_the_session_is_truncated():
    t = make_tester(max_pages=3)
    out = t.run_batch([PageView("u", at(i)) for i in range(5)], watermark=at(0))
    assert [d.reason for d in dead(out)] == ["session_page_cap"] * 2
    [s] = t.advance_watermark(at(60))
    assert s.page_count == 3 and s.truncated is True


def test_events_past_the_byte_cap_are_dead_lettered_and_the_session_is_truncated():
    t = make_tester(max_session_bytes=250)
    out = t.run_batch([PageView("u", at(i), size=100) for i in range(3)], watermark=at(0))
    assert [d.reason for d in dead(out)] == ["session_byte_cap"]
    [s] = t.advance_watermark(at(60))
    assert (s.page_count, s.bytes, s.truncated) == (2, 200, True)


def test_session_ids_are_deterministic_and_differ_by_user_and_start():
    ids = []
    for user, start in (("u", 0), ("u", 0), ("v", 0), ("u", 1)):
        t = make_tester()
        t.run_batch([PageView(user, at(start))], watermark=at(0))
        [s] = t.advance_watermark(at(60))
        assert isinstance(s, SessionRevision)
        ids.append(s.session_id)
    assert ids[0] == ids[1] and len(set(ids)) == 3


def test_a_user_who_never_returns_holds_no_state_after_gap_plus_lateness():
    t = make_tester(allowed_lateness=10 * MIN)
    t.run_batch([PageView(f"u{i}", at(i)) for i in range(100)], watermark=at(0))
    t.advance_watermark(at(99 + 30 + 10) - MS)
    assert t.state_rows == 1
    t.advance_watermark(at(99 + 30 + 10))
    assert t.state_rows == 0


def test_urls_are_collected_in_event_time_order_across_merges():
    t = make_tester(collect_urls=True)
    t.run_batch([PageView("u", at(10), url="/c"), PageView("u", at(0), url="/a")], watermark=at(0))
    t.run_batch([PageView("u", at(5), url="/b")], watermark=at(9))
    [s] = t.advance_watermark(at(60))
    assert s.urls == ("/a", "/b", "/c")


def test_a_kept_early_timer_fires_without_emitting_and_the_session_closes_at_its_deadline():
    # The timer registered for the first event (due at 30) is kept when the second event moves
    # the deadline to 50; when it fires at 30 nothing is due, and it re-arms at 50.
    t = make_tester()
    t.run_batch([PageView("u", at(0))], watermark=at(0))
    t.run_batch([PageView("u", at(20))], watermark=at(10))
    assert t.peek_state("u").timer_ms == to_ms(at(30))
    assert t.advance_watermark(at(30)) == []
    assert t.peek_state("u").timer_ms == to_ms(at(50))
    assert t.advance_watermark(at(50) - MS) == []
    [s] = t.advance_watermark(at(50))
    assert (s.start_ms, s.end_ms, s.page_count) == (to_ms(at(0)), to_ms(at(20)), 2)
    assert t.state_rows == 0
