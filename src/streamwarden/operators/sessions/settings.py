"""The sessions operator's settings, ``[sessions]``."""

from __future__ import annotations

from datetime import timedelta

from pydantic import Field, model_validator

from streamwarden.operators.settings import OperatorSettings
from streamwarden.settings import defaults
from streamwarden.settings.types import Duration, OptionalDuration, Size
from streamwarden.settings.units import format_duration

__all__ = ["SessionsConfig"]


class SessionsConfig(OperatorSettings):
    """Parameters of the sessionization operator."""

    outputs = ("sessions",)

    gap: Duration = defaults.GAP
    allowed_lateness: Duration = defaults.ALLOWED_LATENESS
    max_out_of_orderness: Duration = defaults.MAX_OUT_OF_ORDERNESS
    max_session_bytes: Size = Field(default=defaults.MAX_SESSION_BYTES, ge=1)
    collect_urls: bool = False
    idle_timeout: OptionalDuration = defaults.IDLE_TIMEOUT
    slow_key_threshold: OptionalDuration = defaults.SLOW_KEY_THRESHOLD
    #: How late an event may still be merged into its closed session from the history store
    #: (``[history]``) once its session has left state; None (``"off"``, the default): late
    #: events beyond ``allowed_lateness`` are ``too_late``.
    history_lateness: OptionalDuration = None

    @model_validator(mode="after")
    def _positive_times(self) -> SessionsConfig:
        if self.gap <= timedelta(0):
            raise ValueError(f"sessions.gap must be > 0, got {format_duration(self.gap)!r}")
        if self.idle_timeout is not None and self.idle_timeout <= timedelta(0):
            raise ValueError("sessions.idle_timeout must be > 0, or 'off' to turn it off")
        return self
