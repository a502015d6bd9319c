"""Windowed aggregation as a pipeline runs it (``operator = "windows"``): tumbling and hopping
windows per group equal a pandas computation of the same windows over the events the watermark
let in, late events inside the lateness update their windows, later ones are ``too_late`` dead
letters (never silent), an idle input still closes every window and frees its state, and every
record is accounted for (a hopping window counts each event once per window it falls in)."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from streamwarden.config import PipelineConfig
from streamwarden.operators.base import account_run
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.idle import write_tick
from streamwarden.pipeline.outputs import read_output
from streamwarden.pipeline.runner import ticks_dir
from tests.support import (
    T0_MS,
    kill_when_written,
    run_command,
    windows_pipeline_config,
    write_batches,
)

pytestmark = pytest.mark.spark

MIN = 60_000
AGGREGATES = {
    "payments": "count()",
    "total": "sum(amount)",
    "accounts": "count_distinct(account)",
}


def windows_config(root: Path, **windows: Any) -> PipelineConfig:
    lateness = {"allowed_lateness": "2m", "max_out_of_orderness": "0s"}
    return windows_pipeline_config(root, aggregates=AGGREGATES, **lateness, **windows)


def payments(seed: int, batches: int = 5, per_batch: int = 40) -> list[list[dict[str, Any]]]:
    """Payments of 12 accounts at 4 merchants, each batch a minute of event time later than
    the one before, a fifth of them late: 0 to 5 minutes behind their batch's minute (within
    the lateness of 2 minutes, or beyond it)."""
    rng = random.Random(seed)
    out = []
    for b in range(batches):
        batch = []
        for _ in range(per_batch):
            at = T0_MS + b * MIN + rng.randrange(MIN)
            if rng.random() < 0.2:
                at -= rng.randrange(5 * MIN)
            batch.append(
                {
                    "account": f"a{rng.randrange(12)}",
                    "merchant": f"m{rng.randrange(4)}",
                    "at": at,
                    "amount": round(rng.uniform(1, 100), 2),
                }
            )
        out.append(batch)
    return out


def admitted(batches: list[list[dict[str, Any]]], size: int, slide: int, lateness: int):
    """The events the watermark lets in, and those too late: Spark's batch N runs under the
    watermark of batches 0..N-1 (delay 0); an event is too late when the first of its windows
    to close has passed its end plus the lateness."""
    kept, late, watermark = [], [], None
    for batch in batches:
        for e in batch:
            first = e["at"] - e["at"] % slide - size + slide
            closed = watermark is not None and first + size + lateness <= watermark
            (late if closed else kept).append(e)
        top = max(e["at"] for e in batch)
        watermark = top if watermark is None else max(watermark, top)
    return kept, late


def pandas_windows(events: list[dict[str, Any]], size: int, slide: int) -> pd.DataFrame:
    """The windows of ``events`` by merchant, computed by pandas: each event in every window
    ``[start, start + size)`` that holds it, starts aligned to the epoch."""
    frame = pd.DataFrame(events)
    frame["start"] = frame["at"].map(
        lambda t: list(range(t - t % slide - size + slide, t + 1, slide))
    )
    frame = frame.explode("start")
    grouped = frame.groupby(["merchant", "start"])
    out = grouped.agg(
        payments=("amount", "size"),
        total=("amount", "sum"),
        accounts=("account", "nunique"),
    ).reset_index()
    out["start"] = out["start"].astype("int64")
    return out.sort_values(["merchant", "start"]).reset_index(drop=True)


def written_windows(spark, root: Path) -> pd.DataFrame:
    """The last revision of each window the pipeline wrote, as pandas computes them."""
    rows = read_output(spark, root / "windows")
    assert rows is not None
    latest: dict[str, Any] = {}
    for r in rows.collect():
        if r.window_id not in latest or r.revision > latest[r.window_id].revision:
            latest[r.window_id] = r
    out = pd.DataFrame(
        [
            {
                "merchant": r.merchant,
                "start": int(r.window_start.timestamp() * 1000),
                "payments": r.payments,
                "total": r.total,
                "accounts": r.accounts,
            }
            for r in latest.values()
        ]
    )
    return out.sort_values(["merchant", "start"]).reset_index(drop=True)


@pytest.mark.parametrize(("slide", "emit"), [(None, "final"), ("30s", "updates")], ids=str)
def test_windows_equal_pandas_and_late_events_are_in_their_window_or_dead_letters(
    spark, tmp_path, slide, emit
):
    batches = payments(seed=40)
    write_batches(tmp_path / "landing", [[json.dumps(e) for e in b] for b in batches])
    config = windows_config(tmp_path, emit=emit, **({"slide": slide} if slide else {}))
    slide_ms = 30_000 if slide else MIN
    run = Pipeline(config, spark).run(once=True, drain=True)

    kept, late = admitted(batches, MIN, slide_ms, 2 * MIN)
    assert late and len(kept) > len(late)  # the data has late events on both sides of the bound
    expected = pandas_windows(kept, MIN, slide_ms)
    got = written_windows(spark, tmp_path)
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)

    dead = read_output(spark, tmp_path / "dead_letters")
    assert dead is not None
    assert sorted((d.reason, json.loads(d.raw)["at"]) for d in dead.collect()) == sorted(
        ("too_late", e["at"]) for e in late
    )
    accounting = account_run(spark, config, sum(len(b) for b in batches), run.batches)
    assert accounting.balanced, accounting.describe()
    if slide:
        assert "each event in 2" in accounting.describe()
    if emit == "updates":  # a revision per batch that changed a window, numbered from 0
        assert_revisions_are_one_per_batch(spark, tmp_path)


def assert_revisions_are_one_per_batch(spark, root: Path) -> None:
    rows = read_output(spark, root / "windows")
    assert rows is not None
    by_window: dict[str, list[int]] = {}
    for r in rows.collect():
        by_window.setdefault(r.window_id, []).append(r.revision)
    assert all(sorted(r) == list(range(len(r))) for r in by_window.values())
    assert any(len(r) > 1 for r in by_window.values())  # later batches revised some windows


def test_an_idle_input_closes_every_window_and_frees_its_state(spark, tmp_path):
    events = [
        {"account": "a", "merchant": "m", "at": T0_MS + 5_000, "amount": 1.0},
        {"account": "b", "merchant": "n", "at": T0_MS + 70_000, "amount": 2.0},
    ]
    write_batches(tmp_path / "landing", [[json.dumps(e) for e in events]])
    config = windows_config(tmp_path)
    pipeline = Pipeline(config, spark)
    before = pipeline.run(once=True)
    assert before.progress[-1]["stateOperators"][0]["numRowsTotal"] == 2
    assert read_output(spark, tmp_path / "windows") is None

    write_tick(ticks_dir(config), T0_MS + 70_000 + 60 * MIN)  # what a continuous run writes
    after = pipeline.run(once=True)
    assert after.progress[-1]["stateOperators"][0]["numRowsTotal"] == 0
    written = read_output(spark, tmp_path / "windows")
    assert written is not None
    assert sorted((r.merchant, r.payments) for r in written.collect()) == [("m", 1), ("n", 1)]


CRASH_TOML = """
name = "windows-crash"
operator = "windows"
[schema]
key = "account"
time = "at"
fields = "account STRING, merchant STRING, at BIGINT, amount DOUBLE"
[source]
path = "landing"
max_files_per_trigger = 1
[windows]
size = "1m"
slide = "30s"
by = ["merchant"]
allowed_lateness = "2m"
max_out_of_orderness = "0s"
emit = "updates"
[windows.aggregates]
payments = "count()"
total = "sum(amount)"
accounts = "count_distinct(account)"
[sinks.windows]
kind = "delta"
path = "windows"
[sinks.dead_letters]
path = "dead_letters"
[checkpoint]
path = "checkpoint"
[spark]
shuffle_partitions = 2
[monitoring]
prometheus_port = "off"
"""


@pytest.mark.soak  # fault injection: two pipeline processes, one SIGKILLed (make soak)
def test_a_killed_run_resumes_to_the_windows_of_an_uninterrupted_run(spark, tmp_path):
    """Hopping windows emitting updates to a Delta table, which MERGEs each window's revisions
    by its id: a run killed after its third batch and restarted holds the same windows as an
    uninterrupted run, and they equal pandas."""
    batches = payments(seed=42, batches=6)
    lines = [[json.dumps(e) for e in b] for b in batches]
    reference, crashed = tmp_path / "reference", tmp_path / "crashed"
    for root in (reference, crashed):
        write_batches(root / "landing", lines)
        (root / "pipeline.toml").write_text(CRASH_TOML)
    subprocess.run(run_command(reference / "pipeline.toml", "--once", "--drain"), check=True)

    command = run_command(crashed / "pipeline.toml", "--once", "--drain")
    kill_when_written(command, crashed / "checkpoint" / "commits" / "2")
    restarted = subprocess.run(command, capture_output=True, text=True, check=False)
    assert restarted.returncode == 0, restarted.stderr[-2000:]

    def table(root: Path) -> list[tuple[Any, ...]]:
        rows = spark.read.format("delta").load(str(root / "windows")).drop("batch_id")
        return sorted(tuple(r) for r in rows.select(*sorted(rows.columns)).collect())

    assert table(crashed) == table(reference)
    kept, _ = admitted(batches, MIN, 30_000, 2 * MIN)
    assert len(table(crashed)) == len(pandas_windows(kept, MIN, 30_000))  # one row per window
