"""``PatternTester``: a pattern's rules micro-batch by micro-batch, with no streaming query.

Stage conditions are evaluated by Spark exactly as in :func:`detect` (the compiled mask
column, on a small batch DataFrame); the engine's own ``PatternProcessor`` does the rest under
an in-memory state handle (too-late events, the buffer cap, state and timers), driven with
transformWithState's order: each key's rows first, then the timers the watermark has passed.
State goes through its binary encoding at every step, as in the state store.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F
from pyspark.sql import types as T

from streamwarden.errors import PatternError, UsageError
from streamwarden.operators.patterns.compile import compile_pattern, condition_problem
from streamwarden.operators.patterns.pattern import Pattern
from streamwarden.operators.patterns.rows import carried_text
from streamwarden.schema.model import Schema, field_type
from streamwarden.settings import defaults
from streamwarden.testing.records import (
    KeyPatternState,
    PatternMatch,
    PatternOutput,
    PatternTimeout,
    pattern_record,
    pattern_state,
)
from streamwarden.testing.schema_values import field_value, from_text, python_record, time_ms
from streamwarden.testing.times import to_ms

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["PatternTester", "matched_names"]


class PatternTester:
    """Feeds events to the pattern engine: with a ``schema``, plain records of it (its key and
    time fields, typed as it declares: a TIMESTAMP as an aware datetime or ISO-8601 text, an
    integer time in ``time_unit``), and the output's carried values come back typed; without
    one, dicts with ``key``, ``ts`` (an aware datetime or epoch milliseconds) and the fields the
    conditions read, and the values come back as text.

    ``fields`` (as in :func:`streamwarden.operators.patterns.detect`) are the event fields
    carried into each output event's ``values``, in order; the fields that ``where_previous``
    compares are added after them. By default no others are carried. ``emit_timeouts``,
    ``max_partials_per_key`` and ``max_buffered_per_key`` are the
    :class:`~streamwarden.operators.patterns.PatternOptions` of the same names.

    Example::

        tester = PatternTester(spark, pattern, fields=["url"])
        out = tester.run_batch([{"key": "u1", "ts": 1000, "url": "/scan/a"}], watermark=0)
        tester.state_rows, tester.peek_state("u1")
    """

    def __init__(
        self,
        spark: SparkSession,
        pattern: Pattern,
        *,
        fields: Sequence[str] = (),
        schema: Schema | None = None,
        emit_timeouts: bool = False,
        max_partials_per_key: int = defaults.MAX_PARTIALS_PER_KEY,
        max_buffered_per_key: int = defaults.MAX_BUFFERED_PER_KEY,
    ) -> None:
        if not isinstance(pattern, Pattern):
            raise UsageError(
                "PatternTester(spark, pattern): pattern must be a Pattern such as "
                "Pattern.begin('first').where(...).within(timedelta(minutes=30)), got a "
                f"{type(pattern).__name__}"
            )
        if isinstance(fields, str) or not all(isinstance(f, str) for f in fields):
            raise UsageError(
                "PatternTester(..., fields=...): fields must be a list of field names such as "
                f"['url'], got {fields!r}"
            )
        if schema is not None and not isinstance(schema, Schema):
            raise UsageError(
                "PatternTester(..., schema=...): schema must be a streamwarden.Schema, got a "
                f"{type(schema).__name__}"
            )
        self._schema = schema
        self._spark = spark
        self._pattern = pattern
        self._fields = tuple(fields)
        self._options: dict[str, Any] = {
            "emit_timeouts": emit_timeouts,
            "max_partials_per_key": max_partials_per_key,
            "max_buffered_per_key": max_buffered_per_key,
        }
        self.compiled = compile_pattern(pattern, self._fields, **self._options)
        #: Made with the first events, whose column types decide (as in ``detect``) whether a
        #: ``where_previous`` compares numbers or text.
        self._harness: Any = None

    def run_batch(
        self, events: Sequence[Mapping[str, Any]], watermark: datetime | int
    ) -> list[PatternOutput]:
        """One micro-batch whose watermark (for eviction) is ``watermark``: the matches,
        timeouts, overflows and dead letters it emits, in the operator's order."""
        payload = []
        if events:
            df, keys, times = self._frame(events)
            columns = df.columns
            missing = [f for f in self.compiled.fields if field_type(df.schema, f) is None]
            if missing:
                raise PatternError(
                    f"the events lack {', '.join(map(repr, missing))}, which the pattern carries "
                    f"or compares; fields given: {', '.join(columns)}"
                )
            problem = condition_problem(df, self.compiled.mask, boolean=False)  # stage bits
            if problem is not None:
                raise PatternError(f"the pattern's conditions over these events: {problem}")
            harness = self._engine(df)
            masks = df.select(
                self.compiled.mask.alias("mask"),
                F.array(*[carried_text(df, f) for f in self.compiled.fields]).alias("values"),
            ).collect()
            for key, ts_ms, row in zip(keys, times, masks, strict=True):
                payload.append(
                    {
                        "key": key,
                        "ts_ms": ts_ms,
                        "mask": row["mask"],
                        "values": list(row["values"]),
                    }
                )
        elif self._harness is None:  # no events yet: no state, nothing to evict
            return []
        else:
            harness = self._harness
        rows = json.loads(harness.runBatch(json.dumps(payload), to_ms(watermark)))
        return [self._typed(pattern_record(row)) for row in rows]

    def _frame(self, events: Sequence[Mapping[str, Any]]) -> tuple[DataFrame, list[str], list[int]]:
        """The events as a batch DataFrame (typed by the schema, if any), their keys and times."""
        schema = self._schema
        if schema is None:
            columns = list(dict.fromkeys(k for e in events for k in e))
            for e in events:
                if "key" not in e or "ts" not in e:
                    raise UsageError(f"each event needs a 'key' and a 'ts', got {dict(e)!r}")
            rows = [tuple(e.get(c) for c in columns) for e in events]
            return (
                self._spark.createDataFrame(rows, schema=columns),
                [str(e["key"]) for e in events],
                [to_ms(e["ts"]) for e in events],
            )
        records = [python_record(e, schema.struct) for e in events]
        keys, times = [], []
        for record in records:
            key, at = field_value(record, schema.key), field_value(record, schema.time)
            if key is None or at is None:
                raise UsageError(
                    f"each record needs its key {schema.key!r} and its time {schema.time!r}, "
                    f"got {record!r}"
                )
            keys.append(str(key))
            times.append(time_ms(at, schema))
        frame = self._spark.createDataFrame(
            [tuple(r.get(f.name) for f in schema.struct.fields) for r in records],
            schema=schema.struct,
        )
        return frame, keys, times

    def _typed(self, output: PatternOutput) -> PatternOutput:
        """``output`` with its carried values typed as the schema declares them."""
        if self._schema is None or not isinstance(output, PatternMatch | PatternTimeout):
            return output
        types = [self._schema.type_of(f) or T.StringType() for f in self.compiled.fields]
        events = tuple(
            replace(e, values=tuple(from_text(v, t) for v, t in zip(e.values, types, strict=True)))
            for e in output.events
        )
        return replace(output, events=events)

    def _engine(self, events: DataFrame) -> Any:
        """The engine's harness, made on the first events: numeric columns compare as numbers."""
        if self._harness is None:
            numeric = frozenset(
                f.name for f in events.schema.fields if isinstance(f.dataType, T.NumericType)
            )
            self.compiled = compile_pattern(self._pattern, self._fields, numeric, **self._options)
            jvm: Any = self._spark._jvm
            self._harness = jvm.io.streamwarden.engine.testing.PatternHarness(
                self.compiled.plan_json
            )
        return self._harness

    def run(
        self, events: Sequence[Mapping[str, Any]], *, close: bool = True
    ) -> list[PatternOutput]:
        """All events in one batch, then (``close``) a watermark past every deadline."""
        first = self.run_batch(events, -1)
        if not close:
            return first
        times = self._frame(events)[2] if events else []
        last = max(times, default=0)
        window = self.compiled.plan["within_ms"]
        return first + self.run_batch([], last + window + 1)

    def peek_state(self, key: str) -> KeyPatternState | None:
        """The state one key holds, or None if it holds none."""
        text = None if self._harness is None else self._harness.peek(key)
        return None if text is None else pattern_state(json.loads(text))

    @property
    def state_rows(self) -> int:
        return 0 if self._harness is None else int(self._harness.stateRows())

    @property
    def state_bytes(self) -> int:
        return 0 if self._harness is None else int(self._harness.stateBytes())


def matched_names(out: Sequence[PatternOutput], kind: str = "match") -> list[list[str | None]]:
    """The first carried field (``fields[0]``) of each event of each match (or, with ``kind``
    ``"timeout"``, each timeout), in output order."""
    return [
        [e.values[0] for e in o.events]
        for o in out
        if isinstance(o, PatternMatch | PatternTimeout) and o.kind == kind
    ]
