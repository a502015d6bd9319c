"""The history merge: the step between the session engine and the sinks when a pipeline keeps
its closed sessions in a history store (``[history]``, lesson L8).

For each batch, before any sink writes (``BatchWriter.prepare``):

1. the engine's ``history`` rows (late events beyond ``allowed_lateness`` that found no session
   in state, within ``history_lateness``) are grouped by key, their keys' stored sessions
   around them are looked up, together with the sessions the engine emitted in this very batch
   (one may have left state in it), and the Java engine merges them with the state's own rules
   (``HistoryMerge.mergeJson``), resuming each stored session's aggregates from its state:
   revised sessions (revision + 1, absorbed ids named), new sessions, dead letters at a cap;
2. in one store transaction, every session emitted in the batch (the engine's and the merge's)
   is kept, absorbed ones are deleted, and the batch is recorded with the merge's output rows;
3. the sinks get the engine's rows without the history rows, with the merge's rows instead; a
   session the merge revised is written once, in its merged revision (at most one update per
   session per batch).

A batch replayed after a crash (after the store's commit, before Spark's) finds its record and
gets the same rows back without merging again, so the store changes nothing and the sinks get
what they got, or would have got, the first time. Nothing of this is in streaming state.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F
from pyspark.sql import types as T

from streamwarden.errors import StateError
from streamwarden.history.base import (
    HISTORY_KINDS,
    SESSION_FIELDS,
    HistoryStore,
    Row,
    StoredAggregate,
    StoredColumns,
    Wanted,
)
from streamwarden.operators.sessions.aggregates import STATE_COLUMN
from streamwarden.operators.sessions.api import SessionLayout
from streamwarden.operators.sessions.params import SessionParams
from streamwarden.operators.sessions.settings import SessionsConfig
from streamwarden.spark.jvm import call_engine

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from streamwarden.operators.base import PipelineView

__all__ = ["HistoryMerge", "history_columns", "open_history", "stored_columns"]

_EVENT_FIELDS = ("key", "event_ts_ms", "raw", "event_size", "event_values")
#: The engine's session fields a merge reads and a store keeps (the aggregates follow).
_SESSION_ROW_FIELDS = (
    "key",
    "session_id",
    "start_ms",
    "end_ms",
    "event_count",
    "bytes",
    "revision",
    "truncated",
    "merged_session_ids",
    "state",
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def stored_columns(layout: SessionLayout) -> StoredColumns:
    """What a history store keeps of the sessions ``layout`` describes."""
    return StoredColumns(
        layout.key_name,
        STATE_COLUMN,
        tuple(StoredAggregate(a.name, a.output_type().simpleString()) for a in layout.aggregates),
    )


def history_columns(config: PipelineView) -> StoredColumns:
    """What a history store keeps of a sessions pipeline's sessions: its ``[schema]`` key and
    its declared aggregates (a :class:`~streamwarden.errors.ConfigError` names a wrong one)."""
    section = config.section
    assert isinstance(section, SessionsConfig)  # the config chose it by the operator
    schema = config.schema
    aggregates = SessionParams.from_config(section).bind(schema.struct, key_name=schema.key_name)
    return stored_columns(SessionLayout(schema.key_name, schema.key_type, tuple(aggregates)))


def open_history(config: PipelineView, columns: StoredColumns | None = None) -> HistoryStore:
    """The history store ``[history]`` configures (the config model has checked it is there),
    keeping ``columns`` (by default, the pipeline's: :func:`history_columns`)."""
    history = config.history
    assert history is not None
    kept = history_columns(config) if columns is None else columns
    return HISTORY_KINDS[history.kind].open(history, config.context, kept)


class HistoryMerge:
    """``BatchWriter.prepare`` for a sessions pipeline with a history store (see the module's
    description). The store is opened at the first batch and kept for the run."""

    def __init__(self, config: PipelineView, params: SessionParams, layout: SessionLayout) -> None:
        self._config = config
        self._plan_json = params.to_plan_json(list(layout.aggregates), keep_state=True)
        self._gap_ms = int(params.gap.total_seconds() * 1000)
        self._layout = layout
        self._columns = stored_columns(layout)
        self._store: HistoryStore | None = None
        self._run_id: str | None = None

    def __call__(self, combined: DataFrame, batch_id: int) -> DataFrame:
        store = self._open()
        run_id = self._checkpoint_id()
        merged = store.applied(run_id, batch_id)
        if merged is None:
            merged = self._merge_and_store(combined, store, run_id, batch_id)
        return _replace(combined, merged)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def _open(self) -> HistoryStore:
        if self._store is None:
            self._store = open_history(self._config, self._columns)
        return self._store

    def _checkpoint_id(self) -> str:
        """The query's id in its checkpoint: batch ids restart with a new checkpoint, so the
        store's record of applied batches is per checkpoint."""
        if self._run_id is None:
            metadata = Path(self._config.context.checkpoint) / "metadata"
            try:
                self._run_id = str(json.loads(metadata.read_text(encoding="utf-8"))["id"])
            except (OSError, ValueError, KeyError):
                raise StateError(
                    f"the checkpoint's metadata {str(metadata)!r} has no query id; is "
                    "[checkpoint] path the folder this query writes?"
                ) from None
        return self._run_id

    def _merge_and_store(
        self, combined: DataFrame, store: HistoryStore, run_id: str, batch_id: int
    ) -> list[Row]:
        aggregates = tuple(f"agg_{i}" for i in range(len(self._layout.aggregates)))
        late = _collect(combined, "history", _EVENT_FIELDS)
        emitted = _collect(combined, "session", (*_SESSION_ROW_FIELDS, *aggregates))
        merged = self._merge(combined, store, late, emitted) if late else []
        replaced = _replaced_ids(merged)
        kept = [s for s in emitted if s["session_id"] not in replaced]
        sessions = [*kept, *(r for r in merged if r["kind"] == "session")]
        deletions = {i for s in sessions for i in s.get("merged_session_ids") or ()}
        if sessions or merged:
            store.apply(
                run_id,
                batch_id,
                [self._stored(s) for s in sessions if s["session_id"] not in deletions],
                sorted(deletions),
                merged,
            )
        return merged

    def _stored(self, row: Row) -> dict[str, Any]:
        """A session row of the engine (or of the merge) as a store keeps it: the session's
        fields, then each aggregate's output value."""
        stored = {n: row.get(n) for n in SESSION_FIELDS}
        for i, a in enumerate(self._layout.aggregates):
            stored[a.name] = _output_value(row.get(f"agg_{i}"), a.output_type())
        return stored

    def _merge(
        self,
        combined: DataFrame,
        store: HistoryStore,
        late: list[dict[str, Any]],
        emitted: list[dict[str, Any]],
    ) -> list[Row]:
        events: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for e in late:
            events[e["key"]].append(e)
        wanted = [
            Wanted(
                key,
                min(e["event_ts_ms"] for e in evs) - self._gap_ms + 1,
                max(e["event_ts_ms"] for e in evs) + self._gap_ms,
            )
            for key, evs in events.items()
        ]
        sessions: dict[str, dict[str, Row]] = defaultdict(dict)
        for s in [*store.lookup(wanted), *(s for s in emitted if s["key"] in events)]:
            sessions[s["key"]][s["session_id"]] = s  # this batch's emission is the newer
        absorbed = {i for s in emitted for i in s.get("merged_session_ids") or ()}
        request = {
            "watermark_ms": max(e["event_ts_ms"] for e in late) + self._gap_ms,
            "users": [
                {
                    "key": key,
                    "sessions": [
                        _stored_session(s) for i, s in sessions[key].items() if i not in absorbed
                    ],
                    "events": [_event(e) for e in evs],
                }
                for key, evs in sorted(events.items())
            ],
        }
        answer = call_engine(
            combined.sparkSession,
            "history merge",
            lambda jvm: jvm.io.streamwarden.engine.sessions.HistoryMerge.mergeJson(
                self._plan_json, json.dumps(request)
            ),
        )
        rows: list[Row] = json.loads(answer)["rows"]
        return rows


def _collect(combined: DataFrame, kind: str, fields: Sequence[str]) -> list[dict[str, Any]]:
    rows = combined.where(F.col("kind") == kind).select(*fields).collect()
    return [r.asDict(recursive=True) for r in rows]


def _event(e: dict[str, Any]) -> dict[str, Any]:
    values = e["event_values"]
    return {
        "ts_ms": e["event_ts_ms"],
        "size": e["event_size"],
        "raw": e["raw"],
        "values": [] if values is None else json.loads(values),
    }


_MERGED_FIELDS = ("session_id", "start_ms", "end_ms", "event_count", "bytes", "revision",
                  "truncated", "state")  # fmt: skip


def _stored_session(s: Row) -> dict[str, Any]:
    """A stored session as the engine's merge reads it."""
    return {n: s.get(n) for n in _MERGED_FIELDS}


def _output_value(value: Any, data_type: T.DataType) -> Any:
    """An aggregate's engine value (a JSON value of the merge, or a Spark row's) as its output
    type's Python value: a TIMESTAMP's epoch microseconds as a datetime, a DATE's days as a
    date, a DOUBLE's ``"NaN"`` as a float."""
    if value is None:
        return None
    if isinstance(data_type, T.ArrayType):
        return [_output_value(v, data_type.elementType) for v in value]
    if isinstance(data_type, T.TimestampType):
        return _EPOCH + timedelta(microseconds=int(value))
    if isinstance(data_type, T.DateType):
        return date(1970, 1, 1) + timedelta(days=int(value))
    return _engine_value(value, data_type)


def _engine_value(value: Any, data_type: T.DataType) -> Any:
    """A JSON value of the merge as the engine output's column of ``data_type`` holds it."""
    if value is None:
        return None
    if isinstance(data_type, T.ArrayType):
        return [_engine_value(v, data_type.elementType) for v in value]
    if isinstance(data_type, T.FloatType | T.DoubleType):
        return float(value)  # also "NaN", "Infinity", "-Infinity"
    if isinstance(data_type, T.ByteType | T.ShortType | T.IntegerType | T.LongType):
        return int(value)
    return value


def _replaced_ids(merged: Iterable[Row]) -> set[str]:
    """Sessions of the engine's output that the merge's rows supersede: the ones it revised,
    and the ones it absorbed."""
    ids: set[str] = set()
    for r in merged:
        if r["kind"] == "session":
            ids.add(r["session_id"])
            ids.update(r.get("merged_session_ids") or ())
    return ids


def _replace(combined: DataFrame, merged: list[Row]) -> DataFrame:
    """The engine's output without its history rows and the sessions the merge superseded,
    with the merge's rows instead."""
    kept = combined.where(F.col("kind") != "history")
    replaced = _replaced_ids(merged)
    if replaced:
        kept = kept.where(F.col("session_id").isNull() | ~F.col("session_id").isin(*replaced))
    if not merged:
        return kept
    schema = combined.schema
    rows = [tuple(_engine_value(r.get(f.name), f.dataType) for f in schema.fields) for r in merged]
    return kept.unionByName(combined.sparkSession.createDataFrame(rows, schema))
