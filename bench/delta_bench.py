"""Delta benchmark: the sessions pipeline writing Delta tables vs writing Parquet folders, same
files, same process.

Run with ``make bench-delta`` (or ``.venv/bin/python bench/delta_bench.py``). It uses the
sessions benchmark's data set (2M events of 100,000 users in 20 files, cached under bench/data)
and measures, in one SparkSession with Delta's extension, in turn for ``--rounds`` rounds:

  (p)  the pipeline with its exactly-once Parquet sinks (the baseline)
  (dl) Delta sinks, sessions kept as one row per session (MERGE per batch, the default)
  (da) Delta sinks, every revision appended (``keep = "all"``)

Each run reads the same files two per trigger (10 batches plus the drain), from a fresh
checkpoint; wall time is from the query's start to its end (the SparkSession is started before),
CPU is the Spark JVM's. The sinks' own time (``write_batch``, which also runs the batch's
stateful step for the first sink) is summed per sink. Every run's accounting must balance, and
the Delta sessions table must hold as many rows as the Parquet run's final sessions. Results go
to bench/out/delta.json and are printed as ratios against (p) of the same round.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import sessions_bench as bench

from streamwarden.config import parse_config
from streamwarden.local.examples.pageviews import PAGEVIEW_AGGREGATES, PAGEVIEW_SCHEMA
from streamwarden.operators.base import account_run
from streamwarden.pipeline import Pipeline
from streamwarden.plan import PipelinePlan
from streamwarden.sinks import delta_log
from streamwarden.sinks.delta import DeltaBatchSink
from streamwarden.sinks.parquet import ParquetBatchSink
from streamwarden.spark.session import build_spark_session

HERE = bench.HERE
OUT = HERE / "out" / "delta"
RUN_NAMES = {
    "p": "(p) parquet sinks",
    "dl": "(dl) delta, latest revision per session (MERGE)",
    "da": "(da) delta, every revision appended",
}


def config_for(run: str, path: Path, work: Path, args: argparse.Namespace) -> Any:
    if run == "p":
        sinks = {
            "sessions": {"path": str(work / "sessions")},
            "dead_letters": {"path": str(work / "dead")},
        }
    else:
        keep = "latest" if run == "dl" else "all"
        sinks = {
            "sessions": {"kind": "delta", "path": str(work / "sessions"), "keep": keep},
            "dead_letters": {"kind": "delta", "path": str(work / "dead")},
        }
    return parse_config(
        {
            "name": f"bench-{run}",
            "schema": PAGEVIEW_SCHEMA,
            "source": {"path": str(path), "max_files_per_trigger": args.files_per_trigger},
            "sessions": {
                "max_out_of_orderness": "1m",
                "idle_timeout": "off",
                "aggregates": PAGEVIEW_AGGREGATES,
            },
            "sinks": sinks,
            "checkpoint": {"path": str(work / "checkpoint")},
            "spark": {"shuffle_partitions": args.shuffle_partitions},
            "monitoring": {"prometheus_port": "off"},
        },
        origin="bench",
    )


def time_sinks() -> dict[str, float]:
    """Sums the wall time of each sink's ``write_batch``, by sink class and name."""
    totals: dict[str, float] = {}
    for cls in (ParquetBatchSink, DeltaBatchSink):
        original = cls.write_batch

        def timed(self: Any, rows: Any, batch_id: int, _original: Any = original) -> bool:
            start = time.perf_counter()
            try:
                return bool(_original(self, rows, batch_id))
            finally:
                key = f"{type(self).__name__}:{self.name}"
                totals[key] = totals.get(key, 0.0) + time.perf_counter() - start

        cls.write_batch = timed  # type: ignore[method-assign]
    return totals


def measure(spark: Any, run: str, path: Path, work: Path, args: argparse.Namespace) -> dict:
    config = config_for(run, path, work, args)
    records = sum(1 for f in path.glob("*.jsonl") for _ in f.open(encoding="utf-8"))
    sink_seconds = time_sinks()
    cpu_start = bench.jvm_cpu_seconds(spark)
    start = time.perf_counter()
    result = Pipeline(config, spark).run(once=True, drain=True)
    seconds = time.perf_counter() - start
    cpu = bench.jvm_cpu_seconds(spark) - cpu_start
    accounting = account_run(spark, config, records, result.batches)
    report: dict[str, Any] = {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "records": records,
        "batches": len(result.progress),
        "sink_seconds": dict(sink_seconds),
        "balanced": accounting.balanced,
        "accounting": accounting.describe(),
        "final_sessions": accounting.sessions,
        "output_bytes": sum(
            f.stat().st_size
            for d in ("sessions", "dead")
            for f in (work / d).rglob("*")
            if f.is_file()
        ),
    }
    if run != "p":
        report["session_commits"] = len(delta_log.commits(work / "sessions"))
        report["table_rows"] = spark.read.format("delta").load(str(work / "sessions")).count()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--files-per-trigger", type=int, default=2)
    parser.add_argument("--shuffle-partitions", type=int, default=4)
    parser.add_argument("--runs", default="p,dl,da", help="runs in order (of p, dl, da)")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    path = bench.dataset(args.events, args.users, args.files)
    shutil.rmtree(OUT, ignore_errors=True)
    probe = config_for("dl", path, OUT / "probe", args)
    spark = build_spark_session(
        app_name="streamwarden-delta-bench",
        shuffle_partitions=args.shuffle_partitions,
        extra_conf={"spark.driver.memory": "6g", **PipelinePlan.of(probe).spark_conf()},
        extra_jars=PipelinePlan.of(probe).jars,
    )
    document: dict[str, Any] = {"args": vars(args), "load_before": os.getloadavg(), "runs": {}}
    ok = True
    for rnd in range(1, args.rounds + 1):
        for run in args.runs.split(","):
            report = measure(spark, run, path, OUT / f"round-{rnd}" / run, args)
            document["runs"][f"{run} [round {rnd}]"] = report
            print(f"{RUN_NAMES[run]} [round {rnd}]: {json.dumps(report)}", flush=True)
            ok &= bool(report["balanced"])
    document["load_after"] = os.getloadavg()
    (HERE / "out" / "delta.json").write_text(json.dumps(document, indent=2, default=str))
    print_table(document, args)
    if not ok:
        raise SystemExit("a run's accounting did not balance")


def print_table(document: dict[str, Any], args: argparse.Namespace) -> None:
    runs = document["runs"]
    print(
        f"\n{args.events:,} events, {args.users:,} users, {args.files} files, "
        f"{args.files_per_trigger} per trigger, {args.shuffle_partitions} shuffle partitions"
    )
    print(
        "| run | round | wall s | events/s | wall vs (p) | JVM CPU vs (p) | sessions sink s | "
        "output MB |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for key, r in runs.items():
        run, rnd = key.split(" [round ")
        base = runs.get(f"p [round {rnd}")
        sessions_s = sum(v for k, v in r["sink_seconds"].items() if k.endswith(":sessions"))
        ratio = f"{r['seconds'] / base['seconds']:.2f}" if base else "-"
        cpu = f"{r['cpu_seconds'] / base['cpu_seconds']:.2f}" if base else "-"
        print(
            f"| {RUN_NAMES[run]} | {rnd.rstrip(']')} | {r['seconds']:.1f} | "
            f"{r['records'] / r['seconds']:,.0f} | {ratio} | {cpu} | {sessions_s:.1f} | "
            f"{r['output_bytes'] / 1e6:.1f} |"
        )
    print(f"load average before {document['load_before']}, after {document['load_after']}")


if __name__ == "__main__":
    main()
