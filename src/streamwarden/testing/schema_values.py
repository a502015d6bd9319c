"""Plain records of a declared schema as the testers take them, and values back as Python
types: what lets a test speak in the user's own records (``{"account": "a1", "at":
"2026-01-01T12:00:00Z", "amount": 12.5}``) rather than in the engine's columns."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any

from pyspark.sql import types as T

from streamwarden.errors import UsageError
from streamwarden.schema.model import Schema
from streamwarden.testing.times import to_ms

__all__ = ["field_value", "from_text", "python_record", "time_ms"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def field_value(record: Mapping[str, Any], path: str) -> Any:
    """The value a dotted ``path`` names in ``record`` (into nested dicts), or None."""
    value: Any = record
    for part in path.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def time_ms(value: Any, schema: Schema) -> int:
    """Epoch milliseconds of a record's time value, read as the schema declares the field: a
    TIMESTAMP as an aware datetime or ISO-8601 text with a zone, an integer as epoch time in
    ``time_unit`` (an aware datetime is taken as it is either way)."""
    if isinstance(value, str):
        try:
            value = _instant(value)
        except UsageError as exc:
            raise UsageError(f"the time {schema.time!r}: {exc}") from None
    if isinstance(value, datetime) or isinstance(schema.time_type, T.TimestampType):
        return to_ms(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise UsageError(
            f"the time {schema.time!r} is {value!r}: give an aware datetime, ISO-8601 text "
            f"with a zone, or an int of epoch time in {schema.time_unit!r}"
        )
    return int({"s": value * 1000, "ms": value, "us": value // 1000}[schema.time_unit])


def python_record(record: Mapping[str, Any], struct: T.StructType) -> dict[str, Any]:
    """``record`` with ISO-8601 text in TIMESTAMP and DATE fields read as datetimes and dates,
    so that Spark takes it under ``struct``."""
    out = dict(record)
    for f in struct.fields:
        out[f.name] = _python_value(record.get(f.name), f.dataType)
    return out


def _python_value(value: Any, data_type: T.DataType) -> Any:
    if value is None:
        return None
    if isinstance(data_type, T.TimestampType) and isinstance(value, str):
        return _instant(value)
    if isinstance(data_type, T.DateType) and isinstance(value, str):
        return date.fromisoformat(value)
    if isinstance(data_type, T.StructType) and isinstance(value, Mapping):
        return python_record(value, data_type)
    if isinstance(data_type, T.ArrayType) and isinstance(value, list):
        return [_python_value(v, data_type.elementType) for v in value]
    return value


def from_text(text: str | None, data_type: T.DataType) -> Any:
    """A value the engine carried as text (Spark's cast to string; JSON for a STRUCT, ARRAY or
    MAP) back as a Python value of ``data_type``."""
    if text is None:
        return None
    if isinstance(data_type, T.StructType | T.ArrayType | T.MapType):
        return json.loads(text)
    if isinstance(data_type, T.BooleanType):
        return text == "true"
    if isinstance(data_type, T.ByteType | T.ShortType | T.IntegerType | T.LongType):
        return int(text)
    if isinstance(data_type, T.FloatType | T.DoubleType):
        return float(text)
    if isinstance(data_type, T.TimestampType):
        return datetime.fromisoformat(text).replace(tzinfo=UTC)  # the session's zone: UTC
    if isinstance(data_type, T.DateType):
        return date.fromisoformat(text)
    return text


def engine_time(value: Any) -> int:
    """A TIMESTAMP value (aware datetime or ISO-8601 text) as epoch microseconds."""
    moment = _instant(value) if isinstance(value, str) else value
    return (moment - _EPOCH) // timedelta(microseconds=1)


def _instant(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise UsageError(
            f"{text!r} is not an ISO-8601 time with a zone, such as 2026-01-01T12:00:00Z"
        )
    return moment
