"""Invariants of the session rules over arbitrary arrival orders and batchings (Hypothesis)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from streamwarden.operators.sessions import SessionParams
from streamwarden.testing import SessionRevision, SessionTester
from streamwarden.testing.session_tester import PageView

T0 = datetime(2026, 1, 1, tzinfo=UTC)
GAP = timedelta(minutes=30)
MAX_DELAY = timedelta(minutes=1)

event_minutes = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(min_value=0, max_value=300)),
    min_size=1,
    max_size=40,
)


def run(events, lateness_min: int, batch_size: int, max_pages: int = 300):
    """Feeds ``events`` in arrival order, ``batch_size`` at a time, with Spark's watermark
    (max event time so far minus the delay, applied from the next batch), then drains."""
    t = SessionTester(
        SessionParams(
            gap=GAP, allowed_lateness=timedelta(minutes=lateness_min), max_pages=max_pages
        )
    )
    out, max_seen, watermark = [], None, T0 - timedelta(days=1)
    for i in range(0, len(events), batch_size):
        batch = [
            PageView(u, T0 + timedelta(minutes=m), raw=f"{u}-{m}-{i + j}")
            for j, (u, m) in enumerate(events[i : i + batch_size])
        ]
        out += t.run_batch(batch, watermark)
        max_seen = max([max_seen or batch[0].at, *(e.at for e in batch)])
        watermark = max(watermark, max_seen - MAX_DELAY)
    out += t.advance_watermark(T0 + timedelta(days=2))
    return t, out


def final_sessions(out):
    latest: dict[str, SessionRevision] = {}
    merged: set[str] = set()
    for o in out:
        if isinstance(o, SessionRevision):
            merged.update(o.merged_session_ids or [])
            if o.session_id not in latest or o.revision > latest[o.session_id].revision:
                latest[o.session_id] = o
    return [s for sid, s in latest.items() if sid not in merged]


@settings(max_examples=60, deadline=None)
@given(event_minutes, st.integers(0, 60), st.integers(1, 10), st.integers(1, 8))
def test_every_event_ends_in_exactly_one_session_or_one_dead_letter(
    events, lateness_min, batch_size, max_pages
):
    t, out = run(events, lateness_min, batch_size, max_pages)
    in_sessions = sum(s.page_count for s in final_sessions(out))
    dead = sum(1 for o in out if o.kind == "dead_letter")
    assert in_sessions + dead == len(events)
    assert t.state_rows == 0


@settings(max_examples=60, deadline=None)
@given(event_minutes, st.integers(1, 10))
def test_in_order_input_gives_exactly_the_gap_defined_sessions(events, batch_size):
    events = sorted(events, key=lambda e: e[1])
    _, out = run(events, 0, batch_size)
    expected = set()
    for user in {u for u, _ in events}:
        times = sorted(m for u, m in events if u == user)
        start = prev = times[0]
        for m in times[1:]:
            if timedelta(minutes=m - prev) >= GAP:
                expected.add((user, start, prev))
                start = m
            prev = m
        expected.add((user, start, prev))
    got = {
        (
            s.user_id,
            (s.start_ms - 1767225600000) // 60000,
            (s.end_ms - 1767225600000) // 60000,
        )
        for s in final_sessions(out)
    }
    assert got == expected
    assert all(o.kind == "session" and o.revision == 0 for o in out)


@settings(max_examples=60, deadline=None)
@given(event_minutes, st.integers(0, 60), st.integers(1, 10))
def test_a_session_is_updated_at_most_once_per_batch(events, lateness_min, batch_size):
    t = SessionTester(SessionParams(gap=GAP, allowed_lateness=timedelta(minutes=lateness_min)))
    watermark = T0 - timedelta(days=1)
    max_seen = None
    for i in range(0, len(events), batch_size):
        batch = [PageView(u, T0 + timedelta(minutes=m)) for u, m in events[i : i + batch_size]]
        out = t.run_batch(batch, watermark)
        ids = [o.session_id for o in out if o.kind == "session"]
        assert len(ids) == len(set(ids))
        max_seen = max([max_seen or batch[0].at, *(e.at for e in batch)])
        watermark = max(watermark, max_seen - MAX_DELAY)
