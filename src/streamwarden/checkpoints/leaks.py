"""Which keys hold state that nothing will ever remove (lessons L1, L3): the leak suspects.

The rules, per kind of operator, from what Spark itself does:

- transformWithState: a key's state goes away only through the processor (clearing it, usually
  in a timer) or a TTL. A key in a state variable without TTL and with no registered timer has
  nothing scheduled that could clear it: a suspect.
- streaming aggregation and deduplication: Spark evicts state only when the watermark passes an
  event-time column of the key. No event-time column in the key, or a watermark that never
  moved, means every key stays forever: all suspects.
- stream-stream joins: evicted by the watermark; a watermark that never moved means no eviction.
- anything else: not judged (said so in the report).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StructType, TimestampNTZType, TimestampType

from streamwarden.checkpoints.state_reader import OperatorState, StateVariable

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["LeakCheck", "check_variable"]

_WATERMARK_EVICTED = ("stateStoreSave", "dedupe", "sessionWindowStateStoreSaveExec")
_SAMPLE = 5


@dataclass(frozen=True)
class LeakCheck:
    """The verdict for one state: how many keys have no deadline, and why (None: not judged)."""

    suspect_keys: int | None
    reason: str
    sample: tuple[str, ...] = ()

    @property
    def suspected(self) -> bool:
        return bool(self.suspect_keys)


def check_variable(
    op: OperatorState,
    var: StateVariable,
    keys: DataFrame,
    timers: DataFrame | None,
    watermark_ever_set: bool,
) -> LeakCheck:
    """``keys``: the distinct ``key`` column of the state; ``timers``: its registered timers."""
    if op.is_transform_with_state:
        return _check_tws(var, keys, timers)
    if op.name in _WATERMARK_EVICTED or op.name.startswith("dedupe"):
        if not _has_event_time(keys.schema["key"].dataType):
            return _all(
                keys,
                "its key has no event-time column, and Spark evicts this "
                "operator's state only when the watermark passes one",
            )
        if not watermark_ever_set:
            return _all(
                keys,
                "the watermark never advanced (no watermark defined, or no "
                "event time seen), and only the watermark evicts this state",
            )
        return LeakCheck(0, "evicted when the watermark passes the key's event time")
    if "Join" in op.name and not watermark_ever_set:
        return _all(keys, "the watermark never advanced, and only it evicts join state")
    return LeakCheck(None, f"no rule for operator {op.name!r}; not judged")


def _check_tws(var: StateVariable, keys: DataFrame, timers: DataFrame | None) -> LeakCheck:
    if var.ttl:
        return LeakCheck(0, "the state variable has a TTL")
    if timers is None:
        return _all(keys, "no TTL, and the operator registers no timers at all")
    orphans = keys.join(timers.select("key"), on="key", how="left_anti")
    count = orphans.count()
    if count == 0:
        return LeakCheck(0, "every key with state has a registered timer")
    return LeakCheck(count, "no TTL and no registered timer for these keys", _sample(orphans))


def _all(keys: DataFrame, reason: str) -> LeakCheck:
    return LeakCheck(keys.count(), reason, _sample(keys))


def _sample(keys: DataFrame) -> tuple[str, ...]:
    rows = keys.select(F.to_json("key").alias("k")).limit(_SAMPLE).collect()
    return tuple(str(r["k"]) for r in rows)


def _has_event_time(dtype: DataType) -> bool:
    if isinstance(dtype, TimestampType | TimestampNTZType):
        return True
    if isinstance(dtype, StructType):
        return any(_has_event_time(f.dataType) for f in dtype.fields)
    return False
