"""``run_query``: a query built in Python with ``sessionize`` or ``detect`` gets what a config's
pipeline gets: the drain that closes the last sessions of a finite input, idle ticks that close
them in a continuous run, and the exactly-once writer to the configured sinks."""

from __future__ import annotations

import _thread
import json
import threading
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from streamwarden import (
    Pattern,
    PatternOptions,
    aggregate_windows,
    detect,
    interval_join,
    run_query,
    sessionize,
)
from streamwarden.errors import ConfigError, UsageError
from streamwarden.pipeline.outputs import read_output
from tests.support import minutes, write_batches

pytestmark = pytest.mark.spark

FIELDS = "account STRING, at TIMESTAMP, amount DOUBLE"
GAP = timedelta(minutes=20)


def payment(account: str | None, at_minutes: float, amount: float) -> str:
    at = datetime.fromtimestamp(minutes(at_minutes) / 1000, UTC).isoformat()
    return json.dumps({"account": account, "at": at, "amount": amount})


def payments(spark: Any, landing: Path) -> Any:
    return spark.readStream.schema(FIELDS).option("maxFilesPerTrigger", 1).json(str(landing))


def totals(spark: Any, landing: Path, **extra: Any) -> Any:
    return sessionize(
        payments(spark, landing),
        key="account",
        time="at",
        gap=GAP,
        aggregates={"total": "sum(amount)", **extra},
        max_out_of_orderness=timedelta(minutes=1),
        allowed_lateness=timedelta(minutes=5),
    )


def sinks(root: Path, *outputs: str) -> dict[str, dict[str, str]]:
    return {name: {"path": str(root / "out" / name)} for name in outputs}


def expected_sessions(records: list[tuple[str, float, float]]) -> dict[str, list[float]]:
    """Each account's session totals, in time order (batch computation of the gap rule)."""
    by_account: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for account, at, amount in records:
        by_account[account].append((at, amount))
    out: dict[str, list[float]] = {}
    for account, events in by_account.items():
        events.sort()
        sessions: list[float] = []
        last = None
        for at, amount in events:
            if last is None or at - last >= GAP.total_seconds() / 60:
                sessions.append(0.0)
            sessions[-1] += amount
            last = at
        out[account] = sessions
    return out


# 60 accounts, three payments each, the third 30 minutes after the second: two sessions per
# account, the last of which only closes when event time moves past it.
RECORDS = [
    (f"acct-{i:02d}", i * 0.5 + step, float(i + step)) for i in range(60) for step in (0, 5, 35)
]


@pytest.fixture(scope="module")
def drained(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("run_query")
    # in event-time order: nothing is late
    lines = [payment(a, at, amount) for a, at, amount in sorted(RECORDS, key=lambda r: r[1])]
    write_batches(root / "landing", [lines[:90], lines[90:], [payment(None, 3, 1.0)]])
    first = run_query(
        totals(spark, root / "landing"),
        checkpoint=root / "ck",
        sinks=sinks(root, "sessions", "dead_letters"),
        once=True,
    )
    second = run_query(
        totals(spark, root / "landing"),
        checkpoint=root / "ck",
        sinks=sinks(root, "sessions", "dead_letters"),
        once=True,
        drain=True,
    )
    return {"root": root, "first": first, "second": second}


def test_a_drained_python_query_closes_every_last_session_with_its_aggregates(spark, drained):
    rows = read_output(spark, drained["root"] / "out" / "sessions").collect()
    got: dict[str, list[float]] = defaultdict(list)
    for row in sorted(rows, key=lambda r: (r.account, r.session_start)):
        got[row.account].append(row.total)
    assert dict(got) == expected_sessions(RECORDS)
    assert len(rows) == 120  # one revision each: every last session closed, none doubled


def test_a_drained_python_query_leaves_no_state(drained):
    state = drained["second"].progress[-1]["stateOperators"][0]["numRowsTotal"]
    assert state == 0


def test_a_record_without_a_key_is_a_dead_letter_of_the_run(spark, drained):
    rows = read_output(spark, drained["root"] / "out" / "dead_letters").collect()
    assert [(r.reason, r.detail) for r in rows] == [("missing_field", "the key 'account' is null")]


def test_a_second_run_writes_each_batch_once(drained):
    first, second = drained["first"], drained["second"]
    ids = [p["batchId"] for p in first.progress] + [p["batchId"] for p in second.progress]
    assert len(ids) == len(set(ids))  # the second run went on from the first's checkpoint
    sessions = sum(s.output_counts()["sessions"] for s in first.batches + second.batches)
    assert sessions == 120


def test_a_query_of_other_aggregates_is_refused_on_the_checkpoint(spark, drained):
    root = drained["root"]
    other = totals(spark, root / "landing", largest="max(amount)")
    with pytest.raises(ConfigError, match="holds the state of another query"):
        run_query(
            other, checkpoint=root / "ck", sinks=sinks(root, "sessions", "dead_letters"), once=True
        )


class _Closed(Exception):
    """Raised from the progress callback once the state is empty: ends the continuous run."""


def test_a_continuous_python_query_closes_sessions_of_a_quiet_input(spark, tmp_path):
    write_batches(tmp_path / "landing", [[payment("a", 0, 1.0), payment("b", 5, 2.0)]])
    started = time.monotonic()
    state_rows: list[int] = []

    def watch(progress: dict[str, Any], _stats: Any) -> None:
        state_rows.append(int(progress["stateOperators"][0]["numRowsTotal"]))
        if state_rows[-1] == 0 and max(state_rows) > 0:
            raise _Closed

    guard = threading.Timer(300, _thread.interrupt_main)  # should the ticks never come
    guard.start()
    try:
        with pytest.raises(_Closed):
            run_query(
                totals(spark, tmp_path / "landing"),
                checkpoint=tmp_path / "ck",
                sinks=sinks(tmp_path, "sessions", "dead_letters"),
                idle_timeout=timedelta(minutes=10),
                trigger_interval=timedelta(milliseconds=500),
                on_progress=watch,
                # an hour of processing time per second of wall time
                now_ms=lambda: int((time.monotonic() - started) * 3_600_000),
            )
    finally:
        guard.cancel()
    rows = read_output(spark, tmp_path / "out" / "sessions").collect()
    assert sorted((r.account, r.total) for r in rows) == [("a", 1.0), ("b", 2.0)]


def test_a_drained_detect_query_writes_its_matches_and_expires_the_rest(spark, tmp_path):
    # a: small then large within 10 minutes (a match); b: small only (a partial that expires)
    write_batches(
        tmp_path / "landing",
        [[payment("a", 0, 1.0), payment("b", 1, 2.0), payment("a", 4, 500.0)]],
    )
    pattern = (
        Pattern.begin("small")
        .where(F.col("amount") < 10)
        .followed_by("large")
        .where(F.col("amount") > 100)
        .within(timedelta(minutes=10))
    )
    result = detect(
        payments(spark, tmp_path / "landing"),
        pattern,
        key="account",
        time="at",
        fields=["amount"],
        options=PatternOptions(max_out_of_orderness=timedelta(minutes=1), emit_timeouts=True),
    )
    run = run_query(
        result,
        checkpoint=tmp_path / "ck",
        sinks=sinks(tmp_path, "matches", "timeouts", "dead_letters"),
        once=True,
        drain=True,
    )
    matches = read_output(spark, tmp_path / "out" / "matches").collect()
    timeouts = read_output(spark, tmp_path / "out" / "timeouts").collect()
    assert [(m.key, [e.amount for e in m.events]) for m in matches] == [("a", [1.0, 500.0])]
    assert [t.key for t in timeouts] == ["b"]
    assert run.progress[-1]["stateOperators"][0]["numRowsTotal"] == 0
    assert sum(b.events for b in run.batches) == 3  # the ticks are not counted as events


@pytest.fixture
def query(spark: Any, tmp_path: Path) -> Any:
    """A sessions query over a landing folder with nothing in it yet."""
    (tmp_path / "landing").mkdir()
    return totals(spark, tmp_path / "landing")


def test_a_sink_that_is_not_an_output_of_the_query_is_refused(query, tmp_path):
    with pytest.raises(ConfigError, match="'matches' is not an output of a sessions query"):
        run_query(
            query,
            checkpoint=tmp_path / "ck",
            sinks=sinks(tmp_path, "matches", "sessions", "dead_letters"),
        )


def test_a_query_without_a_dead_letter_sink_is_refused(query, tmp_path):
    with pytest.raises(ConfigError, match="needs a sink for 'dead_letters'"):
        run_query(query, checkpoint=tmp_path / "ck", sinks=sinks(tmp_path, "sessions"))


def test_a_sink_setting_of_another_kind_is_refused_as_in_a_config(query, tmp_path):
    given = sinks(tmp_path, "sessions", "dead_letters")
    given["sessions"]["topic"] = "sessions"
    with pytest.raises(ConfigError, match=r"sinks\.sessions\.topic is not a setting of kind"):
        run_query(query, checkpoint=tmp_path / "ck", sinks=given)


def test_a_dataframe_is_not_a_query(query, tmp_path):
    with pytest.raises(UsageError, match=r"give what streamwarden\.sessionize or"):
        run_query(
            query.combined,
            checkpoint=tmp_path / "ck",
            sinks=sinks(tmp_path, "sessions", "dead_letters"),
        )


def test_a_drained_windows_query_writes_each_window_once_with_its_aggregates(spark, tmp_path):
    write_batches(
        tmp_path / "landing",
        [
            [payment("a", 0.5, 1.0), payment("b", 0.7, 2.0), payment("a", 1.2, 4.0)],
            [payment("a", 1.9, 8.0), payment(None, 2.0, 1.0)],
        ],
    )
    result = aggregate_windows(
        payments(spark, tmp_path / "landing"),
        by=["account"],
        time="at",
        size=timedelta(minutes=1),
        aggregates={"payments": "count()", "total": "sum(amount)"},
        max_out_of_orderness=timedelta(0),
    )
    run = run_query(
        result,
        checkpoint=tmp_path / "ck",
        sinks=sinks(tmp_path, "windows", "dead_letters"),
        once=True,
        drain=True,
    )
    windows = read_output(spark, tmp_path / "out" / "windows").collect()
    got = sorted((str(w.account), w.window_start.minute, w.payments, w.total) for w in windows)
    # a payment without an account is a group of its own, as in SQL's GROUP BY
    assert got == [("None", 2, 1, 1.0), ("a", 0, 1, 1.0), ("a", 1, 2, 12.0), ("b", 0, 1, 2.0)]
    assert read_output(spark, tmp_path / "out" / "dead_letters") is None
    assert run.progress[-1]["stateOperators"][0]["numRowsTotal"] == 0


def test_windows_whose_slide_does_not_divide_their_size_are_refused_in_one_line(spark, tmp_path):
    with pytest.raises(UsageError, match=r"must divide windows\.size"):
        aggregate_windows(
            payments(spark, tmp_path),
            by="account",
            time="at",
            size=timedelta(minutes=1),
            slide=timedelta(seconds=25),
        )


def test_a_drained_interval_join_writes_the_pairs_and_each_unmatched_left_row(spark, tmp_path):
    write_batches(
        tmp_path / "payments",
        [[payment("a", 0, 10.0), payment("b", 1, 20.0)], [payment("c", 30, 30.0)]],
    )
    write_batches(tmp_path / "refunds", [[payment("a", 5, -10.0)], [payment("c", 50, -1.0)]])
    result = interval_join(
        payments(spark, tmp_path / "payments"),
        payments(spark, tmp_path / "refunds"),
        on="account",
        time="at",
        between=(timedelta(0), timedelta(minutes=10)),
        type="left_outer",
        names=("payments", "refunds"),
        max_out_of_orderness=timedelta(0),
        allowed_lateness=timedelta(minutes=1),
    )
    run = run_query(
        result,
        checkpoint=tmp_path / "ck",
        sinks=sinks(tmp_path, "joined", "dead_letters"),
        once=True,
        drain=True,
    )
    joined = read_output(spark, tmp_path / "out" / "joined").collect()
    got = sorted((j.payments_account, j.payments_amount, j.refunds_amount) for j in joined)
    # c's refund is 20 minutes after its payment: outside the bound, c is written unmatched
    assert got == [("a", 10.0, -10.0), ("b", 20.0, None), ("c", 30.0, None)]
    assert run.progress[-1]["stateOperators"][0]["numRowsTotal"] == 0
