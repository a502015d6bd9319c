"""Cluster benchmark: the 2M-event sessions pipeline on a two-worker standalone cluster against
``local[2]``, same machine, same two cores, same script.

Run with ``make bench-cluster`` (or ``.venv/bin/python bench/cluster_bench.py``). It uses the
sessions benchmark's data set (``bench/sessions_bench.py``, cached under bench/data), starts a
standalone master and two workers (1 core, 1 GB each) from the pyspark wheel on 127.0.0.1, and
runs the same pipeline config twice through the command line, as a user would:

  (local)   ``streamwarden run CONFIG --once`` on ``local[2]`` (tasks in the driver JVM)
  (cluster) ``streamwarden submit CONFIG --once --master spark://...`` (tasks in two executor
            JVMs: shuffle through the block managers over TCP, results serialised to the driver)

Throughput is events / the query's time (the sum of its batches' ``triggerExecution`` from the
progress log: JVM and executor start-up excluded); the wall time of the whole command is shown
beside it. Session counts of the two runs are cross-checked. Results go to
bench/out/cluster.json and are printed as a table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import sessions_bench as bench

from streamwarden.local.cluster import LocalStandaloneCluster
from streamwarden.monitoring import read_progress_log
from streamwarden.monitoring.progress_log import progress_dir

HERE = Path(__file__).resolve().parent

CONFIG = """
name = "cluster-bench"
[source]
path = "{data}"
max_files_per_trigger = {fpt}
[schema]
key = "user_id"
time = "ts"
time_unit = "ms"
fields = "user_id STRING, ts BIGINT, page_number INT, url STRING"
required = ["user_id", "ts", "page_number"]
[schema.checks.page_number]
min = 1
max = 300
[sessions]
max_out_of_orderness = "1m"
idle_timeout = "off"
slow_key_threshold = "off"
[sessions.aggregates]
first_url = "first(url)"
last_url = "last(url)"
[sinks.sessions]
path = "{work}/sessions"
[sinks.dead_letters]
path = "{work}/dead_letters"
[checkpoint]
path = "{work}/checkpoint"
[spark]
shuffle_partitions = {partitions}
shared_storage = true
[spark.conf]
"spark.driver.host" = "127.0.0.1"
"spark.driver.bindAddress" = "127.0.0.1"
"spark.driver.memory" = "{driver_memory}"
"spark.executor.memory" = "1g"
"spark.ui.enabled" = "false"
[monitoring]
prometheus_port = "off"
"""


def run(verb: str, work: Path, data: Path, args: argparse.Namespace, *flags: str) -> dict[str, Any]:
    """One run of the pipeline through the command line; its timings and counts."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    config = work / "pipeline.toml"
    # local[2] runs the tasks in the driver: it gets the two executors' memory
    driver_memory = "2g" if verb == "run" else "768m"
    config.write_text(
        CONFIG.format(
            data=data,
            work=work,
            fpt=args.files_per_trigger,
            partitions=args.shuffle_partitions,
            driver_memory=driver_memory,
        )
    )
    command = [sys.executable, "-m", "streamwarden.cli.main", verb, str(config), "--once", *flags]
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{verb} failed:\n{done.stderr}")
    records = read_progress_log(progress_dir(work / "checkpoint"))
    query_ms = sum(r.summary.batch_duration_ms for r in records)
    return {
        "wall_s": wall,
        "query_s": query_ms / 1000,
        "batches": len(records),
        "sessions": _sessions(work / "sessions"),
    }


def _sessions(folder: Path) -> int:
    import pyarrow.dataset as ds

    return ds.dataset(folder, format="parquet", partitioning="hive").count_rows()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--files-per-trigger", type=int, default=2)
    parser.add_argument("--shuffle-partitions", type=int, default=4)
    args = parser.parse_args()

    data = bench.dataset(args.events, args.users, args.files)
    work = HERE / "out" / "cluster-work"
    runs = {"local[2]": run("run", work / "local", data, args)}
    with LocalStandaloneCluster(workers=2, cores=1, memory="1g") as cluster:
        runs["standalone, 2 workers x 1 core"] = run(
            "submit", work / "cluster", data, args, "--master", cluster.master_url
        )
    report(args, runs)


def report(args: argparse.Namespace, runs: dict[str, dict[str, Any]]) -> None:
    events = args.events + 1  # + the sentinel
    base = runs["local[2]"]
    print(
        f"\n{events:,} events, {args.users:,} users, {args.files} files, "
        f"{args.files_per_trigger} files per trigger, {args.shuffle_partitions} partitions\n"
    )
    print(
        "| run | query s | events/s | vs local[2] | wall s (with start-up) | batches | sessions |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, r in runs.items():
        print(
            f"| {name} | {r['query_s']:.1f} | {events / r['query_s']:,.0f} | "
            f"{base['query_s'] / r['query_s']:.2f}x | {r['wall_s']:.1f} | {r['batches']} "
            f"| {r['sessions']:,} |"
        )
    agree = len({r["sessions"] for r in runs.values()}) == 1
    print(f"\nsession counts agree: {agree}")
    out = HERE / "out" / "cluster.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"args": vars(args), "runs": runs, "agree": agree}, indent=2))
    if not agree:
        sys.exit(1)


if __name__ == "__main__":
    main()
