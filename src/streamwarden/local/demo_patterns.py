"""``streamwarden demo patterns``: generated actors scan hosts among ordinary pageviews; the
pattern "a scan, then a scan of a different host within 30 minutes" finds them, live."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from streamwarden.config import PipelineConfig, parse_config
from streamwarden.local.demo_folder import replace_demo_folder
from streamwarden.local.examples.pageviews import PAGEVIEW_SCHEMA
from streamwarden.local.generator import TrafficSpec, generate_traffic
from streamwarden.operators.base import BatchStats
from streamwarden.operators.patterns.step import PatternBatchStats
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.console import ProgressPrinter
from streamwarden.pipeline.outputs import account_patterns, read_output
from streamwarden.sinks.parquet import batch_dir_name, parquet_folder
from streamwarden.sources.files import landing_folder
from streamwarden.spark.log_file import spark_logging_to

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["patterns_demo_command", "patterns_demo_config"]

SCAN = "url LIKE '/scan/%'"


def patterns_demo_config(out: Path) -> PipelineConfig:
    """Two scans of different hosts by one actor within 30 minutes, skip past last event."""
    return parse_config(
        {
            "name": "demo-patterns",
            "operator": "patterns",
            "schema": PAGEVIEW_SCHEMA,
            "source": {"path": str(out / "landing"), "max_files_per_trigger": 1},
            "patterns": {
                "key": "user_id",
                "fields": ["url"],
                "within": "30m",
                "skip": "skip_past_last_event",
                "emit_timeouts": True,
                "stages": [
                    {"name": "scan", "contiguity": "begin", "where": SCAN},
                    {
                        "name": "other_host",
                        "contiguity": "followed_by",
                        "where": SCAN,
                        "previous": [{"field": "url", "op": "!=", "stage": "scan"}],
                    },
                ],
            },
            "sinks": {
                "matches": {"path": str(out / "matches")},
                "timeouts": {"path": str(out / "timeouts")},
                "dead_letters": {"path": str(out / "dead_letters")},
            },
            "checkpoint": {"path": str(out / "checkpoint")},
            "spark": {"shuffle_partitions": 2},
        },
        origin="demo patterns",
    )


class LiveMatches:
    """After each batch's progress line, shows a few of the matches that batch wrote."""

    def __init__(self, spark: SparkSession, matches: Path, printer: ProgressPrinter) -> None:
        self.spark = spark
        self.matches = matches
        self.printer = printer
        self.events = 0

    def __call__(self, progress: dict[str, Any], stats: BatchStats | None) -> None:
        self.printer(progress, stats)
        if not isinstance(stats, PatternBatchStats):
            return
        self.events += stats.events
        folder = self.matches / batch_dir_name(stats.batch_id)
        if stats.matches == 0 or not folder.is_dir():
            return
        rows = self.spark.read.parquet(str(folder)).orderBy("match_start", "key").take(2)
        for row in rows:
            steps = " -> ".join(f"{e['url']} at {e['event_time']:%H:%M:%S}" for e in row["events"])
            print(f"      match {row['key']}: {steps}", flush=True)


def patterns_demo_command(
    out: Path, *, events: int, users: int, actors: int, seed: int, batches: int = 30
) -> int:
    out = out.resolve()
    config = patterns_demo_config(out)
    spec = TrafficSpec(
        users=users,
        events=events,
        rate_per_second=users / 600,
        seed=seed,
        scanners=actors,
        late_fraction=0.01,
        late_delay=(timedelta(seconds=20), timedelta(seconds=50)),
        too_late_fraction=0.002,
        too_late_delay=timedelta(hours=2),
        malformed_fraction=0.005,
        files=batches,  # the records, scans included: one file per micro-batch
    )
    replace_demo_folder(out)  # after the arguments are checked
    summary = generate_traffic(spec, landing_folder(config.source))
    print(
        f"generated {summary.records:,} records: {summary.events - summary.scans:,} pageviews "
        f"of {users:,} users, {summary.scans:,} scans by {actors} actors, "
        f"{sum(summary.malformed.values()):,} malformed, {summary.too_late:,} too late; "
        f"in {len(summary.files)} files under {landing_folder(config.source)}"
    )
    log_file = out / "spark.log"
    spark = spark_logging_to(
        log_file,
        app_name="streamwarden-demo-patterns",
        master=config.spark.master,
        shuffle_partitions=config.spark.shuffle_partitions,
    )
    print(
        f"starting local Spark (log: {log_file}); pattern: a scan, then a scan of a different "
        "host by the same actor within 30m, skip past last event; timeouts on\n",
        flush=True,
    )
    matches, timeouts, dead_letters = (
        parquet_folder(config.sinks[name]) for name in ("matches", "timeouts", "dead_letters")
    )
    live = LiveMatches(spark, matches, ProgressPrinter(config))
    Pipeline(config, spark).run(once=True, drain=True, on_progress=live)
    _print_summary(spark, matches)
    accounting = account_patterns(
        spark,
        (matches, timeouts, dead_letters),
        summary.records,
        live.events,
    )
    print(f"\naccounting: {accounting.describe()}")
    print(f"outputs: {matches}, {timeouts}, {dead_letters}")
    return 0 if accounting.balanced else 1


def _print_summary(spark: SparkSession, matches: Path) -> None:
    frame = read_output(spark, matches)
    if frame is None:
        print("\nno matches")
        return
    by_key = frame.groupBy("key").count()
    users = by_key.where(~F.col("key").startswith("actor-")).count()
    print(f"\nmatches by actor (top 5 of {by_key.count()} keys; {users} ordinary users matched):")
    by_key.orderBy(F.desc("count"), "key").show(5, truncate=False)
