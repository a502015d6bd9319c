"""The sessions operator's settings, ``[sessions]``."""

from __future__ import annotations

from datetime import timedelta

from pydantic import Field, field_validator, model_validator

from streamwarden.operators.settings import OperatorSettings
from streamwarden.settings import defaults
from streamwarden.settings.removed import refuse_removed
from streamwarden.settings.types import Duration, OptionalDuration, Size
from streamwarden.settings.units import format_duration

__all__ = ["SessionsConfig", "aggregate_calls"]


_REMOVED = {
    "collect_urls": "declare the list as an aggregate, e.g. [sessions.aggregates] urls = "
    '"collect_list(url)"',
    "max_pages": "write sessions.max_events",
}


def aggregate_calls(value: dict[str, str], section: str) -> dict[str, str]:
    """``value`` (``[<section>.aggregates]``) if each entry reads as ``function(field)``; the
    functions and fields are checked against the schema later, when the operator is built."""
    for name, text in value.items():
        if "(" not in text or not text.rstrip().endswith(")"):
            raise ValueError(
                f"{section}.aggregates.{name} = {text!r}: write function(field), e.g. 'sum(amount)'"
            )
    return value


class SessionsConfig(OperatorSettings):
    """Parameters of the sessionization operator: when a key's session ends (``gap``), how
    late events may still change it, its caps (``max_events``, ``max_session_bytes``) and the
    aggregates each session carries (``[sessions.aggregates]``: output column =
    ``"function(field)"`` over the schema's fields)."""

    outputs = ("sessions",)

    gap: Duration = defaults.GAP
    allowed_lateness: Duration = defaults.ALLOWED_LATENESS
    max_out_of_orderness: Duration = defaults.MAX_OUT_OF_ORDERNESS
    max_events: int = Field(default=defaults.MAX_EVENTS, ge=1, le=2**63 - 1)
    max_session_bytes: Size = Field(default=defaults.MAX_SESSION_BYTES, ge=1)
    aggregates: dict[str, str] = Field(default_factory=dict)
    idle_timeout: OptionalDuration = defaults.IDLE_TIMEOUT
    slow_key_threshold: OptionalDuration = defaults.SLOW_KEY_THRESHOLD
    #: How late an event may still be merged into its closed session from the history store
    #: (``[history]``) once its session has left state; None (``"off"``, the default): late
    #: events beyond ``allowed_lateness`` are ``too_late``.
    history_lateness: OptionalDuration = None

    @model_validator(mode="before")
    @classmethod
    def _removed(cls, data: object) -> object:
        return refuse_removed(data, _REMOVED, "sessions")

    @field_validator("aggregates")
    @classmethod
    def _calls(cls, value: dict[str, str]) -> dict[str, str]:
        return aggregate_calls(value, "sessions")

    @model_validator(mode="after")
    def _positive_times(self) -> SessionsConfig:
        if self.gap <= timedelta(0):
            raise ValueError(f"sessions.gap must be > 0, got {format_duration(self.gap)!r}")
        if self.idle_timeout is not None and self.idle_timeout <= timedelta(0):
            raise ValueError("sessions.idle_timeout must be > 0, or 'off' to turn it off")
        return self
