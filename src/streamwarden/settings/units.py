"""Parsing of human-friendly durations ("30m", "1h30m", "500ms") and sizes ("4MB", "64KiB")."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import TypeVar

T = TypeVar("T")

__all__ = ["OFF", "format_duration", "off_or", "parse_duration", "parse_memory", "parse_size"]

#: What a setting that can be turned off is set to in a config file to turn it off (TOML has no
#: null; YAML's ``null`` works too).
OFF = "off"

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|min|s|m|h|d)", re.IGNORECASE)
_DURATION_UNITS = {
    "ms": timedelta(milliseconds=1),
    "s": timedelta(seconds=1),
    "m": timedelta(minutes=1),
    "min": timedelta(minutes=1),
    "h": timedelta(hours=1),
    "d": timedelta(days=1),
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]i?b|[kmgt]|b)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {
    "b": 1,
    "k": 2**10,
    "m": 2**20,
    "g": 2**30,
    "t": 2**40,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}

_MEMORY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b?)\s*$", re.IGNORECASE)
_MEMORY_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def off_or(parse: Callable[[object], T]) -> Callable[[object], T | None]:
    """``parse``, except that ``"off"`` (any case) and None read as None: the setting is off."""

    def parse_or_off(value: object) -> T | None:
        if value is None or (isinstance(value, str) and value.strip().lower() == OFF):
            return None
        return parse(value)

    return parse_or_off


def parse_memory(value: object, *, bare_unit: str = "") -> int:
    """Reads a memory amount as Spark, the JVM and Kubernetes write it, in binary units:
    ``"8g"``, ``"512m"``, ``"4GiB"``, ``"8Gi"``. A bare number is in ``bare_unit`` (bytes by
    default; Spark reads a bare ``spark.executor.memory`` as MiB, so pass ``"m"`` for it)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value * _MEMORY_UNITS[bare_unit]
    if isinstance(value, str):
        match = _MEMORY.match(value)
        if match:
            number, unit = match.groups()
            return int(float(number) * _MEMORY_UNITS[(unit or bare_unit).lower()])
    raise ValueError(f"expected a memory amount such as '8g', '512m' or '4GiB', got {value!r}")


def parse_duration(value: object) -> timedelta:
    """Reads ``"30m"``, ``"1h 30m"``, ``"250ms"``, a number of seconds, or a timedelta. No
    setting takes a negative duration, so none is read; nor one too large for a timedelta."""
    try:
        duration = _duration(value)
    except OverflowError:
        raise ValueError(f"duration {value!r} is too large (at most 999999999 days)") from None
    if duration < timedelta(0):
        raise ValueError(f"a duration cannot be negative, got {value!r}")
    return duration


def _duration(value: object) -> timedelta:
    if isinstance(value, timedelta):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
        return timedelta(seconds=value)
    if isinstance(value, str):
        text = value.strip().replace(" ", "")
        parts = _DURATION_PART.findall(text)
        if text and "".join(n + u for n, u in parts).lower() == text.lower():
            return sum((float(n) * _DURATION_UNITS[u.lower()] for n, u in parts), timedelta())
    raise ValueError(f"expected a duration such as '30m', '1h30m', '45s' or '500ms', got {value!r}")


def format_duration(value: timedelta) -> str:
    """The inverse of :func:`parse_duration` for display: ``timedelta(minutes=90)`` -> '1h30m'."""
    ms = int(value.total_seconds() * 1000)
    if ms == 0:
        return "0s"
    out = []
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms >= size:
            out.append(f"{ms // size}{unit}")
            ms %= size
    if ms:
        out.append(f"{ms}ms")
    return "".join(out)


def parse_size(value: object) -> int:
    """Reads a number of bytes: ``"4MB"`` (SI, 4,000,000), ``"64KiB"`` (binary), ``"64m"`` (binary,
    as Spark and the JVM write sizes), ``"100b"`` or a plain number."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        match = _SIZE.match(value)
        if match:
            number, unit = match.groups()
            return int(float(number) * _SIZE_UNITS[(unit or "b").lower()])
    raise ValueError(
        f"expected a size such as '4MB', '64KiB', '64m' or a number of bytes, got {value!r}"
    )
