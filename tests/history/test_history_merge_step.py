"""The history merge step between the engine and the sinks, on real Spark, with each store (the
Delta sessions table and PostgreSQL): the engine's history rows become revisions of stored
sessions, and a batch replayed after a crash (after the store's commit, before Spark's) changes
nothing and gets the same rows."""

from __future__ import annotations

import json

import pytest
from pyspark.sql.types import StructType

from streamwarden.doctor import diagnose
from streamwarden.errors import ConfigError
from streamwarden.history.base import Wanted
from streamwarden.operators.sessions.api import SESSION_SHAPE, session_rows
from streamwarden.operators.sessions.history import HistoryMerge, open_history
from streamwarden.operators.sessions.params import SessionParams
from streamwarden.plan import PipelinePlan
from streamwarden.sinks import delta_log
from streamwarden.sinks.base import open_sink
from tests.history.support import STORES, history_config
from tests.support import minutes

MIN = 60_000
STORED = {
    "session_id": "s-a", "user_id": "u", "start_ms": minutes(0), "end_ms": minutes(5),
    "page_count": 2, "bytes": 20, "first_url": "/a", "last_url": "/b", "urls": None,
    "url_times": None, "revision": 0, "truncated": False,
}  # fmt: skip


def engine_row(schema, **values):
    return tuple(values.get(f.name) for f in schema.fields)


@pytest.fixture
def schema(spark):
    return StructType.fromJson(
        json.loads(spark._jvm.io.streamwarden.engine.EngineOutput.SCHEMA.json())
    )


class Step:
    """The merge step and, for the Delta store, the sessions sink whose MERGE is the store's
    write: :meth:`run` does what the batch writer does with the sessions of one batch."""

    def __init__(self, config, store):
        self.config, self.store = config, store
        params = SessionParams.from_config(config.section, config.validation)
        self.merge = HistoryMerge(config, params)
        self.delta = config.history.kind == "delta"
        self.sink = open_sink("sessions", config.context, SESSION_SHAPE) if self.delta else None

    def run(self, combined, batch_id):
        out = self.merge(combined, batch_id)
        if self.sink is not None:
            self.sink.write_batch(session_rows(out, url_times=True), batch_id)
        return out


@pytest.fixture(params=STORES)
def step(request, spark, schema, tmp_path, monkeypatch):
    kind = request.param
    postgres = request.getfixturevalue("postgres") if kind == "postgres" else None
    config = history_config(tmp_path, kind, postgres, monkeypatch, "merge_step")
    checkpoint = config.checkpoint.path
    checkpoint.mkdir(parents=True)
    (checkpoint / "metadata").write_text(json.dumps({"id": "query-1"}), encoding="utf-8")
    store = open_history(config)
    step = Step(config, store)
    if step.sink is not None:  # the session is stored by an earlier batch's MERGE
        stored = spark.createDataFrame([engine_row(schema, kind="session", **STORED)], schema)
        step.sink.write_batch(session_rows(stored, url_times=True), 0)
    else:
        store.apply("earlier", 0, [STORED], [], [])
    yield step
    step.merge.close()
    store.close()


@pytest.fixture
def batch(spark, schema):
    rows = [
        engine_row(schema, kind="history", user_id="u", event_ts_ms=minutes(20), raw="late",
                   event_page=3, event_url="/c", event_size=10),
        engine_row(schema, kind="session", user_id="v", session_id="s-v",
                   start_ms=minutes(100), end_ms=minutes(100), page_count=1, bytes=5,
                   first_url="/x", last_url="/x", revision=0, truncated=False),
        engine_row(schema, kind="dead_letter", user_id="w", raw="bad", reason="too_late"),
    ]  # fmt: skip
    return spark.createDataFrame(rows, schema)


def described(frame):
    return sorted(
        (r["kind"], r["user_id"], r["session_id"], r["revision"], r["page_count"])
        for r in frame.collect()
    )


def test_a_history_row_becomes_the_next_revision_of_its_stored_session(step, batch):
    out = described(step.run(batch, 5))
    assert out == [
        ("dead_letter", "w", None, None, None),
        ("session", "u", "s-a", 1, 3),
        ("session", "v", "s-v", 0, 1),
    ]
    [a] = step.store.lookup([Wanted("u", 0, minutes(60))])
    assert (a["revision"], a["page_count"], a["end_ms"]) == (1, 3, minutes(20))
    assert [s["session_id"] for s in step.store.lookup([Wanted("v", 0, minutes(200))])] == ["s-v"]


def test_a_replayed_batch_gets_the_same_rows_and_changes_nothing(step, batch):
    first = described(step.run(batch, 5))
    stored = step.store.lookup([Wanted("u", 0, minutes(60))])
    assert described(step.run(batch, 5)) == first
    assert step.store.lookup([Wanted("u", 0, minutes(60))]) == stored
    assert stored[0]["revision"] == 1
    if step.delta:  # the store's write is the sessions table's one commit of the batch
        table = step.config.sinks["sessions"].path
        batches = [c.transactions for c in delta_log.commits(table) if c.transactions]
        assert [list(t.values()) for t in batches] == [[0], [5]]


def test_a_delta_sessions_table_without_url_times_is_refused_before_the_run(
    spark, schema, tmp_path
):
    """A table written before a store was configured, with ``collect_urls`` on, lacks what the
    merge needs to keep its sessions' URLs: ``run`` stops before Spark starts, ``doctor`` says
    so; with ``collect_urls`` off the column is simply added by the first MERGE."""
    config = history_config(tmp_path, "delta", None, None, "unused", collect_urls=True)
    (tmp_path / "landing").mkdir()  # the source is fine: only the store is refused
    stored = spark.createDataFrame([engine_row(schema, kind="session", **STORED)], schema)
    open_sink("sessions", config.context, SESSION_SHAPE).write_batch(session_rows(stored), 0)
    with pytest.raises(
        ConfigError, match=r"has no url_times column.*\[history\] kind = \"postgres\""
    ):
        PipelinePlan.of(config).check_connections()
    [finding] = [f for f in diagnose(config) if f.code.startswith("history-store")]
    assert finding.code == "history-store-io-setup"
    without_urls = history_config(tmp_path, "delta", None, None, "unused", collect_urls=False)
    assert not [f for f in diagnose(without_urls) if f.code.startswith("history-store")]
