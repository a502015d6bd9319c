"""Invariants of the session rules over arbitrary arrival orders and batchings (Hypothesis), for
pageviews and for payments with every kind of aggregate: the sessions and their aggregates are
those of the whole input computed at once, whatever the batching within the allowed lateness,
and every event ends in exactly one session or one dead letter."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, localcontext
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamwarden.operators.sessions import SessionParams
from streamwarden.operators.sessions.aggregates import AGGREGATE_FUNCTIONS
from streamwarden.schema import Schema
from streamwarden.testing import SessionOutput, SessionRevision, SessionTester
from tests.support import PAGEVIEW_AGGREGATES, PAGEVIEW_SCHEMA, T0, T0_MS

GAP = timedelta(minutes=30)
GAP_MIN = 30
MAX_DELAY = timedelta(minutes=1)
#: Longer than any input's span: no event is later than the allowed lateness.
ALL_WITHIN = timedelta(hours=12)
KEYS = ["a", "b", "c"]


@dataclass(frozen=True)
class Shape:
    """A schema, its sessions' aggregates, and how its records are made: one event is a key, a
    time in minutes after T0 and the values of the other fields."""

    name: str
    schema: Schema
    aggregates: dict[str, str]
    values: st.SearchStrategy[dict[str, Any]]
    time_of: Callable[[float], Any]
    #: How a key ("a", "b", "c") is written in the key field's type.
    key_of: Callable[[str], Any] = str

    def record(self, key: str, minute: float, values: dict[str, Any]) -> dict[str, Any]:
        return {self.schema.key: self.key_of(key), self.schema.time: self.time_of(minute), **values}


PAGEVIEWS = Shape(
    name="pageviews",
    schema=Schema(**PAGEVIEW_SCHEMA),
    aggregates={
        **PAGEVIEW_AGGREGATES,
        "urls": "collect_list(url)",
        "pages": "sum(page_number)",
        "mean_page": "avg(page_number)",
    },
    values=st.fixed_dictionaries(
        {
            "page_number": st.integers(1, 300),
            "url": st.one_of(st.none(), st.sampled_from(["/a", "/b", "/c", "/d"])),
        }
    ),
    time_of=lambda m: T0_MS + round(m * 60_000),  # ts BIGINT, epoch ms
)
PAYMENTS = Shape(
    name="payments",
    schema=Schema(
        key="account",
        time="at",
        fields="account STRING, at TIMESTAMP, amount DOUBLE, merchant STRING, ok BOOLEAN",
    ),
    aggregates={
        "payments": "count()",
        "amounts": "count(amount)",
        "total": "sum(amount)",
        "mean": "avg(amount)",
        "smallest": "min(amount)",
        "largest": "max(amount)",
        "first_merchant": "first(merchant)",
        "last_merchant": "last(merchant)",
        "merchants": "count_distinct(merchant)",
        "merchant_list": "collect_list(merchant)",
        "merchant_set": "collect_set(merchant)",
        "oks": "collect_set(ok)",
        "last_ok": "last(ok)",
        "latest": "max(at)",
    },
    values=st.fixed_dictionaries(
        {
            "amount": st.one_of(
                st.none(),
                st.sampled_from([0.1, 0.2, 0.3, 1e16, -1e16, 1.0, 2.5e-8]),
                st.floats(-1e9, 1e9, allow_nan=False, allow_infinity=False),
            ),
            "merchant": st.one_of(st.none(), st.sampled_from(["acme", "bolt", "café", "zed"])),
            "ok": st.one_of(st.none(), st.booleans()),
        }
    ),
    time_of=lambda m: T0 + timedelta(minutes=m),  # at TIMESTAMP, an aware datetime
)
SHAPES = [pytest.param(PAGEVIEWS, id="pageviews"), pytest.param(PAYMENTS, id="payments")]


@dataclass(frozen=True)
class Event:
    key: str
    minute: int
    values: dict[str, Any]
    #: Its place in the order of arrival.
    arrival: int


def events_of(shape: Shape, *, max_size: int = 40) -> st.SearchStrategy[list[Event]]:
    """Events of ``shape`` in arrival order, at whole minutes (so that times tie often)."""
    one = st.tuples(st.sampled_from(KEYS), st.integers(0, 300), shape.values)
    return st.lists(one, min_size=1, max_size=max_size).map(
        lambda drawn: [Event(k, m, v, i) for i, (k, m, v) in enumerate(drawn)]
    )


def batches_of(events: Sequence[Event], sizes: Sequence[int]) -> list[list[Event]]:
    """``events`` cut into batches of the ``sizes`` (cycled), in arrival order."""
    out, i, n = [], 0, 0
    while i < len(events):
        size = sizes[n % len(sizes)]
        out.append(list(events[i : i + size]))
        i, n = i + size, n + 1
    return out


def ms(minute: float) -> int:
    return T0_MS + round(minute * 60_000)


def feed(t: SessionTester, shape: Shape, batches: Sequence[Sequence[Event]]) -> list[SessionOutput]:
    """Feeds ``batches`` with Spark's watermark (the latest event time so far minus the delay,
    applied from the next batch), then drains."""
    out: list[SessionOutput] = []
    watermark, latest = ms(-24 * 60), None
    for batch in batches:
        out += t.run_batch([shape.record(e.key, e.minute, e.values) for e in batch], watermark)
        latest = max([*([latest] if latest is not None else []), *(e.minute for e in batch)])
        watermark = max(watermark, ms(latest) - MAX_DELAY // timedelta(milliseconds=1))
    out += t.advance_watermark(ms(48 * 60))
    return out


def final_sessions(out: Sequence[SessionOutput]) -> list[SessionRevision]:
    """Each session's latest revision, without the sessions merged into others."""
    latest: dict[str, SessionRevision] = {}
    merged: set[str] = set()
    for o in out:
        if isinstance(o, SessionRevision):
            merged.update(o.merged_session_ids or ())
            if o.session_id not in latest or o.revision > latest[o.session_id].revision:
                latest[o.session_id] = o
    return [s for sid, s in latest.items() if sid not in merged]


# -- the batch computation, in plain Python ----------------------------------------------------
def gap_sessions(events: Sequence[Event]) -> list[list[Event]]:
    """Each key's events cut where consecutive times are ``gap`` or more apart, each session's
    events in (time, arrival) order."""
    out = []
    for key in sorted({e.key for e in events}):
        ordered = sorted((e for e in events if e.key == key), key=lambda e: (e.minute, e.arrival))
        current = [ordered[0]]
        for e in ordered[1:]:
            if e.minute - current[-1].minute >= GAP_MIN:
                out.append(current)
                current = []
            current.append(e)
        out.append(current)
    return out


def exact_mean(values: Sequence[float | int]) -> float:
    """The exact sum divided by the count to 34 digits, then the nearest double."""
    with localcontext() as exact:
        exact.prec = 4000  # wide enough for any sum of these doubles, unrounded
        total = sum((Decimal(v) for v in values), Decimal(0))
    with localcontext() as decimal128:
        decimal128.prec = 34
        return float(total / Decimal(len(values)))


def aggregate(function: str, values: Sequence[Any]) -> Any:
    """``function`` over one session's values of its field, in (time, arrival) order; nulls
    skipped."""
    present = [v for v in values if v is not None]
    if function == "count":
        return len(present)
    if function == "count_distinct":
        return len(set(present))
    if function == "collect_list":
        return tuple(present)
    if function == "collect_set":
        return tuple(sorted(set(present)))
    if not present:
        return None
    if function == "sum":
        return math.fsum(present) if isinstance(present[0], float) else sum(present)
    reducers: dict[str, Callable[[list[Any]], Any]] = {
        "avg": exact_mean,
        "min": min,
        "max": max,
        "first": lambda vs: vs[0],
        "last": lambda vs: vs[-1],
    }
    return reducers[function](present)


def expected_aggregates(shape: Shape, session: Sequence[Event]) -> dict[str, Any]:
    out = {}
    for name, call in shape.aggregates.items():
        function, field = call.rstrip(")").split("(")
        records = [shape.record(e.key, e.minute, e.values) for e in session]
        values = [True] * len(records) if not field else [r.get(field) for r in records]
        out[name] = aggregate(function, values)
    return out


def summary(shape: Shape, session: Sequence[Event]) -> tuple[Any, ...]:
    return (
        session[0].key,
        ms(session[0].minute),
        ms(session[-1].minute),
        len(session),
        expected_aggregates(shape, session),
    )


def summary_of(s: SessionRevision) -> tuple[Any, ...]:
    return (s.key, s.start_ms, s.end_ms, s.event_count, dict(s.aggregates))


def start(s: SessionRevision) -> int:
    return s.start_ms


def make_tester(shape: Shape, **params: Any) -> SessionTester:
    return SessionTester(
        shape.schema, SessionParams(gap=GAP, aggregates=shape.aggregates, **params)
    )


def sorted_summaries(summaries: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted(summaries, key=lambda s: (s[0], s[1]))


batch_sizes = st.lists(st.integers(1, 10), min_size=1, max_size=5)


# -- properties --------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", SHAPES)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_for_any_batching_within_lateness_sessions_and_aggregates_are_the_batch_computation(
    shape: Shape, data: st.DataObject
) -> None:
    events = data.draw(events_of(shape))
    sizes = data.draw(batch_sizes)
    out = feed(make_tester(shape, allowed_lateness=ALL_WITHIN), shape, batches_of(events, sizes))
    assert [o for o in out if o.kind != "session"] == []
    assert sorted_summaries([summary_of(s) for s in final_sessions(out)]) == sorted_summaries(
        [summary(shape, s) for s in gap_sessions(events)]
    )


@pytest.mark.parametrize("shape", SHAPES)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_every_event_ends_in_exactly_one_final_session_or_one_dead_letter(
    shape: Shape, data: st.DataObject
) -> None:
    events = data.draw(events_of(shape))
    lateness = timedelta(minutes=data.draw(st.integers(0, 60)))
    max_events = data.draw(st.integers(1, 8))
    max_session_bytes = data.draw(st.integers(100, 2000))
    t = make_tester(
        shape,
        allowed_lateness=lateness,
        max_events=max_events,
        max_session_bytes=max_session_bytes,
    )
    out = feed(t, shape, batches_of(events, data.draw(batch_sizes)))
    in_sessions = sum(s.event_count for s in final_sessions(out))
    dead = sum(1 for o in out if o.kind == "dead_letter")
    assert in_sessions + dead == len(events)
    assert all(s.event_count <= max_events for s in final_sessions(out))
    assert all(s.bytes <= max_session_bytes for s in final_sessions(out))
    assert t.state_rows == 0


@pytest.mark.parametrize("shape", SHAPES)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_in_order_input_gives_the_gap_defined_sessions_each_emitted_once(
    shape: Shape, data: st.DataObject
) -> None:
    drawn = data.draw(events_of(shape))
    events = [
        Event(e.key, e.minute, e.values, i)
        for i, e in enumerate(sorted(drawn, key=lambda e: e.minute))
    ]
    out = feed(make_tester(shape), shape, batches_of(events, data.draw(batch_sizes)))
    assert all(o.kind == "session" and o.revision == 0 for o in out)
    assert sorted_summaries([summary_of(s) for s in out]) == sorted_summaries(
        [summary(shape, s) for s in gap_sessions(events)]
    )


@pytest.mark.parametrize("shape", SHAPES)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_a_session_is_updated_at_most_once_per_batch(shape: Shape, data: st.DataObject) -> None:
    events = data.draw(events_of(shape))
    t = make_tester(shape, allowed_lateness=timedelta(minutes=data.draw(st.integers(0, 60))))
    watermark, latest = ms(-24 * 60), 0
    for batch in batches_of(events, data.draw(batch_sizes)):
        out = t.run_batch([shape.record(e.key, e.minute, e.values) for e in batch], watermark)
        ids = [o.session_id for o in out if isinstance(o, SessionRevision)]
        assert len(ids) == len(set(ids))
        latest = max(latest, *(e.minute for e in batch))
        watermark = max(watermark, ms(latest - 1))


@st.composite
def bridged_runs(draw: st.DrawFn, shape: Shape) -> tuple[list[Event], list[Event], list[bool]]:
    """Runs of one key's events, each run more than the gap from the next but less than twice
    the gap (so that one event in between bridges the two); and those bridging events, for the
    gaps ``bridged`` says."""
    runs = draw(st.integers(2, 5))
    minute, run_events, spans = 0, [], []
    for _ in range(runs):
        drawn = draw(st.lists(st.integers(0, 20), min_size=1, max_size=5))
        offsets = [o - min(drawn) for o in drawn]  # the run starts at its first event
        start = minute
        run_events += [(start + o, draw(shape.values)) for o in offsets]
        end = start + max(offsets)
        spans.append((start, end))
        minute = end + draw(st.integers(GAP_MIN, 2 * GAP_MIN - 2))
    bridged = draw(st.lists(st.booleans(), min_size=runs - 1, max_size=runs - 1))
    bridges = [
        ((end + nxt_start) // 2, draw(shape.values))
        for (_, end), (nxt_start, _), bridge in zip(spans[:-1], spans[1:], bridged, strict=True)
        if bridge
    ]
    first = draw(st.permutations(run_events))
    late = draw(st.permutations(bridges))
    numbered = [Event("a", m, v, i) for i, (m, v) in enumerate([*first, *late])]
    return numbered[: len(first)], numbered[len(first) :], bridged


@pytest.mark.parametrize("shape", SHAPES)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_late_events_bridging_emitted_sessions_merge_them_into_the_batch_computation(
    shape: Shape, data: st.DataObject
) -> None:
    runs, bridges, bridged = data.draw(bridged_runs(shape))
    t = make_tester(shape, allowed_lateness=ALL_WITHIN)
    emitted = []
    for batch in batches_of(runs, data.draw(batch_sizes)):
        emitted += t.run_batch([shape.record(e.key, e.minute, e.values) for e in batch], ms(-60))
    last = max(e.minute for e in runs)
    emitted += t.advance_watermark(ms(last + GAP_MIN))  # every run is emitted on its own
    assert len(emitted) == len(bridged) + 1 and all(o.kind == "session" for o in emitted)
    out = []
    for batch in batches_of(bridges, data.draw(batch_sizes)):
        out += t.run_batch(
            [shape.record(e.key, e.minute, e.values) for e in batch], ms(last + GAP_MIN)
        )
    out += t.advance_watermark(ms(48 * 60))
    final = final_sessions([*emitted, *out])
    assert sorted_summaries([summary_of(s) for s in final]) == sorted_summaries(
        [summary(shape, s) for s in gap_sessions([*runs, *bridges])]
    )
    # each merged session keeps the id of its earliest run and names the runs it absorbed
    runs_emitted = sorted((o for o in emitted if isinstance(o, SessionRevision)), key=start)
    ids = [s.session_id for s in runs_emitted]
    absorbed = {
        sid for o in out if isinstance(o, SessionRevision) for sid in o.merged_session_ids or ()
    }
    assert {s.session_id for s in final} | absorbed == set(ids)
    assert absorbed == {sid for sid, bridge in zip(ids[1:], bridged, strict=True) if bridge}


# -- random schemas ----------------------------------------------------------------------------
#: Each declarable scalar type, with values of it (as a record of the schema holds them).
SCALARS: dict[str, st.SearchStrategy[Any]] = {
    "SMALLINT": st.integers(-(2**15), 2**15 - 1),
    "INT": st.integers(-(2**31), 2**31 - 1),
    "BIGINT": st.integers(-(2**40), 2**40),  # 40 summed stay within a long
    "FLOAT": st.sampled_from([0.0, 0.5, -1.25, 3.0, 1024.0, -0.0078125]),  # exact in 32 bits
    "DOUBLE": st.one_of(
        st.sampled_from([0.1, 0.2, 0.3, 1e16, -1e16, 2.5e-8]),
        st.floats(-1e9, 1e9, allow_nan=False, allow_infinity=False),
    ),
    "STRING": st.sampled_from(["", "a", "b", "café", "zz", "Z"]),
    "BOOLEAN": st.booleans(),
    "DATE": st.dates(date(2000, 1, 1), date(2100, 12, 31)),
    "TIMESTAMP": st.datetimes(datetime(2001, 1, 1), datetime(2099, 1, 1), timezones=st.just(UTC)),
}
NUMBERS = ("SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE")
#: Types only ``count(f)`` takes.
COMPOUNDS: dict[str, st.SearchStrategy[Any]] = {
    "ARRAY<INT>": st.lists(st.integers(0, 9), max_size=3),
    "STRUCT<x: STRING>": st.fixed_dictionaries({"x": st.sampled_from(["p", "q"])}),
}
#: How an event's time (minutes after T0) is written, by the time field's declaration.
TIMES: dict[tuple[str, str], Callable[[float], Any]] = {
    ("TIMESTAMP", "ms"): lambda m: T0 + timedelta(minutes=m),
    ("BIGINT", "ms"): lambda m: T0_MS + round(m * 60_000),
    ("BIGINT", "s"): lambda m: T0_MS // 1000 + round(m * 60),
    ("INT", "s"): lambda m: T0_MS // 1000 + round(m * 60),
    ("BIGINT", "us"): lambda m: (T0_MS + round(m * 60_000)) * 1000,
}
KEY_TYPES: dict[str, Callable[[str], Any]] = {
    "STRING": lambda k: k,
    "INT": lambda k: KEYS.index(k) - 1,  # -1, 0, 1
    "BIGINT": lambda k: 2**40 + KEYS.index(k),
}


@st.composite
def random_shapes(draw: st.DrawFn) -> Shape:
    """A schema of random field types (a key and a time of every declarable kind, one to five
    other fields, each possibly null), aggregates of every function over fields they take, and
    how its records are made."""
    key_type = draw(st.sampled_from(sorted(KEY_TYPES)))
    time_type, unit = draw(st.sampled_from(sorted(TIMES)))
    types = draw(st.lists(st.sampled_from([*SCALARS, *COMPOUNDS]), min_size=1, max_size=5))
    names = [f"f{i}" for i in range(len(types))]
    fields = ", ".join(
        [
            f"k {key_type}",
            f"t {time_type}",
            *(f"{n} {t}" for n, t in zip(names, types, strict=True)),
        ]
    )
    aggregates = {"events": "count()"}
    for n, t in zip(names, types, strict=True):
        if t in COMPOUNDS:
            functions = ["count"]
        elif t in NUMBERS:
            functions = list(AGGREGATE_FUNCTIONS)
        else:
            functions = [f for f in AGGREGATE_FUNCTIONS if f not in ("sum", "avg")]
        for function in draw(st.lists(st.sampled_from(functions), min_size=1, unique=True)):
            aggregates[f"{function}_{n}"] = f"{function}({n})"
    strategies = {**SCALARS, **COMPOUNDS}
    values = st.fixed_dictionaries(
        {n: st.one_of(st.none(), strategies[t]) for n, t in zip(names, types, strict=True)}
    )
    schema = Schema(key="k", time="t", time_unit=unit, fields=fields)
    return Shape(
        f"random<{fields}>",
        schema,
        aggregates,
        values,
        TIMES[(time_type, unit)],
        KEY_TYPES[key_type],
    )


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_for_any_schema_and_batching_within_lateness_the_aggregates_are_the_batch_computation(
    data: st.DataObject,
) -> None:
    shape = data.draw(random_shapes())
    events = data.draw(events_of(shape, max_size=30))
    out = feed(
        make_tester(shape, allowed_lateness=ALL_WITHIN),
        shape,
        batches_of(events, data.draw(batch_sizes)),
    )
    assert [o for o in out if o.kind != "session"] == []
    expected = [summary(shape, s) for s in gap_sessions(events)]
    expected = [(str(shape.key_of(e[0])), *e[1:]) for e in expected]  # the tester keys by text
    assert sorted_summaries([summary_of(s) for s in final_sessions(out)]) == sorted_summaries(
        expected
    )
