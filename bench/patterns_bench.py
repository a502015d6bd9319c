"""Patterns benchmark: streamwarden ``detect`` vs Flink SQL ``MATCH_RECOGNIZE``, same files.

Run with ``make bench-patterns`` (or ``.venv/bin/python bench/patterns_bench.py``). It uses the
sessions benchmark's data set (generated once, cached under bench/data) and measures, in this
one process:

  (a) read + validate, no state: the ceiling of any operator on this source
  (p1) "page 1 followed by page 2 of the same user within 30 minutes, skip past last event"
  (p3) three stages with a quantifier: page 1, then one or more of pages 2..5, then page 6,
       within 30 minutes, skip past last event
  (f1), (f3) the same two patterns in Flink SQL MATCH_RECOGNIZE through PyFlink (subprocess,
       bench/flink_patterns.py, heap state; RocksDB with --flink-rocksdb)

Every query runs ``--rounds`` times (default 2), each engine in its one JVM: round 1 is cold,
as a job just started; later rounds show the throughput of a JVM whose compiler has warmed up,
which is what a long-running stream sees. Ratios compare engines within the same round.

Throughput is events / wall time of the query (Spark: start to end of an availableNow run,
excluding SparkSession start-up; Flink: the job's wall time from submitting the SQL). Match
counts of each pattern are cross-checked between the engines. Results go to
bench/out/patterns.json and are printed as a table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from datetime import timedelta
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sessions_bench import (
    HERE,
    Measured,
    dataset,
    jfr_conf,
    measure_ceiling,
    run_flink,
    run_query,
    save_results,
    valid_events,
)

from streamwarden.operators.patterns import AfterMatch, Pattern, detect
from streamwarden.spark.session import build_spark_session
from streamwarden.validation.validate import TS_MS

WITHIN = timedelta(minutes=30)


def p1_then_p2() -> Pattern:
    page = F.col("page_number")
    return (
        Pattern.begin("p1")
        .where(page == 1)
        .followed_by("p2")
        .where(page == 2)
        .within(WITHIN)
        .skip(AfterMatch.skip_past_last_event())
    )


def three_stage() -> Pattern:
    page = F.col("page_number")
    return (
        Pattern.begin("p1")
        .where(page == 1)
        .followed_by("middle")
        .where(page.between(2, 5))
        .one_or_more()
        .followed_by("p6")
        .where(page == 6)
        .within(WITHIN)
        .skip(AfterMatch.skip_past_last_event())
    )


class MatchCount:
    """foreachBatch sink that only counts matches."""

    def __init__(self) -> None:
        self.matches = 0

    def __call__(self, frame: DataFrame, batch_id: int) -> None:
        self.matches += frame.where(F.col("kind") == "match").count()


def measure_detect(
    spark: SparkSession, path: Path, work: Path, fpt: int, name: str, pattern: Pattern
) -> Measured:
    events = valid_events(spark, path, fpt).select(
        "user_id", F.col(TS_MS).alias("ts"), "page_number"
    )
    result = detect(events, pattern, key="user_id", time="ts")
    counter = MatchCount()
    seconds, cpu, progress = run_query(result.combined, work / name, counter)
    rows = max(
        (p["stateOperators"][0]["numRowsTotal"] for p in progress if p["stateOperators"]), default=0
    )
    return Measured(name, seconds, counter.matches, None, {"peak_state_rows": rows}, cpu)


def measure_flink(
    path: Path, pattern: str, state: str, rounds: int, checkpoint_every: str | None = None
) -> list[Measured]:
    """One Flink process per pattern and state backend; with ``rounds`` > 1 it runs the job that
    many times in its one JVM, as the Spark side does, and each round is a row.
    ``checkpoint_every`` (a Flink duration such as ``2s``) turns on Flink's exactly-once
    checkpoints into a folder under bench/out, as streamwarden commits its state every batch."""
    python = HERE.parent / ".venv-flink" / "bin" / "python"
    if not python.exists():
        print("Flink skipped: run bench/setup_flink.sh first", file=sys.stderr)
        return []
    extra = ["--pattern", pattern, "--within-minutes", "30", "--rounds", str(rounds)]
    if state == "rocksdb":  # small write buffers: see bench/flink_patterns.py
        extra += ["--conf", "state.backend.rocksdb.memory.managed=false"]
        extra += ["--conf", "state.backend.rocksdb.writebuffer.size=64kb"]
    label = state
    if checkpoint_every:
        checkpoints = HERE / "out" / "flink-checkpoints"
        shutil.rmtree(checkpoints, ignore_errors=True)
        extra += ["--conf", f"execution.checkpointing.interval={checkpoint_every}"]
        extra += ["--conf", "execution.checkpointing.storage=filesystem"]
        extra += ["--conf", f"execution.checkpointing.dir={checkpoints.resolve().as_uri()}"]
        label += f", checkpoint every {checkpoint_every}"
    report = run_flink("flink_patterns.py", path, state, extra)
    return [
        Measured(
            f"Flink MATCH_RECOGNIZE {pattern}, {label}" + round_suffix(n, rounds),
            float(r["seconds_job_wall"]),
            int(r["matches"]),
            None,
            {"seconds_net_runtime": r["seconds"], "seconds_total": report.get("seconds_total")},
        )
        for n, r in enumerate(report["rounds"], start=1)
    ]


#: The benchmark's patterns by label, in the order they run.
PATTERNS = {"p1": p1_then_p2, "p3": three_stage}


def round_suffix(n: int, rounds: int) -> str:
    return f" [round {n}]" if rounds > 1 else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--files-per-trigger", type=int, default=2)
    parser.add_argument("--shuffle-partitions", type=int, default=4)
    parser.add_argument("--skip-flink", action="store_true")
    parser.add_argument("--flink-rocksdb", action="store_true", help="also Flink on RocksDB")
    parser.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="run every query this many times, each engine in its one JVM (Flink: one process "
        "per pattern); round 1 is cold, later rounds show the warmed-up JVMs' throughput; "
        "ratios compare the same round (default 2)",
    )
    parser.add_argument(
        "--jfr", type=Path, help="record a Java Flight Recording of the Spark JVM into this file"
    )
    parser.add_argument(
        "--only",
        choices=("p1_then_p2", "three_stage"),
        help="run just this pattern, without the ceiling: then each engine's JVM runs one query "
        "only, as Flink's always does (the order of queries in one JVM moves their times)",
    )
    parser.add_argument(
        "--flink-checkpoint-every",
        metavar="DURATION",
        help="also run Flink's heap backend with exactly-once checkpoints this often (a Flink "
        "duration, e.g. 2s), as streamwarden commits its state every micro-batch",
    )
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")

    path = dataset(args.events, args.users, args.files)
    work = HERE / "out" / "work-patterns"
    shutil.rmtree(work, ignore_errors=True)
    spark = build_spark_session(
        app_name="streamwarden-bench-patterns",
        shuffle_partitions=args.shuffle_partitions,
        extra_conf={"spark.driver.memory": "6g", **jfr_conf(args.jfr)},
    )
    fpt = args.files_per_trigger
    runs: list[Measured] = []
    for n in range(1, args.rounds + 1):
        suffix = round_suffix(n, args.rounds)
        at = work / f"round-{n}"
        if args.only is None:
            ceiling = measure_ceiling(spark, path, at, fpt)
            ceiling.name += suffix
            runs.append(ceiling)
        for label, pattern in PATTERNS.items():
            if args.only in (None, pattern.__name__):
                name = f"({label}) streamwarden {pattern.__name__}{suffix}"
                runs.append(measure_detect(spark, path, at, fpt, name, pattern()))
    if not args.skip_flink:
        states = ["heap", "rocksdb"] if args.flink_rocksdb else ["heap"]
        for pattern in [args.only] if args.only else ["p1_then_p2", "three_stage"]:
            for state in states:
                runs += measure_flink(path, pattern, state, args.rounds)
            if args.flink_checkpoint_every:
                every = args.flink_checkpoint_every
                runs += measure_flink(path, pattern, "heap", args.rounds, every)
    report(args, path, runs)


def report(args: argparse.Namespace, path: Path, runs: list[Measured]) -> None:
    events = args.events + 1  # + the sentinel
    print(
        f"\n{events:,} events, {args.users:,} users, {args.files} files, "
        f"{args.files_per_trigger} files per trigger, {args.shuffle_partitions} partitions\n"
    )
    print("| run | seconds | events/s | matches |")
    print("|---|---:|---:|---:|")
    for r in runs:
        matches = "-" if r.sessions is None else f"{r.sessions:,}"
        print(f"| {r.name} | {r.seconds:.1f} | {events / r.seconds:,.0f} | {matches} |")
    agree = True
    for key in ("p1_then_p2", "three_stage"):
        counts = {r.name: r.sessions for r in runs if key in r.name}
        same = len(set(counts.values())) <= 1
        agree &= same
        print(f"{key}: match counts agree: {same} {counts}")
        for n in range(1, args.rounds + 1):
            suffix = round_suffix(n, args.rounds)
            mine = [r for r in runs if key in r.name and r.name.endswith(suffix)]
            ours = next((r for r in mine if "streamwarden" in r.name), None)
            for r in mine:
                if ours and r is not ours:
                    print(f"  streamwarden vs {r.name}: {r.seconds / ours.seconds:.2f}x throughput")
    save_results("patterns", args, path, runs, agree)


if __name__ == "__main__":
    main()
