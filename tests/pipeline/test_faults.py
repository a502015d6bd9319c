"""Fault injection (issue 19): runs killed with SIGKILL of their whole process group at random
points (sink write, offsets, state, commit renames, any moment) and stopped with SIGTERM, then
rerun, end with exactly the output of an uninterrupted run: 0 lost, 0 doubled. The harness is in
``tests/pipeline/faults.py``; the long version (``make faults``, marked soak) kills at least 50
times over sessions and patterns and writes its figures for BENCHMARKS.md."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from streamwarden.pipeline.outputs import read_output
from tests.pipeline import faults
from tests.support import run_command, wait_for

SHORT = replace(faults.SPEC, events=1_000, events_per_file=250, users=30, rate_per_second=0.06)


@pytest.mark.soak  # the traffic of `make faults`; the default run kills in test_crash_restart
def test_the_fault_traffic_revises_merges_caps_and_refuses_too_late_records(spark, workdir):
    faults.prepare(workdir, "sessions")
    faults.run_reference(spark, workdir)
    sessions = read_output(spark, workdir / "sessions")
    assert sessions is not None
    assert sessions.where("revision > 0").count() > 0, "no late event revised a session"
    assert sessions.where("size(merged_session_ids) > 0").count() > 0, "no two sessions merged"
    reasons = {r.reason for r in read_output(spark, workdir / "dead_letters").collect()}
    assert {"too_late", "session_byte_cap", "malformed_json"} <= reasons


@pytest.mark.soak  # four JVM starts; the default run: test_crash_restart, test_status (Ctrl-C)
def test_stopped_by_sigterm_and_killed_twice_a_run_ends_with_the_uninterrupted_output(
    spark, workdir
):
    reference, crashed = workdir / "reference", workdir / "crashed"
    for root in (reference, crashed):
        faults.prepare(root, "sessions", SHORT)
    faults.run_reference(spark, reference)

    process = subprocess.Popen(
        run_command(crashed / "pipeline.toml", "--once", "--drain"),
        cwd=crashed,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    wait_for(crashed / "checkpoint" / "offsets" / "1", process)
    os.kill(process.pid, signal.SIGTERM)  # as `kill`, systemd or `docker stop` do
    _, err = process.communicate(timeout=300)
    text = err.decode()
    assert process.returncode == 0, text
    assert "Stopped on SIGTERM: the checkpoint is consistent" in text
    assert "Traceback" not in text and "py4j" not in text.lower(), text

    report = faults.kill_round(crashed, "sessions", kills=2, rng=random.Random(19))
    assert len(report.kills) == 2, report.kills
    assert faults.compare(spark, reference, crashed, "sessions") > 0


@pytest.mark.soak
def test_killed_over_fifty_times_sessions_and_patterns_lose_and_double_nothing(spark, workdir):
    rounds = int(os.environ.get("FAULT_ROUNDS", "7"))
    kills_per_round = int(os.environ.get("FAULT_KILLS", "9"))
    rng = random.Random(int(os.environ.get("FAULT_SEED", "19")))
    first = int(os.environ.get("FAULT_FIRST_ROUND", "0"))  # to run a later round on its own
    figures: dict[str, object] = {"rounds": []}
    for n in range(first, first + rounds):
        operator = ("sessions", "patterns")[n % 2]
        spec = replace(faults.SPEC, seed=100 + n)
        reference, crashed = workdir / f"{n}-reference", workdir / f"{n}-crashed"
        for root in (reference, crashed):
            faults.prepare(root, operator, spec)
        faults.run_reference(spark, reference)
        report = faults.kill_round(crashed, operator, kills_per_round, rng)
        rows = faults.compare(spark, reference, crashed, operator)
        figures["rounds"].append(  # type: ignore[union-attr]
            {"operator": operator, "kills": report.kills, "rows_compared": rows}
        )
        out = Path(os.environ.get("FAULT_FIGURES", "bench/results/faults.json"))
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(figures, indent=1))
    kills = sum(len(r["kills"]) for r in figures["rounds"])  # type: ignore[index,union-attr]
    assert kills >= 50 or rounds * kills_per_round < 50, kills
