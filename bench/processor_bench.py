"""Issue 39's benchmark, one script, the same files for every side: what a keyed processor in
Python costs.

  (guard)    the payment alert (``examples/alerts.py``) as raw PySpark ``transformWithState``
             (a plain ``StatefulProcessor``: a list state of the last five amounts, no
             deadline, no caps, no dead letters) against ``keyed_process`` with the same logic
             under streamwarden's guard: the guard's overhead;
  (sessions) a sessions-like processor written as a ``KeyedProcessor`` (per account: a gap of
             20 minutes, a running count and total, emitted when the gap passes, by timer)
             against the Java engine's ``sessionize`` with ``count()`` and ``sum(amount)``:
             what Python logic costs against the engine.

Each variant is a streaming query over the same JSON-lines files of card payments (typed by a
schema), started with ``trigger(availableNow=True)`` on a fresh checkpoint, written to Spark's
``noop`` sink; timed from start to end, throughput = events / seconds. ``--rounds`` rounds,
the variants interleaved in each round (so drift hits each side alike); the first round warms
the JVM and the Python workers and is reported but left out of the medians. After the timed
rounds, one more run of each to Spark's memory sink checks what they computed: the raw and the
guarded alerts must be the same rows; the sessions sides' rows (and any dead letters) are
counted. Results: bench/out/processor39.json (and a copy under bench/results/).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql.streaming.stateful_processor import StatefulProcessor

from streamwarden import KeyedProcessor, ValueState, keyed_process, sessionize
from streamwarden.spark.session import build_spark_session

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "examples"))
from alerts import BigPaymentAlert  # noqa: E402

DATA = HERE / "data" / "processor39"
OUT = HERE / "out"
RESULTS = HERE / "results"
FIELDS = "account STRING, at TIMESTAMP, amount DOUBLE"
START = datetime(2026, 1, 1, tzinfo=UTC)
GAP = timedelta(minutes=20)


def payments(events: int, accounts: int, files: int) -> Path:
    """``events`` payments of ``accounts`` accounts over a day, in time order, in ``files``
    files; written once."""
    folder = DATA / f"payments-{events}-{accounts}"
    if (folder / "done").exists():
        return folder / "landing"
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "landing").mkdir(parents=True)
    rng = random.Random(39)
    step = timedelta(days=1) / events
    per_file = -(-events // files)
    for f in range(files):
        lines = []
        for i in range(f * per_file, min(events, (f + 1) * per_file)):
            at = START + step * i
            lines.append(
                json.dumps(
                    {
                        "account": f"acct-{rng.randrange(accounts):06d}",
                        "at": at.isoformat().replace("+00:00", "Z"),
                        "amount": round(rng.lognormvariate(3.0, 1.2), 2),
                    }
                )
            )
        (folder / "landing" / f"part-{f:04d}.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "done").write_text("ok")
    return folder / "landing"


# -- the raw transformWithState side of (guard) -------------------------------------------------
class RawAlert(StatefulProcessor):
    """The alert rule on PySpark's own API: no deadline, no cap but the five, no dead letters."""

    def init(self, handle: Any) -> None:
        self.last = handle.getListState("last", "amount DOUBLE")

    def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any) -> Iterator[Row]:
        amounts = [r[0] for r in self.last.get()]
        for e in sorted(rows, key=lambda r: r.at):
            if len(amounts) == 5 and e.amount > 10 * (sum(amounts) / 5):
                yield Row(account=key[0], at=e.at, amount=e.amount, mean_before=sum(amounts) / 5)
            amounts = [*amounts, e.amount][-5:]
        self.last.put([(a,) for a in amounts])

    def close(self) -> None:
        pass


# -- the sessions-like processor of (sessions) ---------------------------------------------------
class PySessions(KeyedProcessor):
    """Gap sessions with a count and a total, emitted by timer once the gap has passed (times
    kept in epoch ms)."""

    output = "account STRING, session_start TIMESTAMP, events BIGINT, total DOUBLE"
    session = ValueState(
        "start_ms BIGINT, last_ms BIGINT, events BIGINT, total DOUBLE", expire_after=2 * GAP
    )

    def process(self, key, events, ctx):
        for e in events:
            at = int(e.at.timestamp() * 1000)
            s = self.session.get()
            if s is not None and at - s.last_ms >= GAP_MS:
                ctx.emit(
                    account=key, session_start=_time(s.start_ms), events=s.events, total=s.total
                )
                s = None
            if s is None:
                self.session.set((at, at, 1, e.amount))
            else:
                self.session.set((s.start_ms, at, s.events + 1, s.total + e.amount))
            ctx.set_timer(at + GAP_MS)

    def on_timer(self, key, when, ctx):
        s = self.session.get()
        if s is not None and int(when.timestamp() * 1000) - s.last_ms >= GAP_MS:
            ctx.emit(account=key, session_start=_time(s.start_ms), events=s.events, total=s.total)
            self.session.clear()


GAP_MS = GAP // timedelta(milliseconds=1)


def _time(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def source(spark: SparkSession, landing: Path) -> DataFrame:
    return spark.readStream.schema(FIELDS).option("maxFilesPerTrigger", 4).json(str(landing))


def variants(spark: SparkSession, landing: Path) -> dict[str, Callable[[], DataFrame]]:
    def raw() -> DataFrame:
        events = source(spark, landing)
        events = events.withWatermark("at", "1 minute")
        return events.groupBy("account").transformWithState(
            RawAlert(),
            "account STRING, at TIMESTAMP, amount DOUBLE, mean_before DOUBLE",
            "Append",
            "EventTime",
        )

    def guarded() -> DataFrame:
        return keyed_process(
            source(spark, landing), key="account", time="at", processor=BigPaymentAlert()
        ).combined

    def py_sessions() -> DataFrame:
        return keyed_process(
            source(spark, landing), key="account", time="at", processor=PySessions()
        ).combined

    def java_sessions() -> DataFrame:
        return sessionize(
            source(spark, landing),
            key="account",
            time="at",
            gap=GAP,
            aggregates={"events": "count()", "total": "sum(amount)"},
        ).combined

    return {
        "raw_tws_alert": raw,
        "keyed_process_alert": guarded,
        "keyed_process_sessions": py_sessions,
        "java_sessionize": java_sessions,
    }


def timed(spark: SparkSession, build: Callable[[], DataFrame], checkpoint: Path) -> float:
    shutil.rmtree(checkpoint, ignore_errors=True)
    frame = build()
    started = time.perf_counter()
    query = (
        frame.writeStream.format("noop")
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    seconds = time.perf_counter() - started
    if query.exception() is not None:
        raise RuntimeError(str(query.exception()))
    return seconds


def verify(spark: SparkSession, landing: Path) -> dict[str, Any]:
    """One more run of each variant, to Spark's memory sink: the raw and guarded alerts must be
    the same rows, and the sessions sides' rows are counted (what the timed runs computed)."""
    out: dict[str, Any] = {}
    for name, build in variants(spark, landing).items():
        checkpoint = DATA / "checkpoints" / f"verify-{name}"
        shutil.rmtree(checkpoint, ignore_errors=True)
        query = (
            build()
            .writeStream.format("memory")
            .queryName(f"verify_{name}")
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()
        rows = spark.table(f"verify_{name}")
        if "_sw_kind" in rows.columns:
            kinds = {r[0]: r[1] for r in rows.groupBy("_sw_kind").count().collect()}
            reasons = rows.where("_sw_kind = 'dead_letter'").groupBy("_sw_reason").count()
            out[name] = {
                "kinds": kinds,
                "dead_letters": {r[0]: r[1] for r in reasons.collect()},
            }
            rows = rows.where("_sw_kind = 'output'")
        out.setdefault(name, {})["output_rows"] = rows.count()
    alerts = [
        sorted((tuple(r) for r in _outputs(spark.table(f"verify_{n}")).collect()), key=repr)
        for n in ("raw_tws_alert", "keyed_process_alert")
    ]
    out["alerts_equal"] = alerts[0] == alerts[1] and all(alerts)
    return out


def _outputs(rows: DataFrame) -> DataFrame:
    """An alert side's output rows (a guard's combined output holds its dead letters too)."""
    if "_sw_kind" in rows.columns:
        rows = rows.where("_sw_kind = 'output'")
    return rows.select("account", "at", "amount", "mean_before")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--accounts", type=int, default=5_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    landing = payments(args.events, args.accounts, args.files)
    spark = build_spark_session(app_name="processor-bench", shuffle_partitions=2)
    spark.sparkContext.setLogLevel("ERROR")
    runs: dict[str, list[float]] = {}
    work = DATA / "checkpoints"
    for r in range(args.rounds):
        for name, build in variants(spark, landing).items():
            seconds = timed(spark, build, work / name)
            runs.setdefault(name, []).append(seconds)
            print(f"round {r + 1} {name}: {seconds:.1f} s, {args.events / seconds:,.0f} ev/s")
    warm = {n: s[1:] if len(s) > 1 else s for n, s in runs.items()}
    medians = {n: statistics.median(s) for n, s in warm.items()}
    result: dict[str, Any] = {
        "events": args.events,
        "accounts": args.accounts,
        "files": args.files,
        "rounds": args.rounds,
        "seconds": runs,
        "median_seconds_warm": medians,
        "events_per_second_warm": {n: args.events / s for n, s in medians.items()},
        "spread_warm": {n: (min(s), max(s)) for n, s in warm.items()},
        "guard_overhead": medians["keyed_process_alert"] / medians["raw_tws_alert"] - 1,
        "python_sessions_vs_java": medians["keyed_process_sessions"] / medians["java_sessionize"],
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "processor39.json").write_text(json.dumps(result, indent=2))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "processor39.json").write_text(json.dumps(result, indent=2))
    print(json.dumps({k: v for k, v in result.items() if k != "seconds"}, indent=2))
    result["verified"] = verify(spark, landing)
    print(json.dumps(result["verified"], indent=2, default=str))
    (OUT / "processor39.json").write_text(json.dumps(result, indent=2, default=str))
    (RESULTS / "processor39.json").write_text(json.dumps(result, indent=2, default=str))


if __name__ == "__main__":
    main()
