"""How old each key's state is, where the state's content says so, in a fixed histogram.

Age is measured against the checkpoint's watermark (event time), not the wall clock: a
checkpoint read a week later shows the same ages. What "age" means depends on the state:

- streamwarden sessions (a value with ``sessions[].endMs``): time since the key's last event;
- a state whose key holds an event time (a window's ``end``, a timestamp column): time since it;
- transformWithState timers: time until the deadline (negative: due at the next batch);
- otherwise the state says nothing about time, and the report says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DataType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from streamwarden.operators.process.states import WRITTEN

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["BUCKETS", "AgeBasis", "age_basis", "bucket"]

_MINUTE = 60_000
_HOUR = 60 * _MINUTE
#: (label, upper bound in ms, exclusive); the first catches negative ages.
BUCKETS: tuple[tuple[str, int], ...] = (
    ("< 0", 0),
    ("0-1m", _MINUTE),
    ("1-5m", 5 * _MINUTE),
    ("5-15m", 15 * _MINUTE),
    ("15-60m", _HOUR),
    ("1-6h", 6 * _HOUR),
    ("6-24h", 24 * _HOUR),
    ("1-7d", 7 * 24 * _HOUR),
    (">= 7d", 2**62),
)


@dataclass(frozen=True)
class AgeBasis:
    """What an age means for one state, and the column expression (ms) that computes it."""

    meaning: str
    age_ms: Column


def age_basis(frame: DataFrame, watermark_ms: int) -> AgeBasis | None:
    """How to age the rows of ``frame`` (a ``statestore`` read), or None if it cannot be done."""
    value = _field(frame.schema, "value")
    if isinstance(value, StructType) and _is_sessions(value):
        last_event = F.array_max(F.transform("value.sessions", lambda s: s["endMs"]))
        return AgeBasis("time since the key's last event", F.lit(watermark_ms) - last_event)
    for column in ("value", "list_element"):  # a keyed processor's entries carry their write
        entry = _field(frame.schema, column)
        if isinstance(entry, StructType) and WRITTEN in entry.fieldNames():
            written = F.col(f"{column}.{WRITTEN}")
            return AgeBasis("time since the entry was written", F.lit(watermark_ms) - written)
    key = _field(frame.schema, "key")
    path = _timestamp_path(key, "key") if key is not None else None
    if path is not None:
        event_ms = F.unix_millis(F.col(path).cast("timestamp"))
        return AgeBasis(f"time since the key's event time ({path})", F.lit(watermark_ms) - event_ms)
    return None


def bucket(age_ms: Column) -> Column:
    """The :data:`BUCKETS` label of an age in milliseconds."""
    label = F.lit(BUCKETS[-1][0])
    for name, upper in reversed(BUCKETS[:-1]):
        label = F.when(age_ms < F.lit(upper), F.lit(name)).otherwise(label)
    return label


def _is_sessions(value: StructType) -> bool:
    sessions = _field(value, "sessions")
    return (
        isinstance(sessions, ArrayType)
        and isinstance(sessions.elementType, StructType)
        and "endMs" in sessions.elementType.fieldNames()
    )


def _timestamp_path(dtype: DataType, path: str) -> str | None:
    """The first timestamp field in a key, preferring a window's ``end``."""
    if isinstance(dtype, TimestampType | TimestampNTZType):
        return path
    if isinstance(dtype, StructType):
        names = sorted(dtype.fieldNames(), key=lambda n: n != "end")
        for name in names:
            found = _timestamp_path(dtype[name].dataType, f"{path}.{name}")
            if found:
                return found
    return None


def _field(struct: StructType, name: str) -> DataType | None:
    return struct[name].dataType if name in struct.fieldNames() else None
