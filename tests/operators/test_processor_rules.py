"""The guard's rules for a keyed processor, in plain Python (``ProcessorTester``): every state
has a deadline in event time, expiry is judged against the event being processed (so results
never depend on batching), storage is freed by the guard's timer also for a key that never
returns, caps do what they declare, and an exception in user code dead-letters the key's
records of the batch and undoes the call."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamwarden import KeyedProcessor, ListState, MapState, Schema, ValueState
from streamwarden.errors import ConfigError
from streamwarden.testing import DeadLetter, Emitted, ProcessorTester
from tests.support import T0_MS

MINUTE = 60_000
DAY = timedelta(days=1)


def at(minutes: float) -> int:
    return T0_MS + int(minutes * MINUTE)


def payment(account: str, minutes: float, amount: float) -> dict[str, Any]:
    return {"account": account, "at": at(minutes), "amount": amount}


class BigPaymentAlert(KeyedProcessor):
    output = "account STRING, at BIGINT, amount DOUBLE, mean_before DOUBLE"
    last = ListState("amount DOUBLE", expire_after=DAY, max_items=5, when_full="drop_oldest")

    def process(self, key, events, ctx):
        for e in events:
            amounts = self.last.get()
            if len(amounts) == 5 and e.amount > 10 * (sum(amounts) / 5):
                ctx.emit(account=key, at=e.at, amount=e.amount, mean_before=sum(amounts) / 5)
            self.last.append(e.amount)


class LastSeen(KeyedProcessor):
    """Emits, for each event, the value the key's state holds when the event comes."""

    output = "account STRING, at BIGINT, previous DOUBLE"
    seen = ValueState("amount DOUBLE", expire_after=timedelta(minutes=10))

    def process(self, key, events, ctx):
        for e in events:
            ctx.emit(account=key, at=e.at, previous=self.seen.get())
            self.seen.set(e.amount)


def harness(processor: KeyedProcessor) -> ProcessorTester:
    return ProcessorTester(processor, key="account", time="at")


def emitted(out: list[Any]) -> list[dict[str, Any]]:
    return [dict(o.values) for o in out if isinstance(o, Emitted)]


def dead(out: list[Any]) -> list[DeadLetter]:
    return [o for o in out if isinstance(o, DeadLetter)]


# -- deadlines ---------------------------------------------------------------------------------
def test_a_state_without_a_deadline_is_refused_when_its_class_is_defined():
    with pytest.raises(ConfigError, match="state 'amounts' of NoDeadline has no deadline"):

        class NoDeadline(KeyedProcessor):
            output = "n BIGINT"
            amounts = ListState("amount DOUBLE")

            def process(self, key, events, ctx): ...


def test_a_state_may_say_it_is_unbounded():
    class Counter(KeyedProcessor):
        output = "account STRING, n BIGINT"
        count = ValueState("n BIGINT", unbounded=True)

        def process(self, key, events, ctx):
            n = (self.count.get() or 0) + len(events)
            self.count.set(n)
            ctx.emit(account=key, n=n)

    t = harness(Counter())
    t.run_batch([payment("a", 0, 1), payment("a", 1, 1)], watermark=0)
    out = t.advance_watermark(at(100 * 24 * 60))  # a hundred days later: still there
    assert out == [] and t.peek_state("a") == {"count": 2}


def test_a_processor_without_output_is_refused():
    class NoOutput(KeyedProcessor):
        def process(self, key, events, ctx): ...

    with pytest.raises(ConfigError, match="NoOutput must declare output"):
        harness(NoOutput())


def test_an_expired_value_is_invisible_to_a_later_event_of_the_same_batch():
    out = harness(LastSeen()).run_batch(
        [payment("a", 0, 1.0), payment("a", 5, 2.0), payment("a", 16, 3.0)], watermark=0
    )
    # 5 is within 10 minutes of 0; 16 is 11 minutes after 5: the value has expired for it
    assert [e["previous"] for e in emitted(out)] == [None, 1.0, None]


@settings(max_examples=60, deadline=None)
@given(
    gaps=st.lists(st.integers(0, 20), min_size=1, max_size=12),
    cuts=st.lists(st.integers(1, 4), min_size=1, max_size=6),
)
def test_what_an_event_sees_does_not_depend_on_how_its_key_s_events_were_batched(gaps, cuts):
    """In-order events cut into batches at random, each batch under the watermark Spark would
    have (the latest time so far): each event sees the previous value exactly when it was
    written at most 10 minutes before it, as computed on the whole input."""
    minutes, t_ = [], 0
    for gap in gaps:
        t_ += gap
        minutes.append(t_)
    records = [payment("a", m, float(i)) for i, m in enumerate(minutes)]
    expected = [
        float(i - 1) if i and minutes[i] - minutes[i - 1] <= 10 else None
        for i in range(len(minutes))
    ]
    batched, t, i, n = [], harness(LastSeen()), 0, 0
    watermark = 0
    while i < len(records):
        batch = records[i : i + cuts[n % len(cuts)]]
        batched += emitted(t.run_batch(batch, watermark=watermark))
        watermark = max(r["at"] for r in batch)
        i, n = i + len(batch), n + 1
    assert [e["previous"] for e in batched] == expected


def test_a_key_that_never_returns_is_freed_within_a_sixteenth_of_its_deadline_after_it():
    t = harness(BigPaymentAlert())
    t.run_batch([payment("a", 0, 1.0), payment("b", 120, 2.0)], watermark=0)
    assert t.state_rows == 2  # each key: one entry (a timer is no state row)
    day, step = 24 * 60, 24 * 60 / 16  # minutes: the deadline, and the expiry timers' grid
    t.advance_watermark(at(day))  # a's deadline: what is written is kept until it passes
    assert t.peek_state("a") == {"last": [1.0]}
    t.advance_watermark(at(day + step) + 1)
    assert t.peek_state("a") == {} and t.peek_state("b") == {"last": [2.0]}
    t.advance_watermark(at(day + 120 + step) + 1)
    assert t.state_rows == 0


def test_an_expired_entry_is_invisible_before_its_storage_is_freed():
    t = harness(LastSeen())  # a 10 minute deadline: the grid is a second
    t.run_batch([payment("a", 0, 1.0)], watermark=0)
    out = t.run_batch([payment("a", 10.5, 2.0)], watermark=at(10))  # not freed yet
    assert t.peek_state("a") == {"seen": 2.0}
    assert [e["previous"] for e in emitted(out)] == [None]


def test_an_event_behind_the_watermark_is_too_late_and_never_reaches_the_processor():
    t = harness(LastSeen())
    out = t.run_batch([payment("a", 5, 1.0), payment("a", 10, 2.0)], watermark=at(8))
    assert [d.reason for d in dead(out)] == ["too_late"]
    assert [e["previous"] for e in emitted(out)] == [None]


# -- caps ----------------------------------------------------------------------------------------
def test_a_full_list_drops_its_oldest_entry_when_so_declared():
    t = harness(BigPaymentAlert())
    t.run_batch([payment("a", i, float(i)) for i in range(7)], watermark=0)
    assert t.peek_state("a") == {"last": [2.0, 3.0, 4.0, 5.0, 6.0]}


class Capped(KeyedProcessor):
    output = "account STRING"
    devices = MapState(
        "device STRING", "seen BIGINT", expire_after=DAY, max_items=2, when_full="dead_letter"
    )

    def process(self, key, events, ctx):
        for e in events:
            self.devices.set(e.device, e.at)


def test_a_write_to_a_full_state_that_says_dead_letter_sends_its_record_there():
    t = harness(Capped())
    records = [
        {"account": "a", "at": at(0), "device": "d1"},
        {"account": "a", "at": at(1), "device": "d2"},
        {"account": "a", "at": at(2), "device": "d3"},
        {"account": "a", "at": at(3), "device": "d1"},  # an update of a held key fits
    ]
    out = t.run_batch(records, watermark=0)
    [capped] = dead(out)
    assert capped.reason == "state_cap" and '"d3"' in (capped.raw or "")
    assert "state 'devices' is full (max_items 2)" in (capped.detail or "")
    assert t.peek_state("a") == {"devices": {"d2": at(1), "d1": at(3)}}


# -- errors in user code -------------------------------------------------------------------
class FailsOnNegative(KeyedProcessor):
    output = "account STRING, total DOUBLE"
    total = ValueState("total DOUBLE", expire_after=DAY)

    def process(self, key, events, ctx):
        for e in events:
            total = (self.total.get() or 0.0) + e.amount
            self.total.set(total)
            ctx.emit(account=key, total=total)
            if e.amount < 0:
                raise ValueError(f"negative amount {e.amount}")


def test_a_raising_processor_dead_letters_the_key_s_records_and_undoes_the_call():
    t = harness(FailsOnNegative())
    t.run_batch([payment("a", 0, 5.0)], watermark=0)
    out = t.run_batch([payment("a", 1, 2.0), payment("a", 2, -1.0), payment("b", 2, 7.0)], 0)
    assert [(d.reason, d.key) for d in dead(out)] == [("processor_error", "a")] * 2
    assert dead(out)[0].detail == "process raised ValueError: negative amount -1.0"
    assert emitted(out) == [{"account": "b", "total": 7.0}]  # a's emits are undone
    assert t.peek_state("a") == {"total": 5.0}  # and so are its writes


def test_emitting_a_column_the_output_lacks_is_a_processor_error_naming_it():
    class Typo(KeyedProcessor):
        output = "account STRING"

        def process(self, key, events, ctx):
            ctx.emit(acount=key)

    [letter] = harness(Typo()).run_batch([payment("a", 0, 1.0)], watermark=0)
    assert isinstance(letter, DeadLetter) and letter.reason == "processor_error"
    assert "ctx.emit: acount not in the output (account STRING)" in (letter.detail or "")


# -- timers --------------------------------------------------------------------------------------
class Reminder(KeyedProcessor):
    output = "account STRING, reminded_at BIGINT, amount DOUBLE"
    pending = ValueState("amount DOUBLE", expire_after=timedelta(hours=2))

    def process(self, key, events, ctx):
        for e in events:
            self.pending.set(e.amount)
            ctx.set_timer(e.at + 30 * MINUTE)

    def on_timer(self, key, when, ctx):
        ctx.emit(account=key, reminded_at=int(when.timestamp() * 1000), amount=self.pending.get())


def test_a_timer_the_processor_sets_fires_once_the_watermark_passes_it():
    t = harness(Reminder())
    assert t.run_batch([payment("a", 0, 9.0)], watermark=0) == []
    assert t.advance_watermark(at(29)) == []
    assert emitted(t.advance_watermark(at(31))) == [
        {"account": "a", "reminded_at": at(30), "amount": 9.0}
    ]
    t.advance_watermark(at(3 * 60))
    assert t.state_rows == 0


def test_a_timer_sees_what_its_key_holds_however_far_the_watermark_jumps():
    t = harness(Reminder())
    t.run_batch([payment("a", 0, 9.0), payment("a", 100, 4.0)], watermark=0)
    # one jump past both timers (30 and 130 minutes) and the value's deadline (220): freeing
    # storage waits for the timers, which see the value as they would one by one
    out = t.advance_watermark(at(600))
    assert [(e["reminded_at"], e["amount"]) for e in emitted(out)] == [
        (at(30), 4.0),
        (at(130), 4.0),
    ]
    assert t.state_rows == 0


# -- what the processor reads --------------------------------------------------------------------
class Running(KeyedProcessor):
    output = "account STRING, events BIGINT, total DOUBLE"
    running = ValueState("events BIGINT, total DOUBLE", expire_after=DAY)

    def process(self, key, events, ctx):
        for e in events:
            r = self.running.get()
            self.running.set((1, e.amount) if r is None else (r.events + 1, r.total + e.amount))
        r = self.running.get()
        ctx.emit(account=key, events=r.events, total=r.total)


def test_a_value_of_several_fields_reads_back_by_field_within_the_call_as_after_it():
    t = harness(Running())
    out = t.run_batch([payment("a", 0, 1.0), payment("a", 1, 2.0)], watermark=0)
    out += t.run_batch([payment("a", 2, 4.0)], watermark=0)
    assert emitted(out) == [
        {"account": "a", "events": 2, "total": 3.0},
        {"account": "a", "events": 3, "total": 7.0},
    ]


class City(KeyedProcessor):
    output = "account STRING, city STRING, amount DOUBLE"

    def process(self, key, events, ctx):
        for e in events:
            ctx.emit(
                account=e.account, city=e.geo.city if e.amount > 0 else e.nope, amount=e.amount
            )


def test_an_event_s_fields_are_its_attributes_nested_ones_too():
    schema = Schema(
        key="account",
        time="at",
        fields="account STRING, at BIGINT, amount DOUBLE, geo STRUCT<city: STRING>",
    )
    t = ProcessorTester(City(), schema)
    good = {"account": "a", "at": at(0), "amount": 1.0, "geo": {"city": "Paris"}}
    assert emitted(t.run_batch([good], watermark=0)) == [
        {"account": "a", "city": "Paris", "amount": 1.0}
    ]
    [letter] = t.run_batch([{**good, "account": "b", "amount": -1.0}], watermark=0)
    assert isinstance(letter, DeadLetter) and letter.reason == "processor_error"
    assert letter.detail == (
        "process raised AttributeError: the event has no field 'nope' (its fields: account, at, "
        "amount, geo)"
    )


# -- what monitoring counts ----------------------------------------------------------------------
class Mixed(KeyedProcessor):
    output = "account STRING"
    amounts = ListState("amount DOUBLE", expire_after=timedelta(minutes=20), max_items=3)
    by_size = MapState("size STRING", "at BIGINT", expire_after=timedelta(minutes=45))
    last = ValueState("amount DOUBLE", expire_after=timedelta(minutes=10))

    def process(self, key, events, ctx):
        for e in events:
            self.amounts.append(e.amount)
            self.by_size.set("big" if e.amount > 50 else "small", e.at)
            if e.amount > 90:
                self.last.clear()
            else:
                self.last.set(e.amount)


def test_the_rows_the_guard_counts_per_state_name_are_those_it_stores():
    t = harness(Mixed())

    def stored() -> dict[str, int]:
        counts: dict[str, int] = {}
        for account in ("a", "b", "c"):
            for name, held in t.peek_state(account).items():
                counts[name] = counts.get(name, 0) + (1 if name == "last" else len(held))
        return counts

    amounts = [5.0, 70.0, 95.0, 20.0, 99.0, 60.0, 1.0]
    for b in range(12):
        records = [payment("abc"[i % 3], b * 7 + i, amounts[(b + i) % 7]) for i in range(b % 4)]
        t.run_batch(records, watermark=at(b * 7 - 1))
        assert t.state_rows_by_state == stored()
    t.advance_watermark(at(12 * 7 + 60))
    assert t.state_rows_by_state == stored() == {}


def test_a_stored_timestamp_reads_back_with_its_zone_as_an_event_s_time_does():
    # Spark hands a stored TIMESTAMP back as the worker's local time without a zone; an
    # event's time has its zone, so that the two can be compared and subtracted
    declared = ValueState("start TIMESTAMP, events BIGINT", expire_after=DAY)
    naive = datetime(2026, 1, 1, 9, 30)
    _, [value], _ = declared.decode_columns([(naive, 3, 0)])
    assert value.start == naive.astimezone(UTC) and value.start.tzinfo is not None
