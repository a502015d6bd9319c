"""One sessions benchmark run, repeated in a JVM of its own: how (b) or (c) of
``sessions_bench.py`` performs when no other query has run in its JVM, as in production.

In one JVM the order of the runs moves the figures: (b) right after (c) takes about half as long
again, because the JIT compiled the shared read and validation code for the other plan first.
Run this once per engine and compare the rounds::

    .venv/bin/python bench/sessions_isolated.py b --rounds 3
    .venv/bin/python bench/sessions_isolated.py c --rounds 3

``--conf KEY=VALUE`` (repeatable) adds a Spark setting, e.g. to measure what one costs.
"""

from __future__ import annotations

import argparse
import shutil

import sessions_bench as bench

from streamwarden.spark.session import build_spark_session

RUNS = {
    "a": bench.measure_ceiling,
    "b": bench.measure_native,
    "b=": bench.measure_native_same_output,
    "c": bench.measure_sessionize,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", choices=sorted(RUNS), help="a, b, b= or c, as in sessions_bench.py")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--files-per-trigger", type=int, default=2)
    parser.add_argument("--shuffle-partitions", type=int, default=4)
    parser.add_argument(
        "--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting to add"
    )
    args = parser.parse_args()
    conf = dict(setting.split("=", 1) for setting in args.conf)
    path = bench.dataset(args.events, args.users, args.files)
    work = bench.HERE / "out" / f"isolated-{args.run}"
    shutil.rmtree(work, ignore_errors=True)
    spark = build_spark_session(
        app_name="streamwarden-bench-isolated",
        shuffle_partitions=args.shuffle_partitions,
        extra_conf={"spark.driver.memory": "6g", **conf},
    )
    for n in range(1, args.rounds + 1):
        m = RUNS[args.run](spark, path, work / f"round-{n}", args.files_per_trigger)
        print(
            f"{m.name} [round {n}]: {m.seconds:.1f} s, JVM CPU {m.cpu_seconds:.1f} s, "
            f"sessions {m.sessions}, events in sessions {m.events_in_sessions}",
            flush=True,
        )


if __name__ == "__main__":
    main()
