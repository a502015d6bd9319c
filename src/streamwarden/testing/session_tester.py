"""``SessionTester``: the session operator without a Spark cluster, in the spirit of ``TwsTester``.

It drives the very ``SessionProcessor`` the Spark operator runs (no copy of its rules or of its
state and timer handling) under an in-memory state handle, in a small JVM started through py4j,
with Spark's micro-batch order: each key's rows first, then the timers the watermark has passed.
Records are plain dicts of the user's schema (``{"account": "a1", "at": ..., "amount": 12.5}``);
the event time is read as the schema declares it (an aware datetime or ISO-8601 text for a
TIMESTAMP field, epoch time in ``time_unit`` for an integer one). Watermarks are aware
datetimes or epoch milliseconds. What comes out is typed: each session's aggregates under
their names, with the types a pipeline's output has.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

from pyspark.sql import types as T

from streamwarden.errors import UsageError
from streamwarden.operators.sessions.aggregates import Aggregate, engine_inputs
from streamwarden.operators.sessions.params import SessionParams
from streamwarden.schema.ddl import ddl_of
from streamwarden.schema.model import Schema
from streamwarden.spark.engine_gateway import engine_gateway
from streamwarden.testing.records import (
    SessionOutput,
    UserSessionState,
    session_record,
    session_state,
)
from streamwarden.testing.schema_values import engine_time, field_value, time_ms
from streamwarden.testing.times import to_ms

__all__ = ["SessionTester"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class SessionTester:
    """Feeds micro-batches of plain records to the session logic and shows what it emits and
    keeps.

    Example::

        schema = Schema(key="account", time="at", fields="account STRING, at TIMESTAMP, "
                        "amount DOUBLE")
        tester = SessionTester(schema, SessionParams(gap=timedelta(minutes=20),
                                                     aggregates={"total": "sum(amount)"}))
        out = tester.run_batch([{"account": "a1", "at": "2026-01-01T12:00:00Z",
                                 "amount": 12.5}], watermark=...)
    """

    def __init__(self, schema: Schema, params: SessionParams | None = None) -> None:
        if not isinstance(schema, Schema):
            raise UsageError(
                "SessionTester(schema, params): schema must be a streamwarden.Schema such as "
                "Schema(key='account', time='at', fields='account STRING, at TIMESTAMP'), got a "
                f"{type(schema).__name__}"
            )
        if params is not None and not isinstance(params, SessionParams):
            raise UsageError(
                "SessionTester(schema, params): params must be a SessionParams such as "
                f"SessionParams(gap=timedelta(minutes=30)), got a {type(params).__name__}"
            )
        self.schema = schema
        self.params = params or SessionParams()
        self.aggregates = self.params.bind(schema.struct, key_name=schema.key_name)
        self._inputs = engine_inputs(self.aggregates)
        self._outputs: dict[str, Callable[[Any], Any]] = {
            a.name: _converter(a.output_type()) for a in self.aggregates
        }
        self._harness = engine_gateway().jvm.io.streamwarden.engine.testing.SessionHarness(
            self.params.to_plan_json(
                self.aggregates, keep_state=self.params.history_lateness is not None
            )
        )

    def run_batch(
        self, records: Sequence[Mapping[str, Any]], watermark: datetime | int
    ) -> list[SessionOutput]:
        """One micro-batch whose watermark (for eviction) is ``watermark``: the session
        revisions and dead letters it emits, in the operator's order."""
        rows = [self._event(r) for r in records]
        out = json.loads(self._harness.runBatch(json.dumps(rows), to_ms(watermark)))
        return [session_record(row, self._outputs) for row in out]

    def advance_watermark(self, watermark: datetime | int) -> list[SessionOutput]:
        """A micro-batch without input: only timers fire."""
        return self.run_batch([], watermark)

    def peek_state(self, key: object) -> UserSessionState | None:
        """The state one key holds, or None if it holds none."""
        text = self._harness.peek(str(key))
        return None if text is None else session_state(json.loads(text))

    @property
    def state_rows(self) -> int:
        """Number of keys holding state (the operator's state rows in Spark)."""
        return int(self._harness.stateRows())

    def _event(self, record: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(record, Mapping):
            raise UsageError(
                "run_batch(records): each record must be a dict of the schema's fields, such "
                f"as {{{self.schema.key!r}: 'k1', {self.schema.time!r}: ...}}, got {record!r}"
            )
        key, at = field_value(record, self.schema.key), field_value(record, self.schema.time)
        if key is None or at is None:
            raise UsageError(
                f"run_batch(records): a record needs its key {self.schema.key!r} and its time "
                f"{self.schema.time!r}, got {record!r}"
            )
        raw = json.dumps(record, default=str, sort_keys=True)
        return {
            "key": str(key),
            "ts_ms": time_ms(at, self.schema),
            "size": len(raw.encode("utf-8")),
            "raw": raw,
            "values": [_engine_value(field_value(record, a.field or ""), a) for a in self._inputs],
        }


def _engine_value(value: Any, aggregate: Aggregate) -> Any:
    """A record's value as the engine holds its field's kind; a value of another type than the
    schema declares is a :class:`UsageError` naming the field (a pipeline would dead-letter the
    record as ``wrong_type``)."""
    data_type = aggregate.field_type
    if value is None:
        return None
    if aggregate.kind == "boolean" and not isinstance(data_type, T.BooleanType):
        return True  # count(f) of a STRUCT, ARRAY or MAP: whether it is there
    try:
        if isinstance(data_type, T.TimestampType):
            return engine_time(value)
        if isinstance(data_type, T.DateType):
            day = date.fromisoformat(value) if isinstance(value, str) else value
            return (day - date(1970, 1, 1)).days
    except (TypeError, ValueError, UsageError):
        pass
    else:
        if _fits(value, aggregate.kind):
            return value
    raise UsageError(
        f"run_batch(records): {aggregate.field!r} is {value!r} ({type(value).__name__}), but "
        f"the schema declares it {ddl_of(data_type) if data_type else 'a value'}; a pipeline "
        "would dead-letter this record as wrong_type"
    )


def _fits(value: Any, kind: str | None) -> bool:
    if kind == "long":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "double":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    return isinstance(value, str)


def _converter(data_type: T.DataType) -> Callable[[Any], Any]:
    """An engine value back as a Python value of ``data_type``."""
    if isinstance(data_type, T.ArrayType):
        element = _converter(data_type.elementType)
        return lambda v: None if v is None else tuple(element(x) for x in v)
    if isinstance(data_type, T.TimestampType):
        return lambda v: None if v is None else _EPOCH + timedelta(microseconds=v)
    if isinstance(data_type, T.DateType):
        return lambda v: None if v is None else date(1970, 1, 1) + timedelta(days=v)
    if isinstance(data_type, T.DoubleType | T.FloatType):
        return lambda v: None if v is None else float(v)
    return lambda v: v
