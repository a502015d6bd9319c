"""``streamwarden demo`` (``sessions``, the default): generated pageviews -> sessions on local
Spark, with live progress."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from streamwarden.config import PipelineConfig, parse_config
from streamwarden.local.demo_folder import replace_demo_folder
from streamwarden.local.examples.pageviews import PAGEVIEW_AGGREGATES, PAGEVIEW_SCHEMA
from streamwarden.local.generator import TrafficSpec, generate_traffic
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.console import ProgressPrinter
from streamwarden.pipeline.outputs import account, final_sessions, read_output
from streamwarden.sinks.parquet import parquet_folder
from streamwarden.sources.files import landing_folder
from streamwarden.spark.log_file import spark_logging_to

__all__ = ["demo_traffic", "sessions_demo_command", "sessions_demo_config"]


def demo_traffic(*, events: int, users: int, seed: int, files: int) -> TrafficSpec:
    """The sessions demos' traffic: late records that mostly arrive after their session closed
    (gap 30m), within the allowed lateness (45m), some too late, some malformed."""
    return TrafficSpec(
        users=users,
        events=events,
        rate_per_second=users / 600,
        seed=seed,
        late_fraction=0.02,
        late_delay=(timedelta(minutes=45), timedelta(minutes=70)),
        too_late_fraction=0.005,
        too_late_delay=timedelta(hours=2),
        malformed_fraction=0.01,
        files=files,
    )


#: The demo's aggregates: each session's entry and exit pages, and its pages in order.
PAGEVIEWS_AGGREGATES = {**PAGEVIEW_AGGREGATES, "urls": "collect_list(url)"}


def sessions_demo_config(out: Path) -> PipelineConfig:
    """The demo pipeline: the defaults plus 45 minutes of allowed lateness and url lists."""
    return parse_config(
        {
            "name": "demo-sessions",
            "schema": PAGEVIEW_SCHEMA,
            "source": {"path": str(out / "landing"), "max_files_per_trigger": 1},
            "sessions": {
                "allowed_lateness": "45m",
                "max_events": 300,
                "aggregates": PAGEVIEWS_AGGREGATES,
            },
            "sinks": {
                "sessions": {"path": str(out / "sessions")},
                "dead_letters": {"path": str(out / "dead_letters")},
            },
            "checkpoint": {"path": str(out / "checkpoint")},
            "spark": {"shuffle_partitions": 2},
        },
        origin="demo",
    )


def sessions_demo_command(
    out: Path, *, events: int, users: int, seed: int, batches: int = 30
) -> int:
    out = out.resolve()
    config = sessions_demo_config(out)
    # one file per micro-batch
    spec = demo_traffic(events=events, users=users, seed=seed, files=batches)
    replace_demo_folder(out)  # after the arguments are checked
    summary = generate_traffic(spec, landing_folder(config.source))
    print(
        f"generated {summary.records:,} records ({summary.events:,} pageviews of "
        f"{summary.distinct_users:,} users, {sum(summary.malformed.values()):,} malformed, "
        f"{summary.late:,} late, {summary.too_late:,} too late) in {len(summary.files)} files "
        f"under {landing_folder(config.source)}"
    )
    log_file = out / "spark.log"
    spark = spark_logging_to(
        log_file,
        app_name="streamwarden-demo",
        master=config.spark.master,
        shuffle_partitions=config.spark.shuffle_partitions,
    )
    print(
        f"starting local Spark (log: {log_file}); sessionizing with gap 30m, allowed lateness "
        "45m, then draining so every session closes\n",
        flush=True,
    )
    Pipeline(config, spark).run(once=True, drain=True, on_progress=ProgressPrinter(config))
    sessions_path = parquet_folder(config.sinks["sessions"])
    dead_letters_path = parquet_folder(config.sinks["dead_letters"])
    revisions = read_output(spark, sessions_path)
    if revisions is not None:
        print("\nsome sessions (final revisions):")
        final_sessions(revisions).orderBy("session_start", "user_id").select(
            "user_id",
            "session_start",
            "session_end",
            "event_count",
            "revision",
            "first_url",
            "last_url",
        ).show(5, truncate=False)
        updated = revisions.where("revision > 0").count()
        print(f"{updated:,} session updates came from late events (revision > 0)")
    accounting = account(spark, sessions_path, dead_letters_path, summary.records)
    print(f"\naccounting: {accounting.describe()}")
    print(f"outputs: {sessions_path} and {dead_letters_path}")
    return 0 if accounting.balanced else 1
