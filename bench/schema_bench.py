"""Issue 38's benchmark: the same pipelines before and after declared schemas, one script.

Run with ``.venv/bin/python bench/schema_bench.py`` on this tree, and with
``PYTHONPATH=<old tree>/src`` on a tree from before issue 38 (its config had ``[fields]``, no
``[schema]``): the script writes each config the way the code it runs under reads it, so the
workload is the same on both sides. Measured, each ``--rounds`` times in one process (round 1
cold, later rounds with a warmed-up JVM):

  (s) pageview sessions: the pipeline over generated pageviews (epoch-ms ``ts``), whose
      sessions carry the first and last url (before: built in; after: declared as
      ``first(url)``, ``last(url)`` over ``[schema]``);
  (p) pageview pattern: page 1 followed by page 2 of a user within 30 minutes, carrying url;
  (m) payments (after only): sessions of card payments with six aggregates (sum, max,
      count_distinct, first, last, collect_list over a nested field), beside (s).

Each is a whole pipeline run (``Pipeline.run(once=True, drain=True)``: read, validate, state,
write Parquet exactly once), timed from start to end; throughput is input records / seconds.
The data sets are generated once under bench/data/schema38/ by the first run (both sides read
the very same files). Results: bench/out/schema38-<side>.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import time
from pathlib import Path
from typing import Any

from streamwarden.config import parse_config
from streamwarden.local.generator import TrafficSpec, generate_traffic
from streamwarden.pipeline import Pipeline
from streamwarden.spark.session import build_spark_session

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "schema38"
OUT = HERE / "out"
#: Whether the code this runs under reads ``[schema]`` (issue 38 on) or ``[fields]``.
SCHEMA = importlib.util.find_spec("streamwarden.schema") is not None
PAGEVIEWS = {
    "key": "user_id",
    "time": "ts",
    "fields": "user_id STRING, ts BIGINT, page_number INT, url STRING",
    "required": ["page_number"],
    "checks": {"page_number": {"min": 1, "max": 300}},
}


def pageview_data(events: int, users: int) -> tuple[Path, int]:
    folder = DATA / f"pageviews-{events}-{users}"
    if not (folder / "done").exists():
        shutil.rmtree(folder, ignore_errors=True)
        spec = TrafficSpec(users=users, events=events, rate_per_second=users / 600, files=20)
        summary = generate_traffic(spec, folder / "landing")
        (folder / "done").write_text(str(summary.records))
    return folder / "landing", int((folder / "done").read_text())


def payments_data(accounts: int) -> tuple[Path, int]:
    from streamwarden.local.examples.payments import PaymentsSpec, generate_payments

    folder = DATA / f"payments-{accounts}"
    if not (folder / "done").exists():
        shutil.rmtree(folder, ignore_errors=True)
        summary = generate_payments(PaymentsSpec(accounts=accounts, files=20), folder / "landing")
        (folder / "done").write_text(str(summary.records))
    return folder / "landing", int((folder / "done").read_text())


def common(landing: Path, work: Path) -> dict[str, Any]:
    return {
        "source": {"path": str(landing), "max_files_per_trigger": 2},
        "checkpoint": {"path": str(work / "checkpoint")},
        "spark": {"shuffle_partitions": 4},
        "monitoring": {"prometheus_port": "off"},
    }


def sessions_config(landing: Path, work: Path) -> dict[str, Any]:
    data = common(landing, work)
    data["sinks"] = {n: {"path": str(work / n)} for n in ("sessions", "dead_letters")}
    if SCHEMA:
        data["schema"] = PAGEVIEWS
        data["sessions"] = {
            "max_events": 300,
            "aggregates": {"first_url": "first(url)", "last_url": "last(url)"},
        }
    return data


def patterns_config(landing: Path, work: Path) -> dict[str, Any]:
    data = common(landing, work)
    data["operator"] = "patterns"
    data["sinks"] = {n: {"path": str(work / n)} for n in ("matches", "dead_letters")}
    data["patterns"] = {
        "key": "user_id",
        "fields": ["url"],
        "within": "30m",
        "skip": "skip_past_last_event",
        "stages": [
            {"name": "p1", "contiguity": "begin", "where": "page_number = 1"},
            {"name": "p2", "contiguity": "followed_by", "where": "page_number = 2"},
        ],
    }
    if SCHEMA:
        data["schema"] = PAGEVIEWS
    return data


def payments_config(landing: Path, work: Path) -> dict[str, Any]:
    data = common(landing, work)
    data["sinks"] = {n: {"path": str(work / n)} for n in ("sessions", "dead_letters")}
    data["schema"] = {
        "key": "account",
        "time": "at",
        "fields": "account STRING, at TIMESTAMP, amount DOUBLE, currency STRING, "
        "merchant STRING, country STRING, geo STRUCT<city: STRING>",
        "required": ["amount"],
        "checks": {"amount": {"min": 0}, "country": {"allowed": ["FR", "DE", "ES"]}},
        "rules": [{"name": "large_in_eur", "check": "amount < 1000 OR currency = 'EUR'"}],
    }
    data["sessions"] = {
        "gap": "20m",
        "allowed_lateness": "1h",
        "aggregates": {
            "total": "sum(amount)",
            "largest": "max(amount)",
            "merchants": "count_distinct(merchant)",
            "first_country": "first(country)",
            "last_country": "last(country)",
            "cities": "collect_list(geo.city)",
        },
    }
    data["validation"] = {"max_dead_letter_share": 1.0}
    return data


def timed(spark: Any, data: dict[str, Any], work: Path) -> float:
    shutil.rmtree(work, ignore_errors=True)
    config = parse_config(data, origin="bench")
    started = time.perf_counter()
    Pipeline(config, spark).run(once=True, drain=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--accounts", type=int, default=60_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--side", default="after" if SCHEMA else "before")
    args = parser.parse_args()
    pageviews, pageview_records = pageview_data(args.events, args.users)
    workloads = [
        ("s", sessions_config, pageviews, pageview_records),
        ("p", patterns_config, pageviews, pageview_records),
    ]
    if SCHEMA:
        payments, payment_records = payments_data(args.accounts)
        workloads.append(("m", payments_config, payments, payment_records))
    spark = build_spark_session(master="local[2]", shuffle_partitions=4)
    spark.sparkContext.setLogLevel("ERROR")
    results: dict[str, list[dict[str, float]]] = {}
    work = Path("/dev/shm") / "schema38-bench"
    for round_ in range(1, args.rounds + 1):
        for name, make, landing, records in workloads:
            seconds = timed(spark, make(landing, work / name), work / name)
            results.setdefault(name, []).append(
                {
                    "round": round_,
                    "records": records,
                    "seconds": seconds,
                    "records_per_s": records / seconds,
                }
            )
            print(
                f"{args.side} round {round_} ({name}): {records:,} records in {seconds:.1f} s "
                f"= {records / seconds:,.0f}/s",
                flush=True,
            )
    OUT.mkdir(exist_ok=True)
    (OUT / f"schema38-{args.side}.json").write_text(json.dumps(results, indent=2))
    spark.stop()


if __name__ == "__main__":
    main()
