"""The windows operator's settings, ``[windows]``."""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from pydantic import Field, field_validator, model_validator

from streamwarden.operators.sessions.settings import aggregate_calls
from streamwarden.operators.settings import OperatorSettings
from streamwarden.settings import defaults
from streamwarden.settings.types import Duration, OptionalDuration, Size
from streamwarden.settings.units import format_duration

__all__ = ["WindowsConfig"]

#: A window's aggregate values (``count_distinct``, ``collect_*``) may hold this many bytes.
MAX_WINDOW_BYTES = 16_000_000


class WindowsConfig(OperatorSettings):
    """Tumbling (``size``) or hopping (``size`` and ``slide``) event-time windows per group
    (``by``: fields of the schema, the schema's key when not given), each carrying the
    aggregates of ``[windows.aggregates]`` (output column = ``"function(field)"``, the functions
    of sessions). A window takes late events until its end plus ``allowed_lateness``; later ones
    are ``too_late`` dead letters. ``emit = "final"`` writes each window once, when its end plus
    ``allowed_lateness`` has passed; ``"updates"`` writes a revision in every micro-batch that
    changed it. Caps per window: ``max_events``, and ``max_window_bytes`` on the values
    ``count_distinct`` and ``collect_*`` hold; an event past a cap is dead-lettered and the
    window flagged ``truncated``."""

    outputs = ("windows",)
    needs = 'size = "1m"'

    size: Duration
    #: How far apart hopping windows start; ``size`` must be a whole multiple of it. Not given:
    #: tumbling windows (``slide = size``).
    slide: OptionalDuration = None
    by: list[str] | None = None
    allowed_lateness: Duration = defaults.ALLOWED_LATENESS
    emit: Literal["final", "updates"] = "final"
    aggregates: dict[str, str] = Field(default_factory=dict)
    max_out_of_orderness: Duration = defaults.MAX_OUT_OF_ORDERNESS
    #: Most events one window takes (not given: no cap; the state holds no events).
    max_events: int | None = Field(default=None, ge=1, le=2**63 - 1)
    max_window_bytes: Size = Field(default=MAX_WINDOW_BYTES, ge=1)
    idle_timeout: OptionalDuration = defaults.IDLE_TIMEOUT
    slow_key_threshold: OptionalDuration = defaults.SLOW_KEY_THRESHOLD

    @field_validator("aggregates")
    @classmethod
    def _calls(cls, value: dict[str, str]) -> dict[str, str]:
        return aggregate_calls(value, "windows")

    @field_validator("by")
    @classmethod
    def _fields(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and (not value or len(set(value)) != len(value)):
            raise ValueError("windows.by: give one or more distinct fields, e.g. ['merchant']")
        return value

    @model_validator(mode="after")
    def _times(self) -> WindowsConfig:
        if self.size <= timedelta(0):
            raise ValueError(f"windows.size must be > 0, got {format_duration(self.size)!r}")
        slide = self.slide_or_size
        if slide <= timedelta(0) or slide > self.size or self.size % slide != timedelta(0):
            raise ValueError(
                f"windows.slide ({format_duration(slide)}) must divide windows.size "
                f"({format_duration(self.size)}) a whole number of times, so that every event "
                "falls in the same number of windows; e.g. size = '1m', slide = '15s'"
            )
        if self.idle_timeout is not None and self.idle_timeout <= timedelta(0):
            raise ValueError("windows.idle_timeout must be > 0, or 'off' to turn it off")
        return self

    @property
    def slide_or_size(self) -> timedelta:
        """How far apart windows start."""
        return self.size if self.slide is None else self.slide

    @property
    def windows_per_event(self) -> int:
        """How many windows every event falls in (1 for tumbling windows)."""
        return self.size // self.slide_or_size
