"""Fault injection: a ``streamwarden run --once --drain`` subprocess killed with SIGKILL (its
whole process group, the JVM too) at chosen points, rerun until it completes, and its output
compared with an uninterrupted run's: sessions by id and revision, matches and timeouts by id,
dead letters as a multiset. 0 lost, 0 doubled.

The kill points are files appearing in the sink and checkpoint folders, watched by polling every
millisecond, so a kill lands within about a millisecond of the write (no sleep decides it):

- ``sink-staging``: a batch's rows being written to a sink's staging folder;
- ``sink-renamed``: right after a sink's batch folder was renamed into place, before the commit;
- ``offsets``: right after Spark renamed ``offsets/N`` into place (the batch is planned);
- ``state``: a state-store file of the batch's version written (changelog or snapshot);
- ``commit``: right after Spark renamed ``commits/N`` into place, before its checksum;
- ``anytime``: a random moment within the first seconds of the run (JVM start included).

A point that a batch never reaches (a batch that writes no sessions) falls back to the next
batch's ``offsets``: every kill is made, and each records where it landed.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from streamwarden.config import load_config
from streamwarden.local.generator import TrafficSpec, generate_traffic
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import read_output
from tests.support import PAGEVIEW_AGGREGATES_TOML, PAGEVIEW_TOML, run_command

POINTS = ("sink-staging", "sink-renamed", "offsets", "state", "commit", "anytime")

#: Traffic that reaches every path that writes state or output: late events a session long
#: (revisions), late bridges (two sessions merge), sessions over the byte cap, too-late
#: records, malformed records, and scanners whose partial matches time out.
SPEC = TrafficSpec(
    users=60,
    events=2_400,
    rate_per_second=0.1,
    think_time=timedelta(minutes=2),
    gap=timedelta(minutes=30),
    late_fraction=0.03,
    late_delay=(timedelta(minutes=10), timedelta(minutes=40)),
    bridge_fraction=0.3,
    # a bridge must come after the session on its far side was written (its end + gap + the
    # watermark delay) and while the near one is still kept (its end + gap + allowed_lateness)
    bridge_delay=(timedelta(minutes=75), timedelta(minutes=100)),
    too_late_fraction=0.02,
    too_late_delay=timedelta(hours=3),
    malformed_fraction=0.01,
    events_per_file=200,
    scanners=8,
)

SESSIONS_TOML = (
    """
name = "faults-sessions"
[source]
path = "landing"
max_files_per_trigger = 1
[sessions]
gap = "30m"
allowed_lateness = "120m"
max_session_bytes = 2500
[sinks.sessions]
path = "sessions"
[sinks.dead_letters]
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

PATTERNS_TOML = (
    """
name = "faults-patterns"
operator = "patterns"
[source]
path = "landing"
max_files_per_trigger = 1
[patterns]
within = "30m"
skip = "skip_past_last_event"
emit_timeouts = true
fields = ["url", "page_number"]
[[patterns.stages]]
name = "scan"
contiguity = "begin"
where = "url LIKE '/scan/%'"
[[patterns.stages]]
name = "other_host"
contiguity = "followed_by"
where = "url LIKE '/scan/%'"
previous = [{ field = "url", op = "!=", stage = "scan" }]
[sinks.matches]
path = "matches"
[sinks.timeouts]
path = "timeouts"
[sinks.dead_letters]
path = "dead_letters"
[checkpoint]
path = "checkpoint"
[spark]
shuffle_partitions = 2
[monitoring]
prometheus_port = "off"
"""
    + PAGEVIEW_TOML
)

CONFIGS = {"sessions": SESSIONS_TOML, "patterns": PATTERNS_TOML}
OUTPUTS = {"sessions": ("sessions",), "patterns": ("matches", "timeouts")}


def prepare(root: Path, operator: str, spec: TrafficSpec = SPEC) -> Path:
    """Landing files and config under ``root``; returns the config's path."""
    generate_traffic(spec, root / "landing")
    config = root / "pipeline.toml"
    config.write_text(CONFIGS[operator])
    return config


def run_reference(spark: object, root: Path) -> None:
    """The uninterrupted run, in this process on the shared session."""
    Pipeline(load_config(root / "pipeline.toml"), spark).run(once=True, drain=True)  # type: ignore[arg-type]


def outputs(spark: object, root: Path, operator: str) -> dict[str, Counter[tuple[object, ...]]]:
    """Every output row as a multiset (a row written twice counts twice), without the batch id
    it was written in (a replayed batch may land in another) and the dead letters' ingestion
    time (when the batch ran, which a rerun changes)."""
    result: dict[str, Counter[tuple[object, ...]]] = {}
    for name in (*OUTPUTS[operator], "dead_letters"):
        frame = read_output(spark, root / name)  # type: ignore[arg-type]
        if frame is None:
            result[name] = Counter()
            continue
        columns = [c for c in frame.columns if c not in ("batch_id", "ingest_time")]
        result[name] = Counter(_hashable(tuple(r)) for r in frame.select(*columns).collect())
    return result


def _hashable(value: object) -> object:
    """Lists (urls, merged session ids, a match's events) as tuples, so rows can be counted."""
    if isinstance(value, list | tuple):
        return tuple(_hashable(v) for v in value)
    return value


@dataclass
class KillReport:
    """What one round of kills did: where each kill landed, and the rows compared."""

    kills: list[str] = field(default_factory=list)
    rows_compared: int = 0


def _committed(root: Path) -> int:
    commits = root / "checkpoint" / "commits"
    if not commits.is_dir():
        return -1
    return max((int(p.name) for p in commits.iterdir() if p.name.isdigit()), default=-1)


def _condition(root: Path, operator: str, point: str, batch: int) -> Callable[[], bool]:
    checkpoint = root / "checkpoint"
    sinks = [root / name for name in (*OUTPUTS[operator], "dead_letters")]

    def offsets(n: int) -> bool:
        return (checkpoint / "offsets" / str(n)).exists()

    def reached() -> bool:
        if point == "sink-staging":
            return any(
                (s / "_staging").is_dir()
                and any(p.name.startswith(f"{batch}-") for p in (s / "_staging").iterdir())
                for s in sinks
            )
        if point == "sink-renamed":
            return any((s / f"batch_id={batch:010d}").exists() for s in sinks)
        if point == "offsets":
            return offsets(batch)
        if point == "state":
            return any((checkpoint / "state" / "0").glob(f"*/{batch + 1}.*"))
        if point == "commit":
            return (checkpoint / "commits" / str(batch)).exists()
        raise ValueError(point)

    return lambda: reached() or offsets(batch + 1)


def _kill_at(command: list[str], cwd: Path, condition: Callable[[], bool] | float) -> bool:
    """Starts ``command`` in its own process group and SIGKILLs the group when ``condition``
    holds (or after that many seconds); False if the run ended first."""
    process = subprocess.Popen(
        command,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 600
    at = time.monotonic() + condition if isinstance(condition, float) else None
    try:
        while not (time.monotonic() >= at if at is not None else condition()):  # type: ignore[operator]
            if process.poll() is not None:
                return False
            assert time.monotonic() < deadline, "the kill point never came"
            time.sleep(0.001)
        os.killpg(process.pid, signal.SIGKILL)
    finally:
        process.wait()
    return process.returncode == -signal.SIGKILL


def kill_round(root: Path, operator: str, kills: int, rng: random.Random) -> KillReport:
    """Kills the run of ``root`` up to ``kills`` times at random points of batches ahead of
    its last commit, then runs it to the end (which must exit 0)."""
    report = KillReport()
    command = run_command(root / "pipeline.toml", "--once", "--drain")
    for _ in range(kills):
        point = rng.choice(POINTS)
        batch = _committed(root) + rng.randint(1, 2)
        condition: Callable[[], bool] | float = (
            rng.uniform(2.0, 25.0)
            if point == "anytime"
            else _condition(root, operator, point, batch)
        )
        if not _kill_at(command, root, condition):
            break  # the run finished before the kill point: nothing left to interrupt
        report.kills.append(point if point == "anytime" else f"{point}@{batch}")
    final = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    assert final.returncode == 0, final.stderr
    return report


def compare(spark: object, reference: Path, crashed: Path, operator: str) -> int:
    """Asserts the crashed run's outputs equal the reference's as multisets; returns the rows
    compared."""
    expected, got = outputs(spark, reference, operator), outputs(spark, crashed, operator)
    for name, rows in expected.items():
        lost, doubled = rows - got[name], got[name] - rows
        assert not lost and not doubled, (
            f"{name}: {sum(lost.values())} lost, {sum(doubled.values())} doubled or extra; "
            f"lost e.g. {sorted(lost, key=repr)[:5]}; extra e.g. {sorted(doubled, key=repr)[:5]}"
        )
    return sum(sum(rows.values()) for rows in expected.values())
