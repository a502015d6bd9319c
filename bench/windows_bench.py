"""Issue 40's benchmark, one script, the same files for every side: windowed aggregation.

Per merchant, 1-minute tumbling windows on event time, ``count()`` and ``sum(amount)``, over
JSON-lines card payments (``account STRING, merchant STRING, at BIGINT`` epoch ms, ``amount
DOUBLE``) in near time order with a known share of late events, at 1k and 1M merchants:

  (w)  streamwarden: ``Pipeline(config).run(once=True, drain=True)`` of an ``operator =
       "windows"`` config, ``emit = "final"``, ``allowed_lateness = "2m"``,
       ``max_out_of_orderness = "1m"`` (the watermark delay), windows and dead letters written
       to Parquet exactly once;
  (s)  Spark: ``readStream.schema(...).json(dir)``, ``withWatermark("ts", "1 minute")``,
       ``groupBy(window("ts", "1 minute"), "merchant").agg(count, sum)``, append mode to
       Parquet, ``trigger(availableNow=True)``: the same watermark as (w);
  (s+) the same with ``withWatermark("ts", "3 minutes")``: (w)'s rule (Spark has no lateness
       apart from the delay: (w) admits an event while its window's end + lateness is after the
       watermark, Spark while the end is, so delay 1m + lateness 2m = delay 3m), and each window
       written at the same watermark; but Spark (since 3.4) judges a batch's late events by the
       previous batch's watermark, (w) by the batch's own, so Spark admits more;
  (f)  Flink SQL: a ``TUMBLE`` window TVF with the watermark delay of (w) (no lateness: Flink
       SQL's window TVF has none), RocksDB state, through PyFlink (``bench/flink_windows.py``
       in ``.venv-flink``, made by ``bench/setup_flink.sh``), the files read one after the
       other.

Every Spark side reads ``--files-per-trigger`` files per micro-batch, on the same session
(RocksDB state store, ``local[2]``, the same shuffle partitions), timed from the query's start
to its end (the pipeline: its whole run, drain included); events/s = input events / seconds.
``--rounds`` rounds, the Spark sides interleaved in each round; round 1 warms the JVM up and is
reported but left out of the medians. Flink runs after the Spark rounds, each data set in one
process that runs the job ``--rounds`` times (the first a warm-up too).

Reported per run: windows written, events in them, late events dead-lettered (w: ``too_late``)
or dropped (Spark: input - events in windows, beside Spark's own ``numRowsDroppedByWatermark``,
which counts rows after the partial aggregation, not events; Flink: input - events in windows),
the largest ``numRowsTotal`` of the state over the batches, and the JVM's CPU seconds, beside
each side's late events by a simulation of the micro-batch watermark over the files. The data
(generated once under bench/data/windows40/) ends with one sentinel event an hour after the last,
in its own file, so that Spark's watermark closes every window of the data; its own window is
left out of every count. Results: bench/out/windows40.json and a summary in
bench/results/windows40.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from streamwarden.config import parse_config
from streamwarden.pipeline import Pipeline
from streamwarden.spark.session import build_spark_session

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "windows40"
OUT = HERE / "out"
RESULTS = HERE / "results"
WORK = Path("/dev/shm") / "windows40-bench"
FIELDS = "account STRING, merchant STRING, at BIGINT, amount DOUBLE"
T0_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
MIN_MS = 60_000
SIZE_MS = MIN_MS
SENTINEL = "zz-end-of-input"
DATA_VERSION = 2
#: Each side's late events as the simulation of the micro-batch watermark counts them.
EXPECTED = {"w": "expected_too_late_w", "s": "expected_dropped_s", "s+": "expected_dropped_s_plus"}


def window_end(at: int) -> int:
    return at - at % SIZE_MS + SIZE_MS


def dataset(args: argparse.Namespace, groups: int) -> tuple[Path, dict[str, Any]]:
    """``args.events`` payments at ``groups`` merchants over ``args.minutes`` minutes of event
    time, in ``args.files`` files in time order, each event 0-2 s behind its place in time and
    ``args.late_share`` of them 0 to ``args.late_minutes`` minutes behind; then a file with the
    sentinel. Written once; returns the landing folder and what the generator knows of it."""
    folder = DATA / f"payments-{args.events}-{groups}-{args.files}"
    meta_file = folder / "meta.json"
    if meta_file.exists():
        meta = json.loads(meta_file.read_text())
        if meta.get("version") == DATA_VERSION:
            return folder / "landing", meta
    shutil.rmtree(folder, ignore_errors=True)
    landing = folder / "landing"
    landing.mkdir(parents=True)
    rng = random.Random(40 + groups)
    step = args.minutes * MIN_MS / args.events
    per_file = -(-args.events // args.files)
    width = len(str(groups - 1))
    batches: list[list[int]] = []
    late = 0
    for f in range(args.files):
        lines, times = [], []
        for i in range(f * per_file, min(args.events, (f + 1) * per_file)):
            at = T0_MS + int(i * step) - rng.randrange(2000)
            if rng.random() < args.late_share:
                at -= rng.randrange(args.late_minutes * MIN_MS)
                late += 1
            times.append(at)
            lines.append(
                f'{{"account":"a{rng.randrange(100_000):06d}",'
                f'"merchant":"m{rng.randrange(groups):0{width}d}",'
                f'"at":{at},"amount":{rng.randrange(100, 50_000) / 100}}}'
            )
        (landing / f"part-{f:04d}.jsonl").write_text("\n".join(lines) + "\n")
        batches.append(times)
    last = max(max(b) for b in batches)
    sentinel = {"account": "a-end", "merchant": SENTINEL, "at": last + 3_600_000, "amount": 0.0}
    (landing / f"part-{args.files:04d}.jsonl").write_text(json.dumps(sentinel) + "\n")
    batches.append([sentinel["at"]])
    base = {"delay_ms": args.delay_seconds * 1000}
    meta = {
        "version": DATA_VERSION,
        "events": args.events,
        "input_lines": args.events + 1,
        "groups": groups,
        "files": args.files + 1,
        "minutes": args.minutes,
        "late_share": args.late_share,
        "late_minutes": args.late_minutes,
        "late_events_generated": late,
        "bytes": sum(p.stat().st_size for p in landing.iterdir()),
        # What the micro-batch watermark of one file per batch lets in (see expected_late).
        "expected_too_late_w": expected_late(
            batches, lateness_ms=args.lateness_seconds * 1000, lag=1, **base
        ),
        "expected_dropped_s": expected_late(batches, lateness_ms=0, lag=2, **base),
        "expected_dropped_s_plus": expected_late(
            batches,
            delay_ms=(args.delay_seconds + args.lateness_seconds) * 1000,
            lateness_ms=0,
            lag=2,
        ),
        # Spark's drops had it judged late events by the watermark the batch runs under.
        "dropped_s_plus_if_lag_1": expected_late(
            batches,
            delay_ms=(args.delay_seconds + args.lateness_seconds) * 1000,
            lateness_ms=0,
            lag=1,
        ),
    }
    meta_file.write_text(json.dumps(meta, indent=2))
    return landing, meta


def expected_late(batches: list[list[int]], delay_ms: int, lateness_ms: int, lag: int) -> int:
    """Events behind the watermark with one file per micro-batch: batch N is judged against the
    largest event time of batches 0..N-``lag``, less ``delay_ms``, and an event is late when its
    window's end + ``lateness_ms`` is at or before that watermark. streamwarden's ``too_late``
    takes the watermark the batch runs under (``lag`` 1); Spark's window aggregation drops late
    events by the watermark of the batch before (``lag`` 2: since Spark 3.4 the late-event
    watermark is the previous batch's eviction watermark) with ``lateness_ms`` 0."""
    late, tops = 0, []
    for n, times in enumerate(batches):
        if n - lag >= 0:
            watermark = max(tops[: n - lag + 1]) - delay_ms
            late += sum(1 for at in times if window_end(at) + lateness_ms <= watermark)
        tops.append(max(times))
    return late


def jvm_cpu_seconds(spark: SparkSession) -> float:
    """CPU seconds (user + system) the Spark JVM has used so far, from /proc."""
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def max_state_rows(progress: list[dict[str, Any]]) -> int:
    """The largest state (rows of every stateful operator) at the end of any batch."""
    return max(
        (
            sum(int(op.get("numRowsTotal", 0)) for op in p.get("stateOperators", []))
            for p in progress
        ),
        default=0,
    )


def per_batch(progress: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each batch's input rows, time in ``addBatch`` and state operator figures (bench/out
    only: where the time goes)."""
    return [
        {
            "batch": p["batchId"],
            "rows": p["numInputRows"],
            "add_batch_ms": p.get("durationMs", {}).get("addBatch"),
            "state": [
                {
                    k: v
                    for k, v in {**op, **op.get("customMetrics", {})}.items()
                    if isinstance(v, int | float) and v
                }
                for op in p.get("stateOperators", [])
            ],
        }
        for p in progress
    ]


def run_windows(spark: SparkSession, landing: Path, work: Path, args: argparse.Namespace) -> dict:
    """(w): the streamwarden pipeline of ``operator = "windows"``."""
    config = parse_config(
        {
            "name": "windows-bench",
            "operator": "windows",
            "schema": {"key": "account", "time": "at", "fields": FIELDS},
            "source": {"path": str(landing), "max_files_per_trigger": args.files_per_trigger},
            "windows": {
                "size": "1m",
                "by": ["merchant"],
                "allowed_lateness": f"{args.lateness_seconds}s",
                "emit": "final",
                "max_out_of_orderness": f"{args.delay_seconds}s",
                "aggregates": {"payments": "count()", "total": "sum(amount)"},
            },
            "sinks": {
                "windows": {"path": str(work / "windows")},
                "dead_letters": {"path": str(work / "dead_letters")},
            },
            "checkpoint": {"path": str(work / "checkpoint")},
            "spark": {"shuffle_partitions": args.shuffle_partitions},
            "monitoring": {"prometheus_port": "off"},
        },
        origin="bench",
    )
    cpu = jvm_cpu_seconds(spark)
    start = time.perf_counter()
    result = Pipeline(config, spark).run(once=True, drain=True)
    seconds = time.perf_counter() - start
    cpu = jvm_cpu_seconds(spark) - cpu
    dead: dict[str, int] = {}
    for b in result.batches:
        for reason, n in b.dead_letters.items():
            dead[reason] = dead.get(reason, 0) + n
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "batches": result.batch_count,
        # The sentinel's window, closed by the drain, is left out.
        "windows": sum(b.windows for b in result.batches) - 1,
        "events_in_windows": sum(b.window_events for b in result.batches) - 1,
        "late": dead.get("too_late", 0),
        "dead_letters": dead,
        "max_state_rows": max_state_rows(result.progress),
        "per_batch": per_batch(result.progress),
    }


def run_spark(
    spark: SparkSession, landing: Path, work: Path, args: argparse.Namespace, delay_s: int
) -> dict:
    """(s)/(s+): Spark's window aggregation with a watermark delay of ``delay_s``."""
    events = (
        spark.readStream.schema(FIELDS)
        .option("maxFilesPerTrigger", args.files_per_trigger)
        .json(str(landing))
    )
    windows = (
        events.withColumn("ts", F.timestamp_millis("at"))
        .withWatermark("ts", f"{delay_s} seconds")
        .groupBy(F.window("ts", "1 minute"), "merchant")
        .agg(F.count("*").alias("payments"), F.sum("amount").alias("total"))
        .select(
            "merchant",
            F.col("window.start").alias("window_start"),
            F.col("window.end").alias("window_end"),
            "payments",
            "total",
        )
    )
    writer = (
        windows.writeStream.format("parquet")
        .option("path", str(work / "windows"))
        .option("checkpointLocation", str(work / "checkpoint"))
        .outputMode("append")
        .trigger(availableNow=True)
    )
    cpu = jvm_cpu_seconds(spark)
    start = time.perf_counter()
    query = writer.start()
    query.awaitTermination()
    seconds = time.perf_counter() - start
    cpu = jvm_cpu_seconds(spark) - cpu
    if query.exception():
        raise RuntimeError(str(query.exception()))
    progress = list(query.recentProgress)
    out = spark.read.parquet(str(work / "windows"))
    row = out.agg(F.count("*").alias("n"), F.sum("payments").alias("e")).collect()[0]
    dropped_rows = sum(
        int(op.get("numRowsDroppedByWatermark", 0))
        for p in progress
        for op in p.get("stateOperators", [])
    )
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "batches": len(progress),
        "windows": int(row["n"]),  # the sentinel's window stays in the state
        "events_in_windows": int(row["e"] or 0),
        "num_rows_dropped_by_watermark": dropped_rows,
        "max_state_rows": max_state_rows(progress),
        "per_batch": per_batch(progress),
    }


def run_flink(landing: Path, args: argparse.Namespace) -> list[dict]:
    """(f): ``bench/flink_windows.py`` in the PyFlink venv, ``args.rounds`` jobs in one JVM."""
    python = HERE.parent / ".venv-flink" / "bin" / "python"
    command = [
        str(python),
        str(HERE / "flink_windows.py"),
        "--input",
        str(landing),
        "--state",
        "rocksdb",
        "--parallelism",
        "2",
        "--out-of-orderness-seconds",
        str(args.delay_seconds),
        "--repeat",
        str(args.rounds),
        "--managed-memory",
        args.flink_managed_memory,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=args.flink_timeout)
    if done.returncode != 0:
        return [{"error": done.stderr[-3000:]}]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    runs = []
    for r in report["runs"]:
        runs.append(
            {
                "seconds": r["seconds_job_wall"],
                "seconds_net": r["seconds_net"],
                "cpu_seconds": r["cpu_seconds"],
                "windows": r["windows"] - 1,  # the sentinel's, fired by the end of input
                "events_in_windows": r["events"] - 1,
                "max_state_rows": None,
            }
        )
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--groups", default="1000,1000000", help="comma-separated merchants")
    parser.add_argument("--minutes", type=int, default=40, help="event time the data spans")
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--files-per-trigger", type=int, default=1)
    parser.add_argument("--late-share", type=float, default=0.01)
    parser.add_argument("--late-minutes", type=int, default=10)
    parser.add_argument("--delay-seconds", type=int, default=60, help="watermark delay")
    parser.add_argument("--lateness-seconds", type=int, default=120, help="(w)'s lateness")
    parser.add_argument("--shuffle-partitions", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sides", default="w,s,s+,f", help="comma-separated of w, s, s+, f")
    parser.add_argument("--flink-managed-memory", default="1g")
    parser.add_argument("--flink-timeout", type=int, default=1800)
    parser.add_argument("--generate-only", action="store_true")
    parser.add_argument(
        "--name", default="windows40", help="bench/out/NAME.json, bench/results/NAME.json"
    )
    args = parser.parse_args()
    sides = [s.strip() for s in args.sides.split(",")]
    data = {int(g): dataset(args, int(g)) for g in args.groups.split(",")}
    for groups, (landing, meta) in data.items():
        print(f"{groups:,} groups: {landing} {json.dumps(meta)}", flush=True)
    if args.generate_only:
        return
    runs: list[dict[str, Any]] = []

    def record(side: str, groups: int, round_: int, run: dict[str, Any]) -> None:
        meta = data[groups][1]
        run = {"side": side, "groups": groups, "round": round_, **run}
        if "seconds" in run:
            run["events_per_s"] = meta["input_lines"] / run["seconds"]
            if side != "w" and "events_in_windows" in run:
                run["late"] = meta["events"] - run["events_in_windows"]
        runs.append(run)
        print(json.dumps({k: v for k, v in run.items() if k != "per_batch"}), flush=True)

    spark_sides = [s for s in sides if s != "f"]
    if spark_sides:
        spark = build_spark_session(
            app_name="windows-bench",
            shuffle_partitions=args.shuffle_partitions,
            extra_conf={"spark.driver.memory": "6g"},
        )
        spark.sparkContext.setLogLevel("ERROR")
        for round_ in range(1, args.rounds + 1):
            for groups, (landing, _) in data.items():
                for side in spark_sides:
                    work = WORK / f"{side}-{groups}"
                    shutil.rmtree(work, ignore_errors=True)
                    if side == "w":
                        run = run_windows(spark, landing, work, args)
                    else:
                        delay = args.delay_seconds
                        delay += args.lateness_seconds if side == "s+" else 0
                        run = run_spark(spark, landing, work, args, delay)
                    shutil.rmtree(work, ignore_errors=True)
                    record(side, groups, round_, run)
        spark.stop()
    if "f" in sides:
        for groups, (landing, _) in data.items():
            for i, run in enumerate(run_flink(landing, args), start=1):
                record("f", groups, i, run)
    save(args, data, runs)


def save(args: argparse.Namespace, data: dict, runs: list[dict[str, Any]]) -> None:
    """bench/out/NAME.json (every run, each batch) and bench/results/NAME.json (the summary)."""
    summary = []
    for groups, (_, meta) in data.items():
        for side in ("w", "s", "s+", "f"):
            mine = [r for r in runs if r["side"] == side and r["groups"] == groups]
            warm = [r for r in mine if r["round"] > 1 and "seconds" in r]
            if not warm:
                continue
            rates = [r["events_per_s"] for r in warm]
            last = warm[-1]
            summary.append(
                {
                    "side": side,
                    "groups": groups,
                    "seconds_all_rounds": [round(r.get("seconds", 0), 1) for r in mine],
                    "events_per_s_median_warm": round(statistics.median(rates)),
                    "events_per_s_warm_range": [round(min(rates)), round(max(rates))],
                    "cpu_seconds_warm": [round(r["cpu_seconds"], 1) for r in warm],
                    "windows": last["windows"],
                    "events_in_windows": last["events_in_windows"],
                    "late": last.get("late"),
                    "num_rows_dropped_by_watermark": last.get("num_rows_dropped_by_watermark"),
                    "max_state_rows": last.get("max_state_rows"),
                    "expected_late": meta.get(EXPECTED.get(side, ""), None),
                }
            )
    document = {
        "args": vars(args),
        "data": {g: meta for g, (_, meta) in data.items()},
        "summary": summary,
    }
    OUT.mkdir(exist_ok=True)
    RESULTS.mkdir(exist_ok=True)
    (OUT / f"{args.name}.json").write_text(json.dumps({**document, "runs": runs}, indent=2))
    (RESULTS / f"{args.name}.json").write_text(json.dumps(document, indent=2))
    print(
        "\n| side | groups | events/s median (warm range) | windows | events in | late |"
        " Spark dropped rows | max state rows |"
    )
    for s in summary:
        lo, hi = s["events_per_s_warm_range"]
        print(
            f"| {s['side']} | {s['groups']:,} | {s['events_per_s_median_warm']:,} ({lo:,}-{hi:,})"
            f" | {s['windows']:,} | {s['events_in_windows']:,} | {s['late']} "
            f"| {s['num_rows_dropped_by_watermark']} | {s['max_state_rows']} |"
        )


if __name__ == "__main__":
    sys.exit(main())
