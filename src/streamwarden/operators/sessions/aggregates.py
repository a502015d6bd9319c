"""Declared session aggregates (``[sessions.aggregates]``: ``total = "sum(amount)"``): parsed,
typed from their field, and handed to the Java engine as a plan (function, input, kind) that
``SessionLogic`` evaluates incrementally. Nothing here runs per row.

The engine holds every value in one of four kinds (long, double, string, boolean): an input
field is cast to its kind before the engine (a TIMESTAMP as epoch microseconds, a DATE as days)
and each result cast back to its declared type after it (:meth:`Aggregate.output_type`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql import functions as F
from pyspark.sql import types as T

from streamwarden.schema.ddl import ddl_of
from streamwarden.schema.model import INTEGRAL, field_type

if TYPE_CHECKING:
    from pyspark.sql import Column

__all__ = [
    "AGGREGATE_FUNCTIONS",
    "SESSION_OUTPUT_COLUMNS",
    "Aggregate",
    "AggregateError",
    "engine_inputs",
    "engine_plan",
    "parse_aggregates",
]

#: Each function, with how partial results merge (what the docs' table says).
AGGREGATE_FUNCTIONS: dict[str, str] = {
    "count": "count() counts events; count(f) non-null values of f; merged by adding",
    "sum": "exact sum of non-null values (a DOUBLE sum is the exact sum, rounded once); added",
    "min": "smallest non-null value; the smaller of the two",
    "max": "largest non-null value; the larger of the two",
    "avg": "exact sum / count of non-null values, as DOUBLE; sums and counts added",
    "first": "value of the earliest event (by event time, a tie to the earlier arrival) with "
    "a non-null value; the earlier of the two",
    "last": "value of the latest event (by event time, a tie to the later arrival) with a "
    "non-null value; the later of the two",
    "count_distinct": "number of distinct non-null values (exact: the values are held, within "
    "max_session_bytes); the union's size",
    "collect_list": "non-null values in event-time order (held, within max_session_bytes); "
    "merged in event-time order",
    "collect_set": "distinct non-null values, sorted (held, within max_session_bytes); the union",
}

#: The columns of a session row before the aggregates (the key's comes first, under its own
#: field's name).
SESSION_OUTPUT_COLUMNS = (
    "session_id",
    "session_start",
    "session_end",
    "event_count",
    "bytes",
    "revision",
    "truncated",
    "merged_session_ids",
)

#: The column of a session row with its aggregates' state, for a history store (base64).
STATE_COLUMN = "aggregate_state"

_CALL = re.compile(r"^\s*([A-Za-z_]+)\s*\(\s*([^()]*?)\s*\)\s*$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_SCALAR = (
    *INTEGRAL,
    T.FloatType,
    T.DoubleType,
    T.StringType,
    T.BooleanType,
    T.TimestampType,
    T.DateType,
)


class AggregateError(ValueError):
    """An aggregate that cannot be computed, saying why and what would be."""


@dataclass(frozen=True)
class Aggregate:
    """One declared aggregate: output column ``name`` = ``function(field)`` (``field`` None for
    ``count()``), over a field of type ``field_type``."""

    name: str
    function: str
    field: str | None
    field_type: T.DataType | None

    @property
    def kind(self) -> str | None:
        """The engine's kind of the input values (None for ``count()``)."""
        return None if self.field_type is None else engine_kind(self.field_type)

    def output_type(self) -> T.DataType:
        """The output column's type, from the field's: a count is BIGINT, ``avg`` DOUBLE, a
        sum of integers BIGINT, ``collect_*`` an ARRAY, the others the field's own type."""
        if self.function in ("count", "count_distinct"):
            return T.LongType()
        if self.function == "avg":
            return T.DoubleType()
        assert self.field_type is not None
        if self.function == "sum":
            return T.LongType() if isinstance(self.field_type, INTEGRAL) else T.DoubleType()
        if self.function in ("collect_list", "collect_set"):
            return T.ArrayType(self.field_type, containsNull=False)
        return self.field_type

    def input_column(self) -> Column:
        """The field's values as the engine takes them (its kind)."""
        assert self.field is not None and self.field_type is not None
        return to_engine(F.col(self.field), self.field_type)

    def output_column(self, engine_column: Column) -> Column:
        """The engine's result (its kind) as the declared output type."""
        target = self.output_type()
        if isinstance(target, T.ArrayType):
            return F.transform(engine_column, lambda v: from_engine(v, target.elementType))
        return from_engine(engine_column, target)

    def describe(self) -> str:
        return f"{self.name} = {self.function}({self.field or ''})"


def engine_kind(data_type: T.DataType) -> str:
    """How the engine holds values of ``data_type`` (a STRUCT, ARRAY or MAP, which only
    ``count(f)`` takes, as whether it is there)."""
    if not isinstance(data_type, _SCALAR):
        return "boolean"
    if isinstance(data_type, (*INTEGRAL, T.TimestampType, T.DateType)):
        return "long"
    if isinstance(data_type, T.FloatType | T.DoubleType):
        return "double"
    if isinstance(data_type, T.BooleanType):
        return "boolean"
    return "string"


def to_engine(value: Column, data_type: T.DataType) -> Column:
    """``value`` (of ``data_type``) in the engine's kind."""
    if not isinstance(data_type, _SCALAR):
        return F.when(value.isNotNull(), F.lit(True))
    if isinstance(data_type, T.TimestampType):
        return F.unix_micros(value)
    if isinstance(data_type, T.DateType):
        return F.unix_date(value).cast("long")
    return value.cast(
        {"long": "long", "double": "double", "boolean": "boolean", "string": "string"}[
            engine_kind(data_type)
        ]
    )


def from_engine(value: Column, data_type: T.DataType) -> Column:
    """An engine value (its kind) back as ``data_type``."""
    if isinstance(data_type, T.TimestampType):
        return F.timestamp_micros(value)
    if isinstance(data_type, T.DateType):
        return F.date_from_unix_date(value.cast("int"))
    return value.cast(data_type)


def parse_aggregates(
    declared: Mapping[str, str], struct: T.StructType, *, taken: tuple[str, ...] = ()
) -> list[Aggregate]:
    """The aggregates ``declared`` (output name -> ``"function(field)"``) over the fields of
    ``struct``; ``taken`` are output column names they must not reuse. Raises
    :class:`AggregateError` naming the aggregate and what would work."""
    aggregates = []
    used = {n.lower() for n in (*SESSION_OUTPUT_COLUMNS, STATE_COLUMN, *taken)}
    for name, text in declared.items():
        if not _NAME.match(name):
            raise AggregateError(
                f"aggregate {name!r}: an output column name is a word of letters, digits and _"
            )
        if name.lower() in used:
            raise AggregateError(
                f"aggregate {name!r}: a session row already has a column {name!r}; name the "
                "aggregate otherwise"
            )
        used.add(name.lower())
        aggregates.append(_parse_one(name, text, struct))
    return aggregates


def _parse_one(name: str, text: str, struct: T.StructType) -> Aggregate:
    where = f"aggregate {name} = {text!r}"
    match = _CALL.match(text) if isinstance(text, str) else None
    if match is None:
        raise AggregateError(f"{where}: write function(field), e.g. 'sum(amount)'")
    function, field = match.group(1).lower(), match.group(2) or None
    if function not in AGGREGATE_FUNCTIONS:
        raise AggregateError(
            f"{where}: unknown function {match.group(1)!r}; use one of "
            f"{', '.join(AGGREGATE_FUNCTIONS)}"
        )
    if field is None:
        if function != "count":
            raise AggregateError(f"{where}: {function} needs a field, e.g. {function}(amount)")
        return Aggregate(name, function, None, None)
    found = field_type(struct, field)
    if found is None:
        declared = ", ".join(f.name for f in struct.fields)
        raise AggregateError(
            f"{where}: {field!r} is not a declared field (the fields: {declared}; a dotted "
            "name reaches into a STRUCT)"
        )
    if function == "count":
        return Aggregate(name, function, field, found)
    if not isinstance(found, _SCALAR):
        raise AggregateError(
            f"{where}: {field!r} is {ddl_of(found)}; {function} takes a STRING, BOOLEAN, "
            "integer, FLOAT, DOUBLE, TIMESTAMP or DATE field (count(f) takes any)"
        )
    if function in ("sum", "avg") and not isinstance(found, (*INTEGRAL, T.FloatType, T.DoubleType)):
        raise AggregateError(f"{where}: {function} adds numbers, but {field!r} is {ddl_of(found)}")
    return Aggregate(name, function, field, found)


def engine_inputs(aggregates: Sequence[Aggregate]) -> list[Aggregate]:
    """One aggregate per distinct input field, in order of first use: the engine's input
    columns (``value_<i>``), each of its field's kind."""
    seen: dict[str, Aggregate] = {}
    for a in aggregates:
        if a.field is not None and a.field not in seen:
            seen[a.field] = a
    return list(seen.values())


def engine_plan(aggregates: Sequence[Aggregate]) -> dict[str, object]:
    """The aggregates as the engine's plan reads them: each distinct input field once, in
    order of first use, and each aggregate's function and input."""
    inputs = [a.field for a in engine_inputs(aggregates)]
    kinds = [a.kind for a in engine_inputs(aggregates)]
    entries: list[dict[str, object]] = []
    for a in aggregates:
        entry: dict[str, object] = {"function": a.function}
        if a.field is not None:
            entry["input"] = inputs.index(a.field)
        entries.append(entry)
    return {"inputs": kinds, "aggregates": entries}
