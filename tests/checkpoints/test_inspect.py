"""``inspect`` on real checkpoints: what it reports, that it flags state without a deadline,
that it does not flag streamwarden's bounded sessions state, and that it changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamwarden.checkpoints.files import CheckpointFiles
from streamwarden.checkpoints.inspect import inspect_checkpoint
from streamwarden.checkpoints.render import report_json, report_text
from streamwarden.errors import NotACheckpointError, StateError

GAP_PLUS_LATENESS_MS = 40 * 60_000


def snapshot(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_size for p in folder.rglob("*")}


@pytest.fixture(scope="module")
def sessions_inspected(spark, sessions_checkpoint):
    """The report, and the checkpoint's files (name: size) before and after inspecting it."""
    before = snapshot(sessions_checkpoint)
    report = inspect_checkpoint(spark, sessions_checkpoint)
    return report, before, snapshot(sessions_checkpoint)


@pytest.fixture(scope="module")
def sessions_report(sessions_inspected):
    return sessions_inspected[0]


@pytest.fixture(scope="module")
def leaky_report(spark, leaky_aggregation_checkpoint):
    return inspect_checkpoint(spark, leaky_aggregation_checkpoint)


def test_sessions_report_names_the_operator_its_partitions_and_batches(sessions_report):
    (op,) = sessions_report.operators
    assert op.name == "transformWithStateExec"
    assert op.time_mode == "EventTime"
    assert op.partitions == 2 == sessions_report.shuffle_partitions
    assert op.min_batch == 0 and op.max_batch == sessions_report.last_committed
    assert [s.name for s in op.states] == ["user_sessions"]


def test_sessions_rows_per_partition_add_up_and_match_the_timers(sessions_report):
    (op,) = sessions_report.operators
    (state,) = op.states
    assert state.rows == state.keys > 0
    assert sum(p.rows for p in state.partitions) == state.rows
    assert {p.partition for p in state.partitions} <= {0, 1}
    assert op.timers is not None and op.timers.rows == state.keys
    assert all(d.bytes > 0 for d in op.disk)


def test_sessions_state_is_not_flagged(sessions_report):
    (state,) = sessions_report.operators[0].states
    assert state.leak.suspect_keys == 0
    assert not sessions_report.leak_suspected
    assert "no leak suspected" in report_text(sessions_report)


def test_sessions_key_age_is_time_since_last_event_and_within_gap_plus_lateness(
    sessions_report,
):
    (state,) = sessions_report.operators[0].states
    assert state.age_meaning == "time since the key's last event"
    assert sum(n for _, n in state.age_histogram) == state.rows
    older = dict(state.age_histogram)
    assert older["1-6h"] == older["6-24h"] == older["1-7d"] == older[">= 7d"] == 0


def test_heaviest_keys_are_ordered_by_size(sessions_report):
    (state,) = sessions_report.operators[0].states
    sizes = [k.approx_bytes for k in state.heaviest_keys]
    assert len(sizes) == 5 and sizes == sorted(sizes, reverse=True)
    assert json.loads(state.heaviest_keys[0].key)["value"].startswith("u")


def test_per_batch_sizes_cover_every_batch_and_metadata_stays_small(sessions_report):
    batches = sessions_report.batches
    assert [b.batch_id for b in batches] == list(range(len(batches)))
    assert all(b.committed and b.offsets_bytes > 0 and b.commit_bytes > 0 for b in batches)
    assert batches[0].state_written_bytes > 0
    assert all(b.offsets_bytes < 4096 and b.commit_bytes < 4096 for b in batches)


def test_aggregation_without_watermark_is_flagged_with_every_key(leaky_report):
    (op,) = leaky_report.operators
    assert op.name == "stateStoreSave"
    (state,) = op.states
    assert state.keys == 30
    assert state.leak.suspect_keys == 30
    assert "no event-time column" in state.leak.reason
    assert len(state.leak.sample) == 5
    assert leaky_report.leak_suspected
    text = report_text(leaky_report)
    assert "LEAK SUSPECT" in text and "LEAK SUSPECTED in operator 0 (stateStoreSave)" in text


def test_aggregation_age_cannot_be_derived_and_the_report_says_so(leaky_report):
    (state,) = leaky_report.operators[0].states
    assert state.age_histogram is None
    assert "key age: not derivable" in report_text(leaky_report)


def test_json_report_is_plain_json_with_the_verdicts(leaky_report, sessions_report):
    leaky = json.loads(json.dumps(report_json(leaky_report)))
    assert leaky["leak_suspected"] is True
    assert leaky["operators"][0]["states"][0]["leak"]["suspect_keys"] == 30
    bounded = json.loads(json.dumps(report_json(sessions_report)))
    assert bounded["leak_suspected"] is False
    assert bounded["operators"][0]["timers"]["rows"] > 0


def test_inspect_leaves_the_checkpoint_unchanged(sessions_inspected):
    _, before, after = sessions_inspected
    assert after == before


def test_a_folder_that_is_not_a_checkpoint_is_refused_with_a_hint(tmp_path):
    with pytest.raises(NotACheckpointError, match="not a streaming checkpoint"):
        CheckpointFiles(tmp_path)
    config = tmp_path / "p.toml"
    config.write_text("")
    with pytest.raises(NotACheckpointError, match="that is a config file"):
        CheckpointFiles(config)
    with pytest.raises(NotACheckpointError, match="does not exist"):
        CheckpointFiles(tmp_path / "missing")


@pytest.mark.soak  # Python transformWithState starts Python workers: ~2 min on this machine
def test_keys_with_state_and_no_timer_are_flagged_and_only_those(spark, forgetful_tws_checkpoint):
    report = inspect_checkpoint(spark, forgetful_tws_checkpoint)
    (op,) = report.operators
    assert op.name.startswith("transformWithState") and op.time_mode == "EventTime"
    (state,) = op.states
    assert state.name == "count" and state.keys == 30
    assert op.timers is not None and op.timers.rows == 15
    assert state.leak.suspect_keys == 15
    assert state.leak.reason == "no TTL and no registered timer for these keys"
    odd = {json.loads(k)["user_id"] for k in state.leak.sample}
    assert all(int(user[1:]) % 2 == 1 for user in odd)
    assert report.leak_suspected


def test_a_checkpoint_under_a_path_with_spaces_reads_like_any_other(
    spark, sessions_checkpoint, sessions_report, tmp_path
):
    import shutil

    moved = tmp_path / "checkpoints of the team" / "sessions run"
    shutil.copytree(sessions_checkpoint, moved)
    report = inspect_checkpoint(spark, moved)
    ((op,), (original,)) = report.operators, sessions_report.operators
    assert [(s.name, s.rows) for s in op.states] == [(s.name, s.rows) for s in original.states]
    assert op.timers is not None and op.timers.rows == original.timers.rows


def test_an_unreadable_checkpoint_under_a_path_with_spaces_is_named_by_its_own_path(
    spark, sessions_checkpoint, tmp_path
):
    import shutil

    moved = tmp_path / "checkpoints of the team" / "damaged run"
    shutil.copytree(sessions_checkpoint, moved)
    for stored in (moved / "state" / "0").rglob("*"):
        if stored.is_file() and not stored.name.startswith("_"):
            stored.write_bytes(b"not a state file")
    with pytest.raises(StateError) as caught:
        inspect_checkpoint(spark, moved)
    message = str(caught.value)
    assert str(moved) in message  # the path the user gave, not the plain-named link Spark read
    assert "streamwarden-checkpoint-" not in message


@pytest.mark.parametrize(
    ("file", "content", "what"),
    [
        ("metadata", b"nope", "not JSON"),
        ("metadata", b"[]", "a JSON list where an object belongs"),
        ("offsets/0", b'v1\n{"batchWatermarkMs": \n', "not JSON"),
        ("offsets/0", b"v1\n{\xff\n", "not UTF-8 text"),
    ],
)
def test_a_damaged_checkpoint_log_file_is_named_with_what_to_do(tmp_path, file, content, what):
    checkpoint = tmp_path / "checkpoint"
    (checkpoint / "offsets").mkdir(parents=True)
    (checkpoint / "metadata").write_text('{"id": "q"}')
    (checkpoint / "offsets" / "0").write_text('v1\n{"batchWatermarkMs": 0}\n')
    (checkpoint / file).write_bytes(content)
    files = CheckpointFiles(checkpoint)
    with pytest.raises(StateError) as caught:
        files.query_id() if file == "metadata" else files.offset_metadata(0)
    message = str(caught.value)
    assert f"checkpoint file {str(checkpoint / file)!r} is damaged ({what}" in message
    assert "restore it from a copy" in message


def test_state_on_disk_is_split_into_live_state_and_retained_history(sessions_report):
    state = sessions_report.state
    files = CheckpointFiles(Path(sessions_report.checkpoint))
    disk = sum(d.bytes for d in files.partition_disk())
    assert state.live_bytes > 0 and state.history_bytes >= 0
    assert state.live_bytes + state.history_bytes == disk
    text = report_text(sessions_report)
    assert "state on disk: live " in text and "retained history " in text
