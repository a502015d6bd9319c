"""The join operator's settings, ``[join]``."""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from pydantic import Field, field_validator, model_validator

from streamwarden.operators.settings import OperatorSettings
from streamwarden.settings import defaults
from streamwarden.settings.types import Duration, OptionalDuration
from streamwarden.settings.units import format_duration, parse_duration

__all__ = ["JoinConfig"]

#: Most rows one key buffers, both sides together, unless ``max_rows_per_key`` says otherwise.
MAX_ROWS_PER_KEY = 10_000


class JoinConfig(OperatorSettings):
    """An interval join of two of the pipeline's sources (``[sources.<name>]``): a ``left``
    row and a ``right`` row with equal ``on`` fields (pairs of left and right field names)
    join when the right row's time is within ``between`` (two durations, from and to, either
    may be negative) of the left row's: ``right.time in [left.time + from, left.time + to]``.
    ``type = "left_outer"`` also writes each left row that found no match, with the right
    side's columns null, once no row can match it any more. Each row is kept only while it can
    still match: until its interval plus ``allowed_lateness`` has passed in event time; a row
    later than that (behind the watermark by more than ``allowed_lateness``) is ``too_late``,
    and a row over ``max_rows_per_key`` rows buffered for its key is ``key_buffer_full``, both
    in the dead letters with the source they came from."""

    outputs = ("joined",)
    needs = 'left, right, on and between, e.g. left = "payments", right = "refunds"'
    several_sources = True

    left: str
    right: str
    #: Pairs of fields, left and right, whose values must be equal: ``[["payment_id",
    #: "payment_id"]]``.
    on: list[list[str]] = Field(min_length=1)
    between: tuple[timedelta, timedelta]
    type: Literal["inner", "left_outer"] = "inner"
    allowed_lateness: Duration = defaults.ALLOWED_LATENESS
    max_out_of_orderness: Duration = defaults.MAX_OUT_OF_ORDERNESS
    max_rows_per_key: int = Field(default=MAX_ROWS_PER_KEY, ge=1, le=2**31 - 1)
    idle_timeout: OptionalDuration = defaults.IDLE_TIMEOUT
    slow_key_threshold: OptionalDuration = defaults.SLOW_KEY_THRESHOLD

    @field_validator("on")
    @classmethod
    def _pairs(cls, value: list[list[str]]) -> list[list[str]]:
        for pair in value:
            if len(pair) != 2:
                raise ValueError(
                    f"join.on: each entry is a pair [left field, right field], got {pair!r}"
                )
        return value

    @field_validator("between", mode="before")
    @classmethod
    def _signed(cls, value: object) -> object:
        """Durations may be negative here (``"-5m"``): a right row before its left row."""
        if isinstance(value, list | tuple) and len(value) == 2:
            return tuple(_signed_duration(v) for v in value)
        raise ValueError('give between as two durations, from and to, e.g. ["0s", "1d"]')

    @model_validator(mode="after")
    def _fits(self) -> JoinConfig:
        low, high = self.between
        if low > high:
            raise ValueError(
                f"join.between: from ({format_duration(low)}) is after to ({format_duration(high)})"
            )
        if self.left == self.right:
            raise ValueError("join.left and join.right name the same source; name two")
        if self.idle_timeout is not None and self.idle_timeout <= timedelta(0):
            raise ValueError("join.idle_timeout must be > 0, or 'off' to turn it off")
        return self

    @property
    def horizon(self) -> timedelta:
        """How long after its own time a row may still be needed, lateness aside."""
        low, high = self.between
        return max(high, -low, timedelta(0))


def _signed_duration(value: object) -> timedelta:
    """A duration such as ``"1d"`` or ``"-5m"``."""
    if isinstance(value, timedelta):
        return value
    if not isinstance(value, str):
        raise ValueError(f"give a duration such as '10m' or '-5m', got {value!r}")
    text = value.strip()
    return -parse_duration(text[1:]) if text.startswith("-") else parse_duration(text)
