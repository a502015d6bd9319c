"""Rescale benchmark: how long ``streamwarden rescale`` takes on a 1M-key sessions state (L10).

Run with ``make bench-rescale`` (or ``.venv/bin/python bench/rescale_bench.py``). In this one
process it:

  1. writes one pageview per user for ``--keys`` users within a few minutes of event time, and
     runs the sessions pipeline once on 8 state partitions: every user's session is still open,
     so the state holds one value and one timer per user;
  2. measures the baseline: one full read of that state (every state variable and the timers,
     counted through Spark's ``statestore`` source, after one warm-up read), the floor of any
     offline state rewrite;
  3. rescales 8 -> 4 and 4 -> 8, each verified by row counts before and after.

Rescale time is reported in seconds and as a ratio to the baseline read. Results go to
bench/out/rescale.json and are printed as a table for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

from streamwarden.checkpoints.rescale import rescale_checkpoint
from streamwarden.checkpoints.state_reader import count_rows
from streamwarden.config import parse_config
from streamwarden.local.examples.pageviews import PAGEVIEW_AGGREGATES, PAGEVIEW_SCHEMA
from streamwarden.pipeline import Pipeline
from streamwarden.spark.session import build_spark_session

HERE = Path(__file__).resolve().parent
T0_MS = 1767225600000  # 2026-01-01T00:00:00Z


def write_landing(landing: Path, keys: int, files: int = 8) -> None:
    """One event per user, 0.2 ms apart: a few minutes of event time, no session closes."""
    landing.mkdir(parents=True)
    per_file = -(-keys // files)
    for f in range(files):
        lines = [
            f'{{"user_id": "u{i:08d}", "ts": {T0_MS + i // 5}, "page_number": 1, "url": "/"}}\n'
            for i in range(f * per_file, min(keys, (f + 1) * per_file))
        ]
        path = landing / f"part-{f:03d}.jsonl"
        path.write_text("".join(lines), encoding="utf-8")
        os.utime(path, (1_700_000_000 + f, 1_700_000_000 + f))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keys", type=int, default=1_000_000)
    parser.add_argument("--work", type=Path, default=Path("/dev/shm/streamwarden-rescale-bench"))
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    write_landing(args.work / "landing", args.keys)
    spark = build_spark_session(
        app_name="rescale-bench",
        shuffle_partitions=8,
        extra_conf={"spark.ui.enabled": "false", "spark.driver.memory": "6g"},
    )
    config = parse_config(
        {
            "schema": PAGEVIEW_SCHEMA,
            "sessions": {"aggregates": PAGEVIEW_AGGREGATES},
            "source": {"path": str(args.work / "landing")},
            "sinks": {
                "sessions": {"path": str(args.work / "sessions")},
                "dead_letters": {"path": str(args.work / "dead_letters")},
            },
            "checkpoint": {"path": str(args.work / "checkpoint")},
            "spark": {"shuffle_partitions": 8},
        }
    )
    started = time.perf_counter()
    Pipeline(config, spark).run(once=True)
    build_seconds = time.perf_counter() - started
    checkpoint = config.checkpoint.path

    count_rows(spark, checkpoint)  # warm-up: the first read also pays class loading, codegen
    started = time.perf_counter()
    rows = count_rows(spark, checkpoint)
    read_seconds = time.perf_counter() - started
    assert rows["0/user_sessions"] == args.keys, rows

    steps = []
    for target in (4, 8):
        report = rescale_checkpoint(spark, checkpoint, target)
        steps.append(
            {
                "from": report.partitions_before,
                "to": report.partitions_after,
                "repartition_seconds": report.repartition_seconds,
                "verify_seconds": report.verify_seconds,
                "ratio_to_full_read": round(report.repartition_seconds / read_seconds, 2),
                "rows": report.rows_after,
            }
        )
    result = {
        "keys": args.keys,
        "state_rows": rows,
        "build_seconds": round(build_seconds, 1),
        "full_read_seconds": round(read_seconds, 2),
        "rescales": steps,
        "load_average_at_end": os.getloadavg(),
        "cpus": os.cpu_count(),
    }
    out = HERE / "out" / "rescale.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result, indent=2))
    print("\n| step | repartition (s) | verify (s) | x full read |")
    print("|---|---|---|---|")
    for s in steps:
        print(
            f"| {s['from']} -> {s['to']} | {s['repartition_seconds']:.1f} | "
            f"{s['verify_seconds']:.1f} | {s['ratio_to_full_read']:.2f} |"
        )
    spark.stop()


if __name__ == "__main__":
    main()
