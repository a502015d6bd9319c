"""A pipeline killed with SIGKILL mid-run and restarted on its checkpoint gives exactly the
output of an uninterrupted run: nothing lost, no session revision written twice."""

from __future__ import annotations

import subprocess
from pathlib import Path

from streamwarden.local.generator import TrafficSpec, generate_traffic
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import read_output
from streamwarden.sinks.parquet import batch_dir_name
from tests.support import (
    PAGEVIEW_AGGREGATES_TOML,
    PAGEVIEW_TOML,
    kill_when_written,
    pipeline_config,
    run_command,
)

SPEC = TrafficSpec(
    users=200,
    events=8_000,
    rate_per_second=0.3,
    events_per_file=1_600,  # five batches
    late_fraction=0.02,
    malformed_fraction=0.01,
)
KILL_WHEN_BATCH_WRITTEN = 2  # batches 0-1 committed, 2 being written, 3-4 to come

CONFIG_TOML = (
    """
name = "crash-test"
[source]
path = "landing"
max_files_per_trigger = 1
[sessions]
allowed_lateness = "10m"
[sinks.sessions]
path = "sessions"
[sinks.dead_letters]
path = "dead_letters"
[checkpoint]
path = "checkpoint"
[spark]
shuffle_partitions = 2
"""
    + PAGEVIEW_TOML
    + PAGEVIEW_AGGREGATES_TOML
)


def revision_rows(spark, root: Path):
    frame = read_output(spark, root / "sessions")
    return sorted(tuple(r) for r in frame.drop("batch_id").collect())


def dead_letter_rows(spark, root: Path):
    frame = read_output(spark, root / "dead_letters")
    return sorted((r.raw, r.reason) for r in frame.collect())


def test_a_killed_run_resumes_to_the_output_of_an_uninterrupted_run(spark, workdir):
    reference, crashed = workdir / "reference", workdir / "crashed"
    for root in (reference, crashed):
        generate_traffic(SPEC, root / "landing")
        (root / "pipeline.toml").write_text(CONFIG_TOML)
    Pipeline(
        pipeline_config(reference, name="crash-test", sessions={"allowed_lateness": "10m"}), spark
    ).run(once=True, drain=True)

    command = run_command(crashed / "pipeline.toml", "--once", "--drain")
    kill_when_written(command, crashed / "sessions" / batch_dir_name(KILL_WHEN_BATCH_WRITTEN))

    restarted = subprocess.run(command, capture_output=True, text=True, check=False)
    assert restarted.returncode == 0, restarted.stderr

    assert revision_rows(spark, crashed) == revision_rows(spark, reference)
    assert dead_letter_rows(spark, crashed) == dead_letter_rows(spark, reference)
