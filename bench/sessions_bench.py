"""Sessions benchmark: streamwarden vs Spark's session_window vs Flink SQL, same files.

Run with ``make bench`` (or ``.venv/bin/python bench/sessions_bench.py``). It generates the data
set once (cached under bench/data), then measures, in this one process:

  (a) read + validate, no state: the ceiling of any sessionizer on this source
  (b) Spark's native session_window (streaming, append mode, RocksDB state), counting only
  (b=) the same, producing the session row (c) produces (id, start, end, count, bytes, urls)
  (c) streamwarden ``sessionize`` (same source, same trigger, same state store)
  (c+) the full streamwarden pipeline: (c) plus exactly-once parquet sinks
  (d) Flink SQL session windows through PyFlink, RocksDB and heap state (subprocess)

Throughput is events / wall time of the streaming query (Spark: from start to the end of an
availableNow run, excluding SparkSession start-up; Flink: from submitting the SQL to the last
result, excluding JVM start-up; its net job runtime is reported beside it).
Session counts of (b), (c) and (d) are cross-checked. Results go to bench/out/sessions.json
and are printed as a table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from streamwarden.config import parse_config
from streamwarden.local.examples.pageviews import PAGEVIEW_AGGREGATES, PAGEVIEW_SCHEMA
from streamwarden.local.generator import TrafficSpec, generate_traffic
from streamwarden.operators.sessions import SessionParams
from streamwarden.operators.sessions.api import sessionize_records
from streamwarden.pipeline import Pipeline
from streamwarden.schema import Schema
from streamwarden.spark.session import build_spark_session
from streamwarden.validation import validate_records
from streamwarden.validation.validate import IS_TICK, REASON, SIZE, TS_MS

HERE = Path(__file__).resolve().parent
GAP = timedelta(minutes=30)
DELAY = timedelta(minutes=1)
SENTINEL_USER = "zz-end-of-input"
#: The generated pageviews (epoch-millisecond ``ts``), as examples/pageviews.toml declares them.
SCHEMA = Schema(**PAGEVIEW_SCHEMA)


@dataclass
class Measured:
    name: str
    seconds: float
    sessions: int | None = None
    events_in_sessions: int | None = None
    extra: dict[str, Any] | None = None
    #: CPU seconds of the Spark JVM during the run (Spark runs only).
    cpu_seconds: float | None = None


def dataset(events: int, users: int, files: int) -> Path:
    """The generator's data set, plus one sentinel event two hours after the last one so that
    every engine closes every session by watermark (Flink also gets its end-of-input)."""
    spec = TrafficSpec(
        users=users,
        events=events,
        rate_per_second=users / 500,
        ts_format="millis",
        events_per_file=events // files,
        seed=2026,
    )
    path = HERE / "data" / f"sessions-{events}-{users}-{files}"
    if not (path / "_COMPLETE").exists():
        shutil.rmtree(path, ignore_errors=True)
        summary = generate_traffic(spec, path)
        last_ms = int(summary.last_event.timestamp() * 1000)
        sentinel = {
            "user_id": SENTINEL_USER,
            "ts": last_ms + 7_200_000,
            "page_number": 1,
            "url": "/end",
        }
        final = path / f"events-{len(summary.files):06d}.jsonl"
        final.write_text(json.dumps(sentinel) + "\n")
        mtime = summary.files[-1].stat().st_mtime + 1
        os.utime(final, (mtime, mtime))
        (path / "_COMPLETE").write_text(json.dumps(summary.to_json()))
    return path


def source(spark: SparkSession, path: Path, files_per_trigger: int) -> DataFrame:
    return (
        spark.readStream.option("maxFilesPerTrigger", files_per_trigger)
        .text(str(path))
        .select(F.col("value").alias("raw"))
    )


def jvm_cpu_seconds(spark: SparkSession) -> float:
    """CPU seconds (user + system) the Spark JVM has used so far, from /proc.

    On a machine shared with other jobs, wall time depends on the neighbours; the CPU time a
    run costs does much less, so the report gives both.
    """
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_query(frame: DataFrame, checkpoint: Path, on_batch=None) -> tuple[float, float, list[dict]]:
    """Runs ``frame`` to the end of its input; returns wall seconds, JVM CPU seconds and
    progress."""
    writer = frame.writeStream.option("checkpointLocation", str(checkpoint))
    writer = writer.foreachBatch(on_batch) if on_batch else writer.format("noop")
    cpu_start = jvm_cpu_seconds(frame.sparkSession)
    start = time.perf_counter()
    query = writer.trigger(availableNow=True).start()
    query.awaitTermination()
    seconds = time.perf_counter() - start
    cpu = jvm_cpu_seconds(frame.sparkSession) - cpu_start
    if query.exception():
        raise RuntimeError(str(query.exception()))
    return seconds, cpu, list(query.recentProgress)


class Totals:
    """foreachBatch sink that only counts: the same cheap sink for (b) and (c)."""

    def __init__(self, count_col: str, where: str | None = None) -> None:
        self.sessions = 0
        self.events = 0
        self.count_col = count_col
        self.where = where

    def __call__(self, frame: DataFrame, batch_id: int) -> None:
        if self.where:
            frame = frame.where(self.where)
        row = frame.agg(F.count("*").alias("n"), F.sum(self.count_col).alias("e")).collect()[0]
        self.sessions += int(row["n"])
        self.events += int(row["e"] or 0)


def valid_events(spark: SparkSession, path: Path, files_per_trigger: int) -> DataFrame:
    validated = validate_records(source(spark, path, files_per_trigger), SCHEMA)
    return validated.where(f"{REASON} is null and not {IS_TICK}")


def measure_ceiling(spark, path, work, fpt) -> Measured:
    seconds, cpu, _ = run_query(valid_events(spark, path, fpt), work / "a")
    return Measured("(a) read + validate, no state", seconds, cpu_seconds=cpu)


def measure_native(spark, path, work, fpt) -> Measured:
    events = valid_events(spark, path, fpt).select("user_id", F.timestamp_millis(TS_MS).alias("ts"))
    sessions = (
        events.withWatermark("ts", f"{int(DELAY.total_seconds())} seconds")
        .groupBy(F.session_window("ts", f"{int(GAP.total_seconds())} seconds"), "user_id")
        .agg(F.count("*").alias("event_count"))
    )
    return counted("(b) Spark session_window", sessions, Totals("event_count"), work / "b")


def measure_native_same_output(spark, path, work, fpt) -> Measured:
    """(b=): ``session_window`` producing the session row (c) produces (see
    :func:`native_same_output`)."""
    sessions = native_same_output(spark, path, fpt)
    name = "(b=) Spark session_window, same session row as (c)"
    return counted(name, sessions, Totals("event_count"), work / "b=")


def native_same_output(spark: SparkSession, path: Path, fpt: int) -> DataFrame:
    """``session_window`` producing the session row (c) produces, so that both do the same
    work per session: id, start, end, event count, bytes, first and last url, revision and
    truncated flag. What it still cannot do natively, and (c) does: caps, late updates, dead
    letters for late records (it drops them silently)."""
    events = valid_events(spark, path, fpt).select(
        "user_id", F.timestamp_millis(TS_MS).alias("ts"), "url", F.col(SIZE).alias("size")
    )
    return (
        events.withWatermark("ts", f"{int(DELAY.total_seconds())} seconds")
        .groupBy(F.session_window("ts", f"{int(GAP.total_seconds())} seconds"), "user_id")
        .agg(
            F.count("*").alias("event_count"),
            F.max("ts").alias("end"),
            F.sum("size").alias("bytes"),
            F.min_by("url", "ts").alias("first_url"),
            F.max_by("url", "ts").alias("last_url"),
        )
        .select(
            "user_id",
            F.hex(F.xxhash64("user_id", "session_window.start")).alias("session_id"),
            F.col("session_window.start").alias("start"),
            "end",
            "event_count",
            "bytes",
            "first_url",
            "last_url",
            F.lit(0).alias("revision"),
            F.lit(False).alias("truncated"),
        )
    )


def measure_sessionize(spark, path, work, fpt) -> Measured:
    params = SessionParams(gap=GAP, max_out_of_orderness=DELAY, aggregates=PAGEVIEW_AGGREGATES)
    result = sessionize_records(source(spark, path, fpt), SCHEMA, params)
    totals = Totals("event_count", where="kind = 'session'")
    return counted("(c) streamwarden sessionize", result.combined, totals, work / "c")


def counted(name: str, frame: DataFrame, totals: Totals, checkpoint: Path) -> Measured:
    """Runs ``frame`` into the counting sink and reports time, counts and state sizes."""
    seconds, cpu, progress = run_query(frame, checkpoint, totals)
    return Measured(
        name,
        seconds,
        totals.sessions,
        totals.events,
        state_stats(progress, checkpoint),
        cpu_seconds=cpu,
    )


def measure_pipeline(spark, path, work, fpt) -> Measured:
    config = parse_config(
        {
            "schema": PAGEVIEW_SCHEMA,
            "source": {"path": str(path), "max_files_per_trigger": fpt},
            "sessions": {
                "max_out_of_orderness": "1m",
                "idle_timeout": None,
                "aggregates": PAGEVIEW_AGGREGATES,
            },
            "sinks": {
                "sessions": {"path": str(work / "cp" / "sessions")},
                "dead_letters": {"path": str(work / "cp" / "dead")},
            },
            "checkpoint": {"path": str(work / "cp" / "checkpoint")},
        },
        origin="bench",
    )
    cpu_start = jvm_cpu_seconds(spark)
    start = time.perf_counter()
    result = Pipeline(config, spark).run(once=True)
    seconds = time.perf_counter() - start
    cpu = jvm_cpu_seconds(spark) - cpu_start
    sessions = sum(b.session_rows for b in result.batches)
    events = sum(b.session_events for b in result.batches)
    return Measured(
        "(c+) streamwarden pipeline with parquet sinks",
        seconds,
        sessions,
        events,
        state_stats(result.progress, work / "cp" / "checkpoint"),
        cpu_seconds=cpu,
    )


def measure_flink(path: Path, state: str) -> Measured | None:
    python = HERE.parent / ".venv-flink" / "bin" / "python"
    if not python.exists():
        print("(d) skipped: run bench/setup_flink.sh first", file=sys.stderr)
        return None
    report = run_flink("flink_sessions.py", path, state, ["--gap-minutes", "30"])
    # Spark's time includes query planning and codegen; Flink's comparable figure is the job's
    # wall time from submitting the SQL (planning and local cluster start included).
    wall = float(report.get("seconds_job_wall") or report["seconds"])
    return Measured(
        f"(d) Flink SQL session window, {state}",
        wall,
        int(report["sessions"]),
        int(report["events"]),
        {
            "seconds_net_runtime": report.get("seconds"),
            "seconds_total": report.get("seconds_total"),
            "input_events": report.get("input_events"),
        },
    )


def run_flink(script: str, path: Path, state: str, extra: list[str]) -> dict[str, Any]:
    """Runs a Flink side script of bench/ on ``path``; returns the JSON line it prints."""
    python = HERE.parent / ".venv-flink" / "bin" / "python"
    command = [str(python), str(HERE / script), "--input", str(path), "--state", state]
    command += ["--parallelism", "2", "--out-of-orderness-seconds", "60", *extra]
    out = subprocess.run(command, capture_output=True, text=True, check=True)
    report: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return report


def state_stats(progress: list[dict], checkpoint: Path) -> dict[str, Any]:
    """State rows and bytes at the largest point, and checkpoint bytes per batch."""
    ops = [(p["batchId"], p["stateOperators"][0]) for p in progress if p["stateOperators"]]
    if not ops:
        return {}
    _, peak = max(ops, key=lambda o: o[1]["numRowsTotal"])
    rows = peak["numRowsTotal"]
    sst = peak["customMetrics"].get("rocksdbSstFileSize", 0)
    state_dir = checkpoint / "state"
    on_disk = (
        sum(f.stat().st_size for f in state_dir.rglob("*") if f.is_file())
        if state_dir.exists()
        else 0
    )
    commits = [p for p in progress if p["numInputRows"] > 0]
    return {
        "peak_state_rows": rows,
        "rocksdb_sst_bytes_at_peak": sst,
        "sst_bytes_per_state_row": round(sst / rows, 1) if rows else None,
        "state_dir_bytes_at_end": on_disk,
        "state_dir_bytes_per_data_batch": round(on_disk / max(len(commits), 1)),
        "batches": len(progress),
    }


SPARK_RUNS = {
    "a": measure_ceiling,
    "b": measure_native,
    "b=": measure_native_same_output,
    "c": measure_sessionize,
    "c+": measure_pipeline,
}


def jfr_conf(recording: Path | None) -> dict[str, str]:
    """JVM options that record a flight recording of the whole run into ``recording``."""
    if recording is None:
        return {}
    recording.parent.mkdir(parents=True, exist_ok=True)
    return {
        "spark.driver.extraJavaOptions": (
            f"-XX:StartFlightRecording=filename={recording.resolve()},settings=profile"
        )
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--files-per-trigger", type=int, default=2)
    parser.add_argument("--shuffle-partitions", type=int, default=4)
    parser.add_argument("--skip-flink", action="store_true")
    parser.add_argument(
        "--runs",
        default="a,b,c,c+",
        help="comma-separated Spark runs to measure (of a, b, b=, c, c+); (b) is always included",
    )
    parser.add_argument(
        "--jfr",
        type=Path,
        help="record a Java Flight Recording of the Spark JVM (local mode: driver = executor)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="measure the chosen Spark runs this many times in turn; the table shows every "
        "round, ratios against the last round's (b) (earlier rounds warm the JVM up)",
    )
    args = parser.parse_args()
    chosen = {r.strip() for r in args.runs.split(",")} | {"b"}
    unknown = chosen - set(SPARK_RUNS)
    if unknown:
        parser.error(f"unknown --runs {sorted(unknown)}; choose from {list(SPARK_RUNS)}")

    path = dataset(args.events, args.users, args.files)
    work = HERE / "out" / "work"
    shutil.rmtree(work, ignore_errors=True)
    spark = build_spark_session(
        app_name="streamwarden-bench",
        shuffle_partitions=args.shuffle_partitions,
        extra_conf={"spark.driver.memory": "6g", **jfr_conf(args.jfr)},
    )
    runs = [
        measure(spark, path, work / f"round-{n}", args.files_per_trigger)
        for n in range(1, args.rounds + 1)
        for name, measure in SPARK_RUNS.items()
        if name in chosen
    ]
    if args.rounds > 1:
        per_round = len(runs) // args.rounds
        for i, r in enumerate(runs):
            r.name += f" [round {i // per_round + 1}]"
    if not args.skip_flink:
        runs += [r for r in (measure_flink(path, "rocksdb"), measure_flink(path, "heap")) if r]
    report(args, path, runs)


def report(args: argparse.Namespace, path: Path, runs: list[Measured]) -> None:
    events = args.events + 1  # + the sentinel
    native = [r for r in runs if r.name.startswith("(b)")][-1]
    print(
        f"\n{events:,} events, {args.users:,} users, {args.files} files, "
        f"{args.files_per_trigger} files per trigger, {args.shuffle_partitions} partitions\n"
    )
    print(
        "| run | seconds | events/s | vs (b) | JVM CPU s | CPU vs (b) | sessions "
        "| events in sessions |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in runs:
        cpu, cpu_ratio = "-", "-"
        if r.cpu_seconds and native.cpu_seconds:
            cpu, cpu_ratio = f"{r.cpu_seconds:.1f}", f"{native.cpu_seconds / r.cpu_seconds:.2f}x"
        print(
            f"| {r.name} | {r.seconds:.1f} | {events / r.seconds:,.0f} | "
            f"{native.seconds / r.seconds:.2f}x | {cpu} | {cpu_ratio} "
            f"| {r.sessions if r.sessions is not None else '-'} "
            f"| {r.events_in_sessions if r.events_in_sessions is not None else '-'} |"
        )
    # Flink's end of input closes the sentinel's own session too (one session, one event);
    # Spark never sees a watermark past the sentinel. Compare without it.
    counts = {
        r.name: (r.sessions - 1, r.events_in_sessions - 1)
        if r.name.startswith("(d)")
        else (r.sessions, r.events_in_sessions)
        for r in runs
        if r.sessions is not None
    }
    agree = len(set(counts.values())) == 1
    print(f"\nsession counts agree: {agree} {counts if not agree else ''}")
    save_results("sessions", args, path, runs, agree)


def save_results(
    name: str, args: argparse.Namespace, path: Path, runs: list[Measured], agree: bool
) -> None:
    """Writes bench/out/NAME.json; exits 1 if the engines' counts disagree."""
    for r in runs:
        if r.extra:
            print(f"{r.name}: {r.extra}")
    out = HERE / "out" / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "args": vars(args),
        "dataset": str(path),
        "runs": [r.__dict__ for r in runs],
        "counts_agree": agree,
    }
    out.write_text(json.dumps(document, indent=2, default=str))
    if not agree:
        sys.exit(1)


if __name__ == "__main__":
    main()
