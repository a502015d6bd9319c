"""Type checks for the arguments of the public operator API, so that a wrong type is refused
with the parameter, the value given and what to pass instead, not a TypeError from deep inside.

Each check takes the error class to raise: ``SessionParams`` raises :class:`ConfigError`, the
pattern API :class:`PatternError`, the entry points :class:`UsageError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from streamwarden.errors import UsageError

__all__ = ["check_bool", "check_duration", "check_int", "check_typed_events", "shown"]


def shown(value: object) -> str:
    """``value`` as the user wrote it, with its type: ``'30m' (str)``."""
    return f"{value!r} ({type(value).__name__})"


def check_duration(
    error: type[UsageError],
    name: str,
    value: object,
    *,
    example: str,
    none_allowed: bool = False,
) -> None:
    """Refuses anything but a :class:`datetime.timedelta` (or None, if ``none_allowed``)."""
    if isinstance(value, timedelta) or (none_allowed and value is None):
        return
    also = " or None" if none_allowed else ""
    hint = ""
    if isinstance(value, str):
        hint = (
            f"; to read a config string such as {value!r}, use "
            f"streamwarden.settings.units.parse_duration({value!r})"
        )
    raise error(
        f"{name} must be a datetime.timedelta such as {example}{also}, got {shown(value)}{hint}"
    )


def check_int(error: type[UsageError], name: str, value: object, *, example: str) -> None:
    """Refuses anything but an int; a bool is refused too, though Python counts it an int."""
    if isinstance(value, int) and not isinstance(value, bool):
        return
    raise error(f"{name} must be an int such as {example}, got {shown(value)}")


def check_bool(error: type[UsageError], name: str, value: object) -> None:
    """Refuses anything but True or False (a truthy string such as 'no' would read as True)."""
    if isinstance(value, bool):
        return
    raise error(f"{name} must be True or False, got {shown(value)}")


def check_typed_events(events: object, who: str, columns: Sequence[str]) -> None:
    """Refuses, with a :class:`UsageError` saying what to do, events that are not a streaming
    DataFrame, lack one of ``columns`` or whose time (the last of them) is not a time; ``who``
    is the function the user called."""
    from pyspark.sql import DataFrame
    from pyspark.sql import types as T

    from streamwarden.schema.model import field_type

    if not isinstance(events, DataFrame) or not events.isStreaming:
        raise UsageError(
            f"{who}(events, ...): events must be a streaming Spark DataFrame of typed events "
            "(spark.readStream...): its state is freed by the watermark of a streaming query; "
            "for a finite input, read its files as a stream and run it with run_query(..., "
            "once=True, drain=True)"
        )
    for column in columns:
        if field_type(events.schema, column) is None:
            raise UsageError(
                f"{who}(events): column {column!r} is not in events, whose columns are "
                f"{', '.join(map(repr, events.columns))}"
            )
    time = columns[-1]
    time_type = field_type(events.schema, time)
    if not isinstance(time_type, T.TimestampType | T.LongType | T.IntegerType):
        raise UsageError(
            f"{who}(events): the time {time!r} is {time_type}; an event time is a timestamp "
            "or epoch milliseconds (bigint or int)"
        )
