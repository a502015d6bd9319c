"""The history merge step between the engine and the sinks, on real Spark, with each store (the
Delta sessions table and PostgreSQL): the engine's history rows become revisions of stored
sessions whose aggregates are those of all their events, and a batch replayed after a crash
(after the store's commit, before Spark's) changes nothing and gets the same rows."""

from __future__ import annotations

import json

import pytest
from pyspark.sql.types import StructType

from streamwarden.doctor import diagnose
from streamwarden.errors import ConfigError
from streamwarden.history.base import Wanted
from streamwarden.operators.sessions.api import SESSION_SHAPE
from streamwarden.operators.sessions.history import HistoryMerge, open_history
from streamwarden.operators.sessions.operator import layout
from streamwarden.operators.sessions.params import SessionParams
from streamwarden.plan import PipelinePlan
from streamwarden.sinks import delta_log
from streamwarden.sinks.base import open_sink
from tests.history.support import STORES, history_config
from tests.support import minutes


def engine_schema(spark, config):
    params = SessionParams.from_config(config.section)
    plan = params.to_plan_json(list(layout(config).aggregates), keep_state=True)
    found = spark._jvm.io.streamwarden.engine.EngineOutput.schemaJson(plan)
    return StructType.fromJson(json.loads(found))


def engine_frame(spark, schema, rows):
    """Engine output rows (dicts by column name) as the engine's DataFrame."""
    return spark.createDataFrame([tuple(r.get(f.name) for f in schema.fields) for r in rows],
                                 schema)  # fmt: skip


def late(account, at_minutes, amount, merchant):
    """A late event as the engine hands it to the merge (``history``), with the plan's input
    values (amount, merchant)."""
    return {
        "kind": "history", "key": account, "event_ts_ms": minutes(at_minutes),
        "raw": f"{account}@{at_minutes}", "event_size": 10,
        "event_values": json.dumps([amount, merchant]),
    }  # fmt: skip


class Step:
    """The merge step and, for the Delta store, the sessions sink whose MERGE is the store's
    write: :meth:`run` does what the batch writer does with the sessions of one batch."""

    def __init__(self, config, store):
        self.config, self.store = config, store
        self.layout = layout(config)
        self.merge = HistoryMerge(config, SessionParams.from_config(config.section), self.layout)
        self.delta = config.history.kind == "delta"
        self.sink = open_sink("sessions", config.context, SESSION_SHAPE) if self.delta else None

    def run(self, combined, batch_id):
        out = self.merge(combined, batch_id)
        if self.sink is not None:
            self.sink.write_batch(self.layout.session_rows(out, with_state=True), batch_id)
        return out


@pytest.fixture(params=STORES)
def step(request, spark, tmp_path, monkeypatch):
    kind = request.param
    postgres = request.getfixturevalue("postgres") if kind == "postgres" else None
    config = history_config(tmp_path, kind, postgres, monkeypatch, "merge_step")
    checkpoint = config.checkpoint.path
    checkpoint.mkdir(parents=True)
    (checkpoint / "metadata").write_text(json.dumps({"id": "query-1"}), encoding="utf-8")
    store = open_history(config)
    step = Step(config, store)
    schema = engine_schema(spark, config)
    # an earlier batch's late events, in no stored session: they make the stored session
    earlier = [late("a", 0, 5.5, "bakery"), late("a", 5, 2.25, "books")]
    step.run(engine_frame(spark, schema, earlier), 0)
    yield step
    step.merge.close()
    store.close()


@pytest.fixture
def batch(spark, step):
    schema = engine_schema(spark, step.config)
    rows = [
        late("a", 20, 1.0, "bakery"),
        {"kind": "session", "key": "v", "session_id": "s-v", "start_ms": minutes(100),
         "end_ms": minutes(100), "event_count": 1, "bytes": 5, "revision": 0,
         "truncated": False, "agg_0": 3.0, "agg_1": 1, "agg_2": "cafe"},
        {"kind": "dead_letter", "key": "w", "raw": "bad", "reason": "too_late"},
    ]  # fmt: skip
    return engine_frame(spark, schema, rows)


def described(frame):
    return sorted(
        (r["kind"], r["key"], r["revision"], r["event_count"], r["agg_0"], r["agg_1"], r["agg_2"])
        for r in frame.collect()
    )


def test_a_history_row_becomes_the_next_revision_of_its_stored_session(step, batch):
    """Its aggregates are those of all three events: the stored session's state resumed."""
    out = described(step.run(batch, 5))
    assert out == [
        ("dead_letter", "w", None, None, None, None, None),
        ("session", "a", 1, 3, 8.75, 2, "bakery"),
        ("session", "v", 0, 1, 3.0, 1, "cafe"),
    ]
    [a] = step.store.lookup([Wanted("a", 0, minutes(60))])
    assert (a["revision"], a["event_count"], a["end_ms"]) == (1, 3, minutes(20))
    assert (a["total"], a["merchants"], a["first_merchant"]) == (8.75, 2, "bakery")
    assert a["state"]  # what the next merge resumes from
    assert [s["session_id"] for s in step.store.lookup([Wanted("v", 0, minutes(200))])] == ["s-v"]


def test_a_replayed_batch_gets_the_same_rows_and_changes_nothing(step, batch):
    first = described(step.run(batch, 5))
    stored = step.store.lookup([Wanted("a", 0, minutes(60))])
    assert described(step.run(batch, 5)) == first
    assert step.store.lookup([Wanted("a", 0, minutes(60))]) == stored
    assert stored[0]["revision"] == 1
    if step.delta:  # the store's write is the sessions table's one commit of the batch
        table = step.config.sinks["sessions"].path
        batches = [c.transactions for c in delta_log.commits(table) if c.transactions]
        assert [list(t.values()) for t in batches] == [[0], [5]]


def stored_table(spark, config, *, with_state):
    """A Delta sessions table of ``config`` holding one session, written with or without the
    aggregate state (with or without a history store)."""
    schema = engine_schema(spark, config)
    row = {
        "kind": "session", "key": "a", "session_id": "s-a", "start_ms": minutes(0),
        "end_ms": minutes(5), "event_count": 1, "bytes": 5, "revision": 0, "truncated": False,
        "agg_0": 3.0, "agg_1": 1, "agg_2": "cafe",
    }  # fmt: skip
    rows = layout(config).session_rows(engine_frame(spark, schema, [row]), with_state=with_state)
    open_sink("sessions", config.context, SESSION_SHAPE).write_batch(rows, 0)


def test_a_delta_sessions_table_without_the_aggregate_state_is_refused_before_the_run(
    spark, tmp_path
):
    """A table written before a store was configured lacks what the merge needs to resume its
    sessions' aggregates: ``run`` stops before Spark starts, ``doctor`` says so; a pipeline
    without aggregates needs no state, and the first MERGE adds the column."""
    config = history_config(tmp_path, "delta", None, None, "unused")
    (tmp_path / "landing").mkdir()  # the source is fine: only the store is refused
    stored_table(spark, config, with_state=False)
    with pytest.raises(
        ConfigError, match=r"has no aggregate_state column.*\[history\] kind = \"postgres\""
    ):
        PipelinePlan.of(config).check_connections()
    [finding] = [f for f in diagnose(config) if f.code.startswith("history-store")]
    assert finding.code == "history-store-io-setup"
    counting = history_config(tmp_path, "delta", None, None, "unused", aggregates={})
    assert not [f for f in diagnose(counting) if f.code.startswith("history-store")]


def test_a_delta_sessions_table_without_an_aggregate_of_the_config_is_refused(spark, tmp_path):
    """Its stored states were made for other aggregates."""
    config = history_config(tmp_path, "delta", None, None, "unused")
    (tmp_path / "landing").mkdir()
    stored_table(spark, config, with_state=True)
    aggregates = {"biggest": "max(amount)", "total": "sum(amount)"}
    more = history_config(tmp_path, "delta", None, None, "unused", aggregates=aggregates)
    with pytest.raises(ConfigError, match=r"has no column biggest.*new table"):
        PipelinePlan.of(more).check_connections()
