"""Session operator parameters and the JSON plan handed to the Java engine."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta

from streamwarden.config.model import SessionsConfig, ValidationConfig
from streamwarden.errors import ConfigError

__all__ = ["SessionParams"]


def _ms(value: timedelta) -> int:
    return int(value.total_seconds() * 1000)


@dataclass(frozen=True)
class SessionParams:
    """What the session engine needs. Every piece of state it keeps is bounded by
    ``gap + allowed_lateness`` after the user's last event in event time (lessons L1-L3)."""

    gap: timedelta = timedelta(minutes=30)
    allowed_lateness: timedelta = timedelta(0)
    max_out_of_orderness: timedelta = timedelta(minutes=1)
    max_pages: int = 300
    max_session_bytes: int = 4_000_000
    collect_urls: bool = False
    slow_key_threshold: timedelta | None = timedelta(seconds=1)

    def __post_init__(self) -> None:
        if self.gap <= timedelta(0):
            raise ConfigError(f"gap must be > 0, got {self.gap!r}; sessions need a gap to end")
        if self.allowed_lateness < timedelta(0) or self.max_out_of_orderness < timedelta(0):
            raise ConfigError("allowed_lateness and max_out_of_orderness must be >= 0")
        if self.max_pages < 1 or self.max_session_bytes < 1:
            raise ConfigError("max_pages and max_session_bytes must be >= 1")

    @classmethod
    def from_config(cls, sessions: SessionsConfig, validation: ValidationConfig) -> SessionParams:
        return cls(
            gap=sessions.gap,
            allowed_lateness=sessions.allowed_lateness,
            max_out_of_orderness=sessions.max_out_of_orderness,
            max_pages=validation.max_pages,
            max_session_bytes=sessions.max_session_bytes,
            collect_urls=sessions.collect_urls,
            slow_key_threshold=sessions.slow_key_threshold,
        )

    def to_plan_json(self) -> str:
        """The plan the Java ``SessionPlan.fromJson`` reads."""
        return json.dumps(
            {
                "gap_ms": _ms(self.gap),
                "allowed_lateness_ms": _ms(self.allowed_lateness),
                "max_pages": self.max_pages,
                "max_session_bytes": self.max_session_bytes,
                "collect_urls": self.collect_urls,
            }
        )

    @property
    def slow_key_threshold_ms(self) -> int:
        return 0 if self.slow_key_threshold is None else _ms(self.slow_key_threshold)
