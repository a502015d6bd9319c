"""A pattern pipeline killed with SIGKILL mid-run and restarted on its checkpoint writes exactly
the matches, timeouts and dead letters of an uninterrupted run, none of them twice."""

from __future__ import annotations

import subprocess
from datetime import timedelta
from pathlib import Path

import pytest

from streamwarden.config import load_config
from streamwarden.local.generator import TrafficSpec, generate_traffic
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import read_output
from streamwarden.sinks.parquet import batch_dir_name
from tests.support import PAGEVIEW_TOML, kill_when_written, run_command

SPEC = TrafficSpec(
    users=120,
    events=4_000,
    rate_per_second=0.2,
    events_per_file=700,
    scanners=25,
    late_fraction=0.02,
    late_delay=(timedelta(seconds=20), timedelta(seconds=50)),
    too_late_fraction=0.01,
    too_late_delay=timedelta(hours=1),
    malformed_fraction=0.01,
)
FIRST_BATCH_TO_KILL_AT = 3

CONFIG_TOML = (
    """
name = "pattern-crash-test"
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
"""
    + PAGEVIEW_TOML
)


def rows(spark, folder: Path, *columns: str) -> list[tuple[object, ...]]:
    """Every row an output holds, sorted: duplicates stay visible."""
    frame = read_output(spark, folder)
    assert frame is not None, f"{folder} holds no output"
    return sorted(tuple(r) for r in frame.select(*columns).collect())


def outputs(spark, root: Path) -> dict[str, list[tuple[object, ...]]]:
    result_columns = ("key", "match_id", "match_start", "match_end", "events")
    return {
        "matches": rows(spark, root / "matches", *result_columns),
        "timeouts": rows(spark, root / "timeouts", *result_columns, "deadline"),
        "dead_letters": rows(spark, root / "dead_letters", "raw", "reason", "key", "event_time"),
    }


@pytest.mark.soak  # fault injection (a JVM killed and another started); the default run kills
# sessions in test_crash_restart
def test_a_killed_pattern_run_resumes_to_the_output_of_an_uninterrupted_run(spark, workdir):
    reference, crashed = workdir / "reference", workdir / "crashed"
    for root in (reference, crashed):
        generate_traffic(SPEC, root / "landing")
        (root / "pipeline.toml").write_text(CONFIG_TOML)
    Pipeline(load_config(reference / "pipeline.toml"), spark).run(once=True, drain=True)
    expected = outputs(spark, reference)
    # kill just as a batch's matches are written: the first batch from 3 on that has any
    kill_at = min(
        int(p.name.split("=")[1])
        for p in (reference / "matches").glob("batch_id=*")
        if int(p.name.split("=")[1]) >= FIRST_BATCH_TO_KILL_AT
    )

    command = run_command(crashed / "pipeline.toml", "--once", "--drain")
    kill_when_written(command, crashed / "matches" / batch_dir_name(kill_at))
    restarted = subprocess.run(command, capture_output=True, text=True, check=False)
    assert restarted.returncode == 0, restarted.stderr

    got = outputs(spark, crashed)
    assert len(expected["matches"]) > 20 and len(expected["timeouts"]) > 20
    assert {r[1] for r in expected["dead_letters"]} >= {"too_late", "malformed_json"}
    for name in ("matches", "timeouts", "dead_letters"):
        assert got[name] == expected[name], name
    match_ids = [r[1] for r in got["matches"]]
    assert len(match_ids) == len(set(match_ids)), "a match was written twice"
