"""A pipeline writing Delta tables, killed with SIGKILL in the middle of a MERGE (its data files
written, its commit not), right after a Delta commit (before Spark committed the batch), and
right after Spark committed a batch, then restarted on its checkpoint: the tables equal those
of an uninterrupted run, and the Delta log records each batch at most once."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from streamwarden.local.generator import TrafficSpec, generate_traffic
from streamwarden.pipeline import Pipeline
from streamwarden.sinks import delta_log
from tests.support import PAGEVIEW_AGGREGATES_TOML, PAGEVIEW_TOML, pipeline_config, run_command

pytestmark = pytest.mark.soak

SPEC = TrafficSpec(
    users=200,
    events=8_000,
    rate_per_second=0.3,
    events_per_file=500,
    late_fraction=0.03,
    too_late_fraction=0.005,
    malformed_fraction=0.01,
)

CONFIG_TOML = (
    """
name = "delta-crash"
[source]
path = "landing"
max_files_per_trigger = 1
[sessions]
allowed_lateness = "10m"
[sinks.sessions]
kind = "delta"
path = "sessions"
[sinks.dead_letters]
kind = "delta"
path = "dead_letters"
[checkpoint]
path = "checkpoint"
[spark]
shuffle_partitions = 2
[monitoring]
prometheus_port = "off"
"""
    + PAGEVIEW_TOML
    + PAGEVIEW_AGGREGATES_TOML
)


def _data_files(table: Path) -> set[str]:
    return {
        str(p.relative_to(table)) for p in table.rglob("*.parquet") if "_delta_log" not in p.parts
    }


def _committed_files(table: Path) -> set[str]:
    return {f for c in delta_log.commits(table) for f in c.added}


def _last_batch(table: Path) -> int:
    recorded = [v for c in delta_log.commits(table) for v in c.transactions.values()]
    return max(recorded, default=-1)


def _kill_when(command: list[str], condition: Callable[[], bool], cwd: Path) -> None:
    """Starts ``command`` (its own process group) and kills the group with SIGKILL as soon as
    ``condition`` holds."""
    process = subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 900
    try:
        while not condition():
            assert process.poll() is None, "the pipeline ended before the kill point"
            assert time.monotonic() < deadline, "the kill point never came"
            time.sleep(0.005)  # polling a condition, not waiting for a guess at timing
        os.killpg(process.pid, signal.SIGKILL)
    finally:
        process.wait()
    assert process.returncode == -signal.SIGKILL


def _tables(spark, root: Path):
    sessions = spark.read.format("delta").load(str(root / "sessions")).drop("batch_id")
    letters = spark.read.format("delta").load(str(root / "dead_letters"))
    return (
        sorted(tuple(r) for r in sessions.select(*sorted(sessions.columns)).collect()),
        sorted((r.raw, r.reason, r.detail) for r in letters.collect()),
    )


def test_killed_mid_merge_and_at_commits_it_resumes_to_the_uninterrupted_tables(spark, workdir):
    reference, crashed = workdir / "reference", workdir / "crashed"
    for root in (reference, crashed):
        generate_traffic(SPEC, root / "landing")
    config = pipeline_config(
        reference,
        name="delta-crash",
        sessions={"allowed_lateness": "10m"},
        sinks={
            "sessions": {"kind": "delta", "path": str(reference / "sessions")},
            "dead_letters": {"kind": "delta", "path": str(reference / "dead_letters")},
        },
    )
    Pipeline(config, spark).run(once=True, drain=True)

    (crashed / "pipeline.toml").write_text(CONFIG_TOML)
    command = run_command(crashed / "pipeline.toml", "--once", "--drain")
    sessions = crashed / "sessions"
    commits = crashed / "checkpoint" / "commits"
    interrupted_merge: list[set[str]] = []

    def mid_merge() -> bool:  # a MERGE has written data files that no commit names yet
        if _last_batch(sessions) < 2:
            return False
        pending = _data_files(sessions) - _committed_files(sessions)
        if pending:
            interrupted_merge.append(pending)
        return bool(pending)

    def delta_committed_first() -> bool:  # the table holds a batch Spark has not committed
        last = _last_batch(sessions)
        return last >= 6 and not (commits / str(last)).exists()

    def checkpointed() -> bool:
        return any(int(f.name) >= 10 for f in commits.glob("[0-9]*"))

    for kill_point in (mid_merge, delta_committed_first, checkpointed):
        _kill_when(command, kill_point, crashed)
    restarted = subprocess.run(command, cwd=crashed, capture_output=True, text=True, check=False)
    assert restarted.returncode == 0, restarted.stderr

    # the killed MERGE's files were never committed, and never will be
    assert interrupted_merge and not interrupted_merge[-1] & _committed_files(sessions)
    assert _tables(spark, crashed) == _tables(spark, reference)
    for table in ("sessions", "dead_letters"):
        recorded = [v for c in delta_log.commits(crashed / table) for v in c.transactions.values()]
        assert len(recorded) == len(set(recorded)), f"{table}: a batch committed twice"
        assert recorded == sorted(recorded)
        expected = [
            v for c in delta_log.commits(reference / table) for v in c.transactions.values()
        ]
        assert recorded == expected  # the same batches, each once
