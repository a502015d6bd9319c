"""What the cluster tests share: pipeline configs as a user writes them, runs through the
command line (``run`` locally, ``submit --master`` on the cluster), outputs read back without
Spark, and Spark's event log of a run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds

from streamwarden.local.generator import TrafficSpec, generate_traffic

#: Small input, one file per batch (the same batches on both masters, so the same watermarks):
#: sessions of 150 users, late and malformed records, and scanning actors for the patterns.
TRAFFIC = TrafficSpec(
    users=150,
    events=3_000,
    rate_per_second=0.5,
    files=4,
    late_fraction=0.03,
    malformed_fraction=0.01,
    scanners=6,
    scan_every=timedelta(minutes=4),
)

SPARK = """
[spark]
master = "local[2]"
shuffle_partitions = 4
shared_storage = true
trigger_interval = "1s"
[spark.conf]
"spark.driver.host" = "127.0.0.1"
"spark.driver.bindAddress" = "127.0.0.1"
"spark.driver.memory" = "768m"
"spark.executor.memory" = "1g"
"spark.eventLog.enabled" = "true"
"spark.eventLog.dir" = "{events}"
"spark.eventLog.compress" = "false"
[resources]
cores = 2
[monitoring]
prometheus_port = 0
"""

#: The generated pageviews, declared as examples/pageviews.toml declares them.
SCHEMA = """
[schema]
key = "user_id"
time = "ts"
time_unit = "ms"
fields = "user_id STRING, ts BIGINT, page_number INT, url STRING"
required = ["user_id", "ts", "page_number"]
[schema.checks.page_number]
min = 1
max = 300
"""

SESSIONS = """
name = "{name}"
[source]
path = "landing"
max_files_per_trigger = 1
[sessions]
allowed_lateness = "10m"
idle_timeout = "1h"
slow_key_threshold = "1ms"
[sessions.aggregates]
first_url = "first(url)"
last_url = "last(url)"
[sinks.sessions]
path = "sessions"
[sinks.dead_letters]
path = "dead_letters"
[checkpoint]
path = "checkpoint"
"""

PATTERNS = """
name = "{name}"
operator = "patterns"
[source]
path = "landing"
max_files_per_trigger = 1
[patterns]
key = "user_id"
fields = ["url"]
within = "30m"
skip = "skip_past_last_event"
emit_timeouts = true
idle_timeout = "1h"
[[patterns.stages]]
name = "scan"
contiguity = "begin"
where = "url LIKE '/scan/%'"
[[patterns.stages]]
name = "other_host"
contiguity = "followed_by"
where = "url LIKE '/scan/%'"
previous = [{{ field = "url", op = "!=", stage = "scan" }}]
[sinks.matches]
path = "matches"
[sinks.timeouts]
path = "timeouts"
[sinks.dead_letters]
path = "dead_letters"
[checkpoint]
path = "checkpoint"
"""


def pipeline(root: Path, template: str, name: str, landing: Path) -> Path:
    """A pipeline folder under ``root``: its config, a copy of ``landing``, an event-log folder."""
    root.mkdir(parents=True)
    shutil.copytree(landing, root / "landing")
    (root / "events").mkdir()
    config = root / "pipeline.toml"
    config.write_text(template.format(name=name) + SCHEMA + SPARK.format(events=root / "events"))
    return config


def traffic(folder: Path, spec: TrafficSpec = TRAFFIC) -> Path:
    generate_traffic(spec, folder)
    return folder


def command(verb: str, config: Path, *flags: str) -> list[str]:
    return [sys.executable, "-m", "streamwarden.cli.main", verb, str(config), *flags]


def environment() -> dict[str, str]:
    """The driver's UI on 127.0.0.1 too (Spark's UI reads SPARK_LOCAL_IP, not its settings)."""
    return {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}


def run(verb: str, config: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command(verb, config, *flags),
        capture_output=True,
        text=True,
        env=environment(),
        timeout=1200,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done


def rows(
    folder: Path, *, drop: tuple[str, ...] = ("batch_id", "ingest_time")
) -> list[tuple[Any, ...]]:
    """Every row a Parquet sink holds, without the columns ``drop`` (by default those that
    differ between two runs: the batch a row was written in, the wall-clock time a dead letter
    was taken in), sorted."""
    table = ds.dataset(folder, format="parquet", partitioning="hive").to_table()
    table = table.drop_columns([c for c in drop if c in table.column_names])
    return sorted(
        tuple(json.dumps(v, sort_keys=True, default=str) for v in row.values())
        for row in table.to_pylist()
    )


def events(root: Path) -> list[dict[str, Any]]:
    """Spark's event log of the one application run under ``root``."""
    [log] = [p for p in (root / "events").iterdir() if not p.name.endswith(".inprogress")]
    # Spark 4 writes a folder of rolled files (events_<n>_<app>) unless rolling is off
    files = sorted(log.glob("events_*"), key=lambda f: int(f.name.split("_")[1]))
    return [
        json.loads(line)
        for f in files or [log]
        for line in f.read_text().splitlines()
        if line.strip()
    ]


def app_id(root: Path) -> str:
    [start] = [e for e in events(root) if e["Event"] == "SparkListenerApplicationStart"]
    return str(start["App ID"])


def state_task_executors(log: list[dict[str, Any]]) -> dict[str, int]:
    """Executor id -> successful state-store tasks it ran (tasks reporting Spark's SQL metric
    "number of total state rows", as only stateful operators do)."""
    counts: dict[str, int] = {}
    for event in log:
        if event["Event"] != "SparkListenerTaskEnd":
            continue
        info = event["Task Info"]
        if info.get("Failed") or info.get("Killed"):
            continue
        names = {a.get("Name") for a in info.get("Accumulables", [])}
        if "number of total state rows" in names:
            counts[info["Executor ID"]] = counts.get(info["Executor ID"], 0) + 1
    return counts


def wait_until(
    condition: Callable[[], Any],
    process: subprocess.Popen[bytes],
    what: str,
    timeout_s: float = 900,
) -> Any:
    """Polls ``condition`` while the run goes on; its first true value."""
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        assert process.poll() is None, f"the run ended before {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)
    return value
