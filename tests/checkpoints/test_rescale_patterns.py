"""``rescale`` on a real patterns checkpoint, stopped with partial matches waiting: 2 -> 4
state partitions, and the matches and timeouts the pipeline then writes are exactly those of
the same runs without a rescale."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from streamwarden.checkpoints.files import CheckpointFiles
from streamwarden.checkpoints.rescale import rescale_checkpoint
from streamwarden.local.generator import TrafficSpec, generate_traffic
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import read_output
from tests.support import pattern_pipeline_config

pytestmark = pytest.mark.spark

SPEC = TrafficSpec(
    users=60,
    events=600,
    rate_per_second=0.2,
    files=2,
    scanners=6,
    ts_format="millis",
    seed=21,
)

PATTERN = {
    "within": "30m",
    "skip": "skip_past_last_event",
    "emit_timeouts": True,
    "fields": ["url"],
    "stages": [
        {"name": "scan", "contiguity": "begin", "where": "url LIKE '/scan/%'"},
        {
            "name": "other_host",
            "where": "url LIKE '/scan/%'",
            "previous": [{"field": "url", "op": "!=", "stage": "scan"}],
        },
    ],
}


def two_runs(spark, root: Path, files: list[Path], rescale_to: int | None) -> dict:
    config = pattern_pipeline_config(root, PATTERN)
    (root / "landing").mkdir(parents=True)
    report = None
    for phase, file in enumerate(files):
        shutil.copy2(file, root / "landing" / file.name)
        result = Pipeline(config, spark).run(once=True, drain=phase == 1)
        if phase == 0 and rescale_to is not None:
            waiting = result.progress[-1]["stateOperators"][0]["numRowsTotal"]
            assert waiting > 0  # partial matches (and their timers) cross the rescale
            report = rescale_checkpoint(spark, config.checkpoint.path, rescale_to)
    return {
        "matches": rows(spark, root / "matches"),
        "timeouts": rows(spark, root / "timeouts"),
        "partitions": CheckpointFiles(config.checkpoint.path).shuffle_partitions(),
        "report": report,
    }


def rows(spark, folder: Path) -> list[tuple]:
    frame = read_output(spark, folder)
    return [] if frame is None else sorted(map(tuple, frame.drop("batch_id").collect()))


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("rescale-patterns")
    files = generate_traffic(SPEC, base / "generated").files
    assert len(files) == 2
    return two_runs(spark, base / "reference", files, None), two_runs(
        spark, base / "rescaled", files, 4
    )


def test_the_rescale_keeps_every_state_row_and_timer(runs):
    _, rescaled = runs
    report = rescaled["report"]
    assert (report.partitions_before, report.partitions_after) == (2, 4)
    assert report.rows_after == report.rows_before
    assert rescaled["partitions"] == 4


def test_the_resumed_pipeline_finds_exactly_the_matches_and_timeouts_of_an_unrescaled_run(runs):
    reference, rescaled = runs
    assert reference["matches"] and reference["timeouts"]
    assert rescaled["matches"] == reference["matches"]
    assert rescaled["timeouts"] == reference["timeouts"]
