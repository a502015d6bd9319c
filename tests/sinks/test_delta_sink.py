"""The Delta sink, fed batch DataFrames as ``foreachBatch`` feeds it: one commit per batch
that Delta records under the pipeline's id, replays skipped, sessions kept as their latest
revision, absorbed sessions deleted, a column the output gains added to the table, a MERGE that
changed rows another writer copied in noted."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime

import pytest

from streamwarden.operators.sessions.api import DEAD_LETTER_SHAPE, SESSION_SHAPE
from streamwarden.sinks import delta_log
from streamwarden.sinks.delta import TXN_APP_ID, TXN_VERSION, DeltaBatchSink
from streamwarden.sinks.delta_table import DeltaTarget, current_sessions
from streamwarden.sinks.writer import BatchWriter
from tests.support import spark_settings

APP = "streamwarden.test.0123456789ab"
SCHEMA = (
    "user_id string, session_id string, session_start timestamp, session_end timestamp, "
    "page_count long, revision int, merged_session_ids array<string>"
)


def day(d: int, hour: int = 12) -> datetime:
    return datetime(2026, 1, d, hour, tzinfo=UTC)


def session(sid: str, revision: int, pages: int, start: int = 1, merged=(), user="u1"):
    return (user, sid, day(start), day(start, 13), pages, revision, list(merged))


def sessions_sink(path, **kwargs) -> DeltaBatchSink:
    options = {"latest": True, "partitioned": True, **kwargs}
    return DeltaBatchSink("sessions", DeltaTarget(path=path), APP, SESSION_SHAPE, **options)


def table_rows(spark, path):
    frame = spark.read.format("delta").load(str(path))
    return sorted((r.session_id, r.revision, r.page_count) for r in frame.collect())


def test_sessions_keep_their_highest_revision_and_absorbed_sessions_disappear(spark, workdir):
    path = workdir / "sessions"
    sink = sessions_sink(path)
    first = [session("a", 0, 2), session("b", 0, 3, start=2), session("c", 0, 1)]
    assert sink.write_batch(spark.createDataFrame(first, SCHEMA), 0)
    second = [
        session("a", 2, 9, merged=["b"]),  # a late event bridged a and b: b is absorbed
        session("a", 1, 5),  # an earlier revision in the same batch: the higher one wins
        session("c", 0, 1),  # a revision the table holds already changes nothing
        session("d", 0, 4, start=3),
    ]
    assert sink.write_batch(spark.createDataFrame(second, SCHEMA), 1)
    stale = [session("a", 1, 5), session("d", 1, 6, start=3)]  # a reordered lower revision
    assert sink.write_batch(spark.createDataFrame(stale, SCHEMA), 2)

    assert table_rows(spark, path) == [("a", 2, 9), ("c", 0, 1), ("d", 1, 6)]
    operations = [c.operation for c in delta_log.commits(path)]
    assert operations == ["WRITE", "MERGE", "MERGE"]  # one commit per batch
    frame = spark.read.format("delta").load(str(path))
    assert {r.session_date.isoformat() for r in frame.collect()} == {"2026-01-01", "2026-01-03"}
    assert spark.conf.get(TXN_APP_ID, None) is None and spark.conf.get(TXN_VERSION, None) is None


def test_a_replayed_batch_is_skipped_by_the_sink_and_by_delta_itself(spark, workdir):
    path = workdir / "sessions"
    rows = spark.createDataFrame([session("a", 0, 2)], SCHEMA)
    assert sessions_sink(path).write_batch(rows, 0)
    more = spark.createDataFrame([session("a", 1, 3)], SCHEMA)
    assert sessions_sink(path).write_batch(more, 1)
    # a new process replays batch 1: the sink reads the log and does not compute the rows
    replayed = spark.createDataFrame([session("a", 1, 3), session("z", 0, 1)], SCHEMA)
    assert not sessions_sink(path).write_batch(replayed, 1)
    assert sessions_sink(path).written_batches() == [0, 1]
    # Delta's own check: the same application and version again is no commit
    target = DeltaTarget(path=path)
    target.append(replayed.where("revision = 0"), app_id=APP, version=1, partition_by=())
    assert [c.transactions for c in delta_log.commits(path)] == [{APP: 0}, {APP: 1}]
    assert table_rows(spark, path) == [("a", 1, 3)]
    # which table version holds a batch: what the Delta history store reads a replay before
    assert [delta_log.commit_of(path, APP, b) for b in (0, 1, 2)] == [0, 1, None]


@pytest.mark.soak  # a few seconds each: the default suite keeps the core rules
def test_a_failed_merge_leaves_no_transaction_settings_behind(spark, workdir):
    path = workdir / "sessions"
    sink = sessions_sink(path)
    sink.write_batch(spark.createDataFrame([session("a", 0, 2)], SCHEMA), 0)
    clashing = spark.createDataFrame(
        [("u1", "a", day(1), day(1, 13), "many", 1, [])],
        SCHEMA.replace("page_count long", "page_count string"),
    )
    with pytest.raises(Exception):  # noqa: B017 (Spark's error, whichever it is)
        sink.write_batch(clashing, 1)
    assert spark.conf.get(TXN_APP_ID, None) is None and spark.conf.get(TXN_VERSION, None) is None


def test_a_column_the_output_gains_is_added_to_the_table(spark, workdir):
    path = workdir / "sessions"
    sink = sessions_sink(path)
    sink.write_batch(spark.createDataFrame([session("a", 0, 2)], SCHEMA), 0)
    wider = SCHEMA + ", device string"
    rows = [(*session("a", 1, 3), "phone"), (*session("b", 0, 1), "tv")]
    sink.write_batch(spark.createDataFrame(rows, wider), 1)
    frame = spark.read.format("delta").load(str(path))
    assert sorted((r.session_id, r.device) for r in frame.collect()) == [
        ("a", "phone"),
        ("b", "tv"),
    ]
    assert delta_log.columns(path)[-1] == "device"  # the log's latest schema, read without Spark
    appended = DeltaBatchSink(
        "dead_letters", DeltaTarget(path=workdir / "dl"), APP, DEAD_LETTER_SHAPE,
        latest=True, partitioned=False,
    )  # fmt: skip
    letters = "raw string, reason string, ingest_time timestamp"
    appended.write_batch(spark.createDataFrame([("x", "malformed_json", day(1))], letters), 0)
    appended.write_batch(
        spark.createDataFrame([("y", "too_late", day(2), "u1")], letters + ", user_id string"), 1
    )
    frame = spark.read.format("delta").load(str(workdir / "dl"))
    assert sorted((r.raw, r.user_id) for r in frame.collect()) == [("x", None), ("y", "u1")]
    assert "ingest_date" not in frame.columns  # partition_by = "off"


@pytest.mark.soak  # a few seconds each: the default suite keeps the core rules
def test_every_revision_is_kept_when_asked_and_an_empty_batch_makes_no_commit(spark, workdir):
    path = workdir / "revisions"
    sink = sessions_sink(path, latest=False, partitioned=False)
    sink.write_batch(spark.createDataFrame([session("a", 0, 2)], SCHEMA), 0)
    assert sink.write_batch(spark.createDataFrame([], SCHEMA), 1)
    sink.write_batch(spark.createDataFrame([session("a", 1, 3)], SCHEMA), 2)
    assert table_rows(spark, path) == [("a", 0, 2), ("a", 1, 3)]
    assert [c.transactions[APP] for c in delta_log.commits(path)] == [0, 2]


@pytest.mark.soak  # a few seconds each: the default suite keeps the core rules
def test_a_metastore_table_is_written_and_read_by_name(spark, workdir):
    name = "sw_test_sessions"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    sink = DeltaBatchSink(
        "sessions", DeltaTarget(table=name), APP, SESSION_SHAPE, latest=True, partitioned=True
    )
    try:
        sink.write_batch(spark.createDataFrame([session("a", 0, 2)], SCHEMA), 0)
        sink.write_batch(spark.createDataFrame([session("a", 1, 4)], SCHEMA), 1)
        assert sorted((r.session_id, r.revision) for r in sink.read(spark).collect()) == [("a", 1)]
        assert sink.written_batches() == [0, 1]
    finally:
        spark.sql(f"DROP TABLE IF EXISTS {name}")


def test_current_sessions_of_some_users_in_a_time_range(spark, workdir):
    path = workdir / "sessions"
    rows = [
        session("a", 0, 2, start=1, user="u1"),
        session("b", 0, 2, start=5, user="u1"),
        session("c", 0, 2, start=2, user="u2"),
        session("d", 0, 2, start=2, user="u3"),
    ]
    sessions_sink(path).write_batch(spark.createDataFrame(rows, SCHEMA), 0)
    found = current_sessions(
        spark, DeltaTarget(path=path), ["u1", "u2"], day(1, 13), day(3), key="user_id"
    )
    assert found is not None
    assert sorted(r.session_id for r in found.collect()) == ["a", "c"]
    users = spark.createDataFrame([("u3",)], "user_id string")
    by_frame = current_sessions(spark, DeltaTarget(path=path), users, day(1), day(9), key="user_id")
    assert by_frame is not None and [r.session_id for r in by_frame.collect()] == ["d"]
    missing = DeltaTarget(path=workdir / "none")
    assert current_sessions(spark, missing, ["u1"], day(1), day(2), key="user_id") is None


@pytest.mark.soak  # a few seconds each: the default suite keeps the core rules
def test_the_last_transaction_is_found_after_the_log_was_checkpointed_and_cleaned(spark, workdir):
    path = workdir / "sessions"
    checkpoint_every_2 = {"spark.databricks.delta.properties.defaults.checkpointInterval": "2"}
    with spark_settings(spark, checkpoint_every_2):
        sink = sessions_sink(path, latest=False, partitioned=False)
        for batch in range(3):
            sink.write_batch(spark.createDataFrame([session("a", batch, 1)], SCHEMA), batch)
    log = path / "_delta_log"
    assert list(log.glob("*.checkpoint*.parquet"))
    for commit in sorted(log.glob("*.json"))[:-1]:  # what the log's cleanup removes
        commit.unlink()
    assert delta_log.last_transaction(path, APP) == 2
    assert "session_id" in (delta_log.columns(path) or [])  # the schema from the checkpoint
    shutil.rmtree(log)
    assert delta_log.last_transaction(path, APP) is None


def test_a_merge_that_changes_a_row_another_writer_copied_in_is_noted(spark, workdir):
    path = workdir / "sessions"
    sink = sessions_sink(path)
    writer = BatchWriter([(sink, lambda rows: rows)])
    writer(spark.createDataFrame([session("a", 0, 2), session("b", 0, 1)], SCHEMA), 0)
    # someone else copies session a's row into the table: two rows of one session_id
    copy = spark.read.format("delta").load(str(path)).where("session_id = 'a'")
    copy.write.format("delta").mode("append").save(str(path))
    writer(spark.createDataFrame([session("a", 1, 3), session("c", 0, 1)], SCHEMA), 1)

    [note] = writer.notes_of(1)
    assert (note.kind, note.sink, note.batch_id) == ("sink_rows_duplicated", "sessions", 1)
    assert (note.details["keys"], note.details["rows_changed"]) == (2, 3)
    assert "more than one row of some 'session_id'" in note.message
    assert table_rows(spark, path) == [("a", 1, 3), ("a", 1, 3), ("b", 0, 1), ("c", 0, 1)]
    assert writer.notes_of(1) == []  # taken once
    # a MERGE that changes one row per key notes nothing
    writer(spark.createDataFrame([session("b", 1, 2)], SCHEMA), 2)
    assert writer.notes_of(2) == []
