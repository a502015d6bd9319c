"""History benchmark (issue 18, lesson L8): what streaming state and checkpoints cost when a
week of lateness is kept in a history store, against the same lateness kept in state.

Run with ``make bench-history`` (or ``.venv/bin/python bench/history_bench.py``). In this one
process, on the same landing files (``streamwarden.testing.late_traffic``: pageviews over
``--days`` days in steps of ``--step-hours``, 5% of events held back up to ``--max-delay-days``),
it runs the sessions pipeline twice, one file per micro-batch:

  store: ``allowed_lateness = "10m"``, ``history_lateness = "7d"``, a throwaway PostgreSQL as
         the history store (closed sessions leave state 40 minutes after their end);
  delta: the same lateness, the default history store: the pipeline's Delta sessions table
         (one row per session, MERGEd each batch), with ``--delta`` only;
  state: ``allowed_lateness = "7d"``, no history store (closed sessions stay in state a week).

After each batch it records the state rows, the state bytes that batch wrote to the checkpoint
(``CheckpointMeter``), the size of the checkpoint's state folder, and the store's sessions.
Both runs must end balanced with the same final sessions. The figures for BENCHMARKS.md are the
means over the last ``--tail-days`` days (after the week in state has filled), and the ratio
state/store. Results go to bench/out/history.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from streamwarden.config import parse_config
from streamwarden.local.examples.pageviews import PAGEVIEW_AGGREGATES, PAGEVIEW_SCHEMA
from streamwarden.local.postgres import LocalPostgres
from streamwarden.monitoring.checkpoint_usage import CheckpointMeter
from streamwarden.operators.sessions.history import open_history
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import account_run, final_sessions
from streamwarden.sinks.base import open_sink
from streamwarden.spark.delta import delta_jars, delta_session_conf
from streamwarden.spark.session import build_spark_session
from streamwarden.testing.late_traffic import write_late_traffic

HERE = Path(__file__).resolve().parent
PASSWORD_ENV = "STREAMWARDEN_BENCH_HISTORY_PASSWORD"


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def config_for(work: Path, landing: Path, pg: LocalPostgres | None, delta: bool = False) -> Any:
    data: dict[str, Any] = {
        "schema": PAGEVIEW_SCHEMA,
        "source": {"path": str(landing), "max_files_per_trigger": 1},
        "sinks": {
            "sessions": {"path": str(work / "sessions")},
            "dead_letters": {"path": str(work / "dead_letters")},
        },
        "checkpoint": {"path": str(work / "checkpoint")},
        "spark": {"shuffle_partitions": 4},
        "monitoring": {"enabled": False},
    }
    if delta:
        data["sessions"] = {"allowed_lateness": "10m", "history_lateness": "7d"}
        data["sinks"]["sessions"]["kind"] = "delta"
        data["history"] = {}
    elif pg is None:
        data["sessions"] = {"allowed_lateness": "7d"}
    else:
        data["sessions"] = {"allowed_lateness": "10m", "history_lateness": "7d"}
        data["history"] = {
            "kind": "postgres", "host": pg.host, "port": pg.port, "database": pg.database,
            "user": pg.user, "password_env": PASSWORD_ENV, "table": "bench_sessions",
        }  # fmt: skip
    data["sessions"]["aggregates"] = PAGEVIEW_AGGREGATES
    return parse_config(data)


def run(spark: Any, name: str, work: Path, landing: Path, pg: LocalPostgres | None,
        records: int) -> dict[str, Any]:  # fmt: skip
    config = config_for(work / name, landing, pg, delta=name == "delta")
    store = open_history(config) if config.history is not None else None
    meter: CheckpointMeter | None = None
    series: list[dict[str, int]] = []

    def measure(progress: dict[str, Any], stats: object) -> None:
        nonlocal meter
        meter = meter or CheckpointMeter(config.checkpoint.path)
        if progress.get("numInputRows", 0) == 0:
            return  # no-data batches: the timers' work, counted in the data batches' state
        series.append({
            "batch": progress["batchId"],
            "state_rows": sum(op["numRowsTotal"] for op in progress["stateOperators"]),
            "state_bytes_written": meter.measure(progress["batchId"]).state_bytes_written,
            "checkpoint_state_bytes": folder_bytes(config.checkpoint.path / "state"),
            "stored_sessions": store.size() if store is not None else 0,
            "batch_ms": progress["durationMs"]["triggerExecution"],
        })  # fmt: skip

    started = time.perf_counter()
    Pipeline(config, spark).run(once=True, drain=True, on_progress=measure)
    seconds = time.perf_counter() - started
    if store is not None:
        store.close()
    # the sessions output as written: every revision (Parquet), or the latest revision of each
    # session (the Delta table); the final sessions are the same either way
    revisions = open_sink("sessions", config.context).read(spark)
    accounting = account_run(spark, config, records)
    final = {
        (r["user_id"], r["session_start"], r["event_count"]) for r in final_sessions(revisions)
        .select("user_id", "session_start", "event_count").collect()
    }  # fmt: skip
    return {"series": series, "seconds": seconds, "accounting": accounting.describe(),
            "balanced": accounting.balanced, "final": final}  # fmt: skip


def tail_means(series: list[dict[str, int]], batches: int) -> dict[str, float]:
    tail = series[-batches:]
    keys = ("state_rows", "state_bytes_written", "checkpoint_state_bytes", "batch_ms")
    return {k: round(statistics.mean(s[k] for s in tail), 1) for k in keys}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--days", type=int, default=10)
    parser.add_argument("--step-hours", type=int, default=4)
    parser.add_argument("--max-delay-days", type=int, default=6)
    parser.add_argument("--tail-days", type=int, default=2)
    parser.add_argument(
        "--state-first",
        action="store_true",
        help="run the in-state pipeline first (the first run pays JVM warm-up)",
    )
    parser.add_argument(
        "--delta",
        action="store_true",
        help="also run with the default store, the Delta sessions table",
    )
    parser.add_argument("--work", type=Path, default=Path("/dev/shm/streamwarden-history-bench"))
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    landing = args.work / "landing"
    traffic = write_late_traffic(
        landing, users=args.users, days=args.days, step=timedelta(hours=args.step_hours),
        max_delay=timedelta(days=args.max_delay_days),
    )  # fmt: skip
    spark = build_spark_session(
        app_name="history-bench", shuffle_partitions=4,
        extra_conf={"spark.ui.enabled": "false", "spark.sql.streaming.minBatchesToRetain": "20",
                    **(delta_session_conf("local[2]", 4) if args.delta else {})},
        extra_jars=delta_jars() if args.delta else (),
    )  # fmt: skip
    with LocalPostgres() as pg:
        os.environ[PASSWORD_ENV] = pg.password
        order = ["state", "store"] if args.state_first else ["store", "state"]
        if args.delta:
            order.insert(order.index("store") + 1, "delta")
        results = {
            name: run(spark, name, args.work, landing, pg if name == "store" else None,
                      traffic.records)
            for name in order
        }  # fmt: skip
    for name in results:
        assert results[name]["final"] == results["state"]["final"], f"{name}: final sessions differ"
    tail = args.tail_days * 24 // args.step_hours
    summary = {name: tail_means(r["series"], tail) for name, r in results.items()}
    ratio = {
        k: round(summary["state"][k] / summary["store"][k], 2) if summary["store"][k] else None
        for k in summary["store"]
    }
    delta_ratio = None
    if "delta" in summary:
        delta_ratio = {
            k: round(summary["state"][k] / summary["delta"][k], 2) if summary["delta"][k] else None
            for k in summary["delta"]
        }
    out = {
        "traffic": {
            "users": args.users,
            "days": args.days,
            "files": traffic.files,
            "records": traffic.records,
            "late": traffic.late,
            "max_delay_ms": traffic.max_delay_ms,
        },
        "order": order,
        "tail_batches": tail,
        "summary": summary,
        "ratio_state_over_store": ratio,
        "ratio_state_over_delta_store": delta_ratio,
        "runs": {n: {k: v for k, v in r.items() if k != "final"} for n, r in results.items()},
        "load_average_at_end": os.getloadavg(),
        "cpus": os.cpu_count(),
    }
    (HERE / "out").mkdir(exist_ok=True)
    (HERE / "out" / "history.json").write_text(json.dumps(out, indent=2), encoding="utf-8")
    for name, r in results.items():
        print(f"\n{name}: {r['accounting']} in {r['seconds']:.0f} s")
        print("batch  state rows  state bytes written  checkpoint state bytes  stored sessions")
        for s in r["series"]:
            print(f"{s['batch']:5d}  {s['state_rows']:10d}  {s['state_bytes_written']:19d}  "
                  f"{s['checkpoint_state_bytes']:22d}  {s['stored_sessions']:15d}")  # fmt: skip
    print(f"\nmeans over the last {tail} data batches ({args.tail_days} days):")
    print("| | state rows | state bytes written per batch | checkpoint state folder | batch ms |")
    print("|---|---:|---:|---:|---:|")
    for name in [n for n in ("store", "delta", "state") if n in summary]:
        m = summary[name]
        print(f"| {name} | {m['state_rows']:.0f} | {m['state_bytes_written']:.0f} | "
              f"{m['checkpoint_state_bytes']:.0f} | {m['batch_ms']:.0f} |")  # fmt: skip
    print(f"| state / store | {ratio['state_rows']}x | {ratio['state_bytes_written']}x | "
          f"{ratio['checkpoint_state_bytes']}x | {ratio['batch_ms']}x |")  # fmt: skip
    if delta_ratio is not None:
        d = delta_ratio
        print(f"| state / delta | {d['state_rows']}x | {d['state_bytes_written']}x | "
              f"{d['checkpoint_state_bytes']}x | {d['batch_ms']}x |")  # fmt: skip
    spark.stop()


if __name__ == "__main__":
    main()
