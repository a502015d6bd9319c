"""``rescale`` on a real sessions checkpoint: 8 -> 4 -> 8 state partitions between runs, and
the pipeline's output is exactly that of the same runs without any rescale."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from streamwarden.checkpoints.files import CheckpointFiles
from streamwarden.checkpoints.rescale import rescale_checkpoint
from streamwarden.checkpoints.run_lock import checkpoint_holder, hold_checkpoint
from streamwarden.checkpoints.state_reader import list_operators
from streamwarden.errors import (
    CheckpointInUseError,
    NotACheckpointError,
    StateError,
    UsageError,
)
from streamwarden.local.generator import TrafficSpec, generate_traffic
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import read_output
from tests.support import pipeline_config, spark_settings

SPEC = TrafficSpec(
    users=100,
    events=900,
    rate_per_second=0.2,
    events_per_file=300,
    late_fraction=0.03,
    malformed_fraction=0.01,
    ts_format="millis",
    seed=13,
)


def phased_runs(spark, root: Path, files: list[Path], between) -> list[dict | None]:
    """One ``--once`` run per file (the last one drained); ``between(phase, checkpoint)``
    is called after each run but the last. Returns who held the checkpoint at each batch."""
    config = pipeline_config(root, sessions={"allowed_lateness": "10m"})
    (root / "landing").mkdir(parents=True)
    holders = []
    for phase, file in enumerate(files):
        shutil.copy2(file, root / "landing" / file.name)
        last = phase == len(files) - 1
        Pipeline(config, spark).run(
            once=True,
            drain=last,
            on_progress=lambda *_: holders.append(checkpoint_holder(config.checkpoint.path)),
        )
        if not last:
            between(phase, config.checkpoint.path)
    return holders


def output_rows(spark, root: Path) -> tuple[list[tuple], list[tuple]]:
    sessions = read_output(spark, root / "sessions").drop("batch_id")
    dead = read_output(spark, root / "dead_letters").select("raw", "reason")
    return sorted(map(tuple, sessions.collect())), sorted(map(tuple, dead.collect()))


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("rescale")
    files = generate_traffic(SPEC, base / "generated").files
    assert len(files) == 3
    reports, partitions_seen, holders = [], [], []

    def rescale(phase: int, checkpoint: Path) -> None:
        partitions_seen.append(CheckpointFiles(checkpoint).shuffle_partitions())
        reports.append(rescale_checkpoint(spark, checkpoint, 4 if phase == 0 else 8))

    with spark_settings(spark, {"spark.sql.shuffle.partitions": "8"}):  # pinned by batch 0
        holders += phased_runs(spark, base / "reference", files, lambda *_: None)
        holders += phased_runs(spark, base / "rescaled", files, rescale)
    return base, reports, partitions_seen, holders


def test_state_goes_8_to_4_to_8_partitions_and_each_run_uses_the_new_count(runs):
    _, reports, partitions_seen, _ = runs
    assert [(r.partitions_before, r.partitions_after) for r in reports] == [(8, 4), (4, 8)]
    assert partitions_seen == [8, 4]  # the run between the rescales ran on 4 partitions


def test_each_rescale_keeps_every_state_row_and_timer(runs):
    _, reports, _, _ = runs
    for report in reports:
        assert report.rows_before == report.rows_after
        assert report.rows_before["0/user_sessions"] > 0
        assert report.rows_before["0/timers"] == report.rows_before["0/user_sessions"]
        assert report.repartition_seconds > 0


def test_the_resumed_pipeline_writes_exactly_what_an_unrescaled_run_writes(spark, runs):
    base, _, _, _ = runs
    reference = output_rows(spark, base / "reference")
    assert reference[0] and reference[1]
    assert output_rows(spark, base / "rescaled") == reference


def test_the_final_checkpoint_reports_8_partitions(spark, runs):
    base, _, _, _ = runs
    (op,) = list_operators(spark, base / "rescaled" / "checkpoint")
    assert op.partitions == 8


def test_a_running_pipeline_holds_its_checkpoint_and_releases_it_when_done(runs):
    holders = runs[3]
    assert holders and all(h and h["what"] == "pipeline 'sessions'" for h in holders)
    assert checkpoint_holder(runs[0] / "reference" / "checkpoint") is None


def test_rescale_refuses_while_a_pipeline_holds_the_checkpoint(spark, runs):
    checkpoint = runs[0] / "reference" / "checkpoint"
    with (
        hold_checkpoint(checkpoint, "pipeline 'sessions'"),
        pytest.raises(CheckpointInUseError, match="in use by pipeline 'sessions'"),
    ):
        rescale_checkpoint(spark, checkpoint, 4)


def test_rescale_refuses_an_uncommitted_last_batch(spark, runs, tmp_path):
    checkpoint = tmp_path / "checkpoint"
    shutil.copytree(runs[0] / "reference" / "checkpoint", checkpoint)
    files = CheckpointFiles(checkpoint)
    last = files.last_committed()
    shutil.copy(checkpoint / "offsets" / str(last), checkpoint / "offsets" / str(last + 1))
    with pytest.raises(StateError, match="planned but never committed"):
        rescale_checkpoint(spark, checkpoint, 4)


def test_rescale_refuses_the_count_it_already_has_and_a_non_checkpoint(spark, runs, tmp_path):
    with pytest.raises(UsageError, match="already has 8 state partitions"):
        rescale_checkpoint(spark, runs[0] / "reference" / "checkpoint", 8)
    with pytest.raises(NotACheckpointError):
        rescale_checkpoint(spark, tmp_path, 4)


def test_a_checkpoint_under_a_path_with_spaces_rescales_like_any_other(spark, runs, tmp_path):
    checkpoint = tmp_path / "checkpoints of the team" / "sessions run"
    shutil.copytree(runs[0] / "reference" / "checkpoint", checkpoint)
    report = rescale_checkpoint(spark, checkpoint, 4)
    assert report.rows_after == report.rows_before
    assert CheckpointFiles(checkpoint).shuffle_partitions() == 4
