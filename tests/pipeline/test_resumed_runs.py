"""Runs that resume a checkpoint and find no new input: ``--drain`` still closes every session
and frees all state (it knows only the checkpoint's watermark), and no batch is reported that
did not run."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamwarden.errors import PipelineError
from streamwarden.pipeline import Pipeline
from streamwarden.pipeline.outputs import account
from streamwarden.sinks.parquet import batch_dir_name
from tests.support import pageview, pipeline_config, write_batches

pytestmark = pytest.mark.spark


def state_rows(result) -> list[int]:
    return [op["numRowsTotal"] for op in result.progress[-1]["stateOperators"]]


def test_a_drain_with_no_new_input_frees_the_state_an_earlier_run_left(spark, tmp_path):
    events = [pageview("u1", 0), pageview("u1", 5), pageview("u2", 7)]
    write_batches(tmp_path / "landing", [events])
    config = pipeline_config(tmp_path, sessions={"allowed_lateness": "10m"})
    first = Pipeline(config, spark).run(once=True)
    assert state_rows(first) == [2]  # both users' sessions still open
    drained = Pipeline(config, spark).run(once=True, drain=True)
    assert state_rows(drained) == [0]
    assert config.sinks["sessions"] is not None
    accounting = account(spark, config.sinks["sessions"].path, config.sinks["dead_letters"].path, 3)
    assert accounting.balanced and accounting.sessions == 2, accounting.describe()


def test_a_run_with_nothing_to_do_reports_no_batch(spark, tmp_path):
    # Spark reports an idle trigger under the id of the batch that has not run; it is no batch
    write_batches(tmp_path / "landing", [[pageview("u1", 0)]])
    config = pipeline_config(tmp_path)
    first = Pipeline(config, spark).run(once=True)
    ran = [p["batchId"] for p in first.progress]
    again = Pipeline(config, spark).run(once=True)
    assert all("addBatch" in p["durationMs"] for p in again.progress)
    assert all(p["batchId"] > max(ran) for p in again.progress)


def test_a_batch_every_sink_wrote_before_a_crash_replays_its_state_and_writes_nothing_twice(
    spark, tmp_path
):
    # batch 1 closes u1's session and dead-letters a too-late event: both sinks write it
    batches = [
        [pageview("u1", 0), pageview("u2", 100)],
        [pageview("u3", 0), "not json"],
    ]
    write_batches(tmp_path / "landing", batches)
    config = pipeline_config(tmp_path)
    Pipeline(config, spark).run(once=True)
    assert config.sinks["sessions"] is not None
    for sink in (config.sinks["sessions"].path, config.sinks["dead_letters"].path):
        assert (sink / batch_dir_name(1)).is_dir()
    # the crash: after the sinks wrote batch 1, before Spark committed it
    commits = config.checkpoint.path / "commits"
    for name in ("1", ".1.crc"):
        (commits / name).unlink()
    resumed = Pipeline(config, spark).run(once=True, drain=True)
    assert resumed.progress[0]["batchId"] == 1  # replayed, its state computed again
    assert state_rows(resumed) == [0]
    accounting = account(spark, config.sinks["sessions"].path, config.sinks["dead_letters"].path, 4)
    assert accounting.balanced and accounting.sessions == 2, accounting.describe()


def test_a_checkpoint_missing_a_state_file_fails_saying_so_and_what_to_do(spark, tmp_path):
    write_batches(tmp_path / "landing", [[pageview("u1", 0)]])
    config = pipeline_config(tmp_path)
    Pipeline(config, spark).run(once=True)
    state = config.checkpoint.path / "state" / "0" / "0"
    latest = max(int(f.name.split("_")[0]) for f in state.glob("*.changelog"))
    for f in state.glob(f"*{latest}_*"):
        f.unlink()
    write_batches(tmp_path / "landing", [[pageview("u1", 5)]], first_index=1)
    with pytest.raises(PipelineError) as caught:
        Pipeline(config, spark).run(once=True)
    message = str(caught.value)
    assert "FileNotFoundException" in message and f"{latest}_" in message
    assert "Python Proxy" not in message and "Traceback" not in message
    assert "restore it from a copy, or start over on a new checkpoint.path" in message


def test_a_commit_deleted_without_its_checksum_fails_saying_what_to_delete(spark, tmp_path):
    # a user replays the last batch by deleting commits/N by hand and leaves the hidden .N.crc;
    # Spark then blames "Multiple streaming queries", which is not the cause
    write_batches(tmp_path / "landing", [[pageview("u1", 0), "not json"]])
    config = pipeline_config(tmp_path)
    Pipeline(config, spark).run(once=True)
    commits = config.checkpoint.path / "commits"
    last = max(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    (commits / str(last)).unlink()
    with pytest.raises(PipelineError) as caught:
        Pipeline(config, spark).run(once=True)
    message = str(caught.value)
    assert "Multiple streaming queries" in message  # Spark's words, then what is really wrong
    assert "no other query uses the checkpoint" in message
    named = message.split("Delete ")[1].split(" and run again")[0].split(", ")
    assert named and all(Path(p).parent == commits and p.endswith(".crc") for p in named)
    for p in named:  # what the message says to do
        Path(p).unlink()
    Pipeline(config, spark).run(once=True, drain=True)
    assert config.sinks["sessions"] is not None
    accounting = account(spark, config.sinks["sessions"].path, config.sinks["dead_letters"].path, 2)
    assert accounting.balanced and accounting.sessions == 1, accounting.describe()


def follow_the_advice(message: str) -> None:
    """Deletes the files a 'delete A and B (if present), then run again' message names."""
    named = message.split("delete ", 1)[1].split(" (if present)")[0]
    for path in named.replace(" and ", ", ").split(", "):
        Path(path).unlink(missing_ok=True)


@pytest.mark.parametrize("log", ["commits", "offsets"])
def test_a_log_file_cut_short_fails_saying_what_to_delete_and_the_run_then_resumes_exactly_once(
    spark, tmp_path, log
):
    # a power loss right after Spark renamed the file into place leaves it empty; for offsets,
    # the crash came before the batch ran (no commit, no sink holds it)
    write_batches(tmp_path / "landing", [[pageview("u1", 0), "not json"], [pageview("u1", 5)]])
    config = pipeline_config(tmp_path)
    Pipeline(config, spark).run(once=True)
    checkpoint = config.checkpoint.path
    last = max(int(p.name) for p in (checkpoint / "offsets").iterdir() if p.name.isdigit())
    if log == "offsets":
        (checkpoint / "commits" / str(last)).unlink()
        (checkpoint / "commits" / f".{last}.crc").unlink()
    (checkpoint / log / str(last)).write_text("")
    write_batches(tmp_path / "landing", [[pageview("u1", 50), pageview("u2", 51)]], first_index=2)
    with pytest.raises(PipelineError) as caught:
        Pipeline(config, spark).run(once=True)
    message = str(caught.value)
    assert "Incomplete log file" in message  # Spark's words, then what is wrong and what to do
    assert f"{checkpoint / log / str(last)} is cut short" in message
    follow_the_advice(message)
    Pipeline(config, spark).run(once=True, drain=True)
    assert config.sinks["sessions"] is not None
    accounting = account(spark, config.sinks["sessions"].path, config.sinks["dead_letters"].path, 5)
    assert accounting.balanced and accounting.sessions == 3, accounting.describe()
