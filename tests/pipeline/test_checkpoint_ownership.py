"""A run refuses a config that is not the pipeline that wrote its checkpoint or sink folders,
where Spark would go on and lose or double records without a word: another operator, another
source, another pattern layout, or sinks that belong to another checkpoint."""

from __future__ import annotations

import shutil

import pytest

from streamwarden.errors import ConfigError, StateError
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.ownership import check_ownership
from tests.support import pageview, pattern_pipeline_config, pipeline_config, write_batches

pytestmark = pytest.mark.spark

SCAN = "url LIKE '/scan/%'"
PATTERN = {
    "within": "30m",
    "stages": [
        {"name": "scan", "contiguity": "begin", "where": SCAN},
        {"name": "again", "where": SCAN},
    ],
}


@pytest.fixture
def sessions_run(spark, tmp_path):
    """A sessions pipeline that ran one batch and left u1's session open."""
    write_batches(tmp_path / "landing", [[pageview("u1", 0), "not json"]])
    config = pipeline_config(tmp_path)
    first = Pipeline(config, spark).run(once=True)
    return tmp_path, config, max(p["batchId"] for p in first.progress)


def test_another_operator_on_the_checkpoint_is_refused_before_the_run(spark, sessions_run):
    root, _, _ = sessions_run
    patterns = pattern_pipeline_config(root, PATTERN)
    with pytest.raises(ConfigError, match="holds the state of operator 'sessions'"):
        Pipeline(patterns, spark).run(once=True)


def test_another_source_path_is_refused_as_it_would_read_every_file_again(sessions_run):
    root, _, _ = sessions_run
    shutil.copytree(root / "landing", root / "landing2")
    moved = pipeline_config(root, source={"path": str(root / "landing2")})
    with pytest.raises(ConfigError, match="every file of the new one would be read again"):
        check_ownership(moved)


def test_a_new_checkpoint_beside_the_outputs_of_an_old_one_is_refused(sessions_run):
    _, config, _ = sessions_run
    shutil.rmtree(config.checkpoint.path)
    with pytest.raises(ConfigError, match=r"sink dead_letters at .* holds batches up to 0"):
        check_ownership(config)


def test_the_same_pipeline_resumes_its_checkpoint(spark, sessions_run):
    root, config, last = sessions_run
    write_batches(root / "landing", [[pageview("u2", 5)]], first_index=1)
    resumed = Pipeline(config, spark).run(once=True)
    assert resumed.progress and all(p["batchId"] > last for p in resumed.progress)
    assert resumed.progress[0]["numInputRows"] == 1


def test_a_pattern_may_change_its_conditions_but_not_its_stages(spark, tmp_path):
    write_batches(tmp_path / "landing", [[pageview("a", 0, url="/scan/h1")]])
    Pipeline(pattern_pipeline_config(tmp_path, PATTERN), spark).run(once=True)
    stages = PATTERN["stages"]
    reworded = [stages[0], {**stages[1], "where": "url LIKE '/scan/h%'"}]
    check_ownership(pattern_pipeline_config(tmp_path, {**PATTERN, "stages": reworded}))
    longer = [*stages, {"name": "third", "where": SCAN}]
    with pytest.raises(ConfigError, match="partial matches of another pattern"):
        check_ownership(pattern_pipeline_config(tmp_path, {**PATTERN, "stages": longer}))


@pytest.mark.parametrize("written", ["", "{cut", "[]"], ids=["empty", "cut", "no-object"])
def test_a_damaged_pipeline_record_is_an_error_naming_the_file_and_the_way_out(
    spark, sessions_run, written
):
    _, config, _ = sessions_run
    record = config.checkpoint.path / "streamwarden" / "pipeline.json"
    record.write_text(written)
    with pytest.raises(StateError) as caught:
        check_ownership(config)
    message = str(caught.value)
    assert str(record) in message and "delete the file and run again" in message
