"""Session operator parameters and the JSON plan handed to the Java engine."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING

from streamwarden.errors import ConfigError
from streamwarden.operators.arguments import check_duration, check_int, shown
from streamwarden.operators.sessions.aggregates import (
    Aggregate,
    AggregateError,
    engine_plan,
    parse_aggregates,
)
from streamwarden.operators.sessions.settings import SessionsConfig
from streamwarden.settings import defaults
from streamwarden.settings.units import format_duration

if TYPE_CHECKING:
    from pyspark.sql import types as T

__all__ = ["SessionParams"]

#: The largest value a Java ``long`` holds.
JAVA_LONG_MAX = 2**63 - 1


def _ms(value: timedelta) -> int:
    return int(value.total_seconds() * 1000)


@dataclass(frozen=True)
class SessionParams:
    """What the session engine needs. Every piece of state it keeps is bounded by
    ``gap + allowed_lateness`` after the user's last event in event time
    (docs/failure-modes.md#state-without-deadline, #idle-input).

    - ``gap``: a session ends after this long without an event of its user;
    - ``allowed_lateness``: how long after its close a session still takes late events;
    - ``max_out_of_orderness``: the watermark delay (max event time minus this);
    - ``max_events`` / ``max_session_bytes``: per-session caps; events past them are
      dead-lettered and the session flagged ``truncated`` (the values ``count_distinct`` and
      ``collect_*`` hold count toward the byte cap);
    - ``aggregates``: output column name -> ``"function(field)"``, e.g.
      ``{"total": "sum(amount)"}`` (functions: ``streamwarden.AGGREGATE_FUNCTIONS``);
    - ``slow_key_threshold``: the engine logs a user whose work in a batch took longer;
    - ``history_lateness``: a late event beyond ``allowed_lateness`` that finds no session in
      state but is within this leaves the engine for the history store's merge (None: off, such
      events are ``too_late``); it must exceed ``allowed_lateness``.

    Durations are :class:`datetime.timedelta` values (``slow_key_threshold`` may be None: no
    slow-key log); ``max_events`` and ``max_session_bytes`` are ints; ``aggregates`` a dict.
    Any other type raises :class:`ConfigError` naming the parameter; convert a config string
    such as ``"30m"`` first with :func:`streamwarden.settings.units.parse_duration`.
    """

    gap: timedelta = defaults.GAP
    allowed_lateness: timedelta = defaults.ALLOWED_LATENESS
    max_out_of_orderness: timedelta = defaults.MAX_OUT_OF_ORDERNESS
    max_events: int = defaults.MAX_EVENTS
    max_session_bytes: int = defaults.MAX_SESSION_BYTES
    aggregates: Mapping[str, str] = field(default_factory=dict)
    slow_key_threshold: timedelta | None = defaults.SLOW_KEY_THRESHOLD
    history_lateness: timedelta | None = None

    def __post_init__(self) -> None:
        self._check_types()
        if self.gap <= timedelta(0):
            raise ConfigError(f"gap must be > 0, got {self.gap!r}; sessions need a gap to end")
        for name in ("allowed_lateness", "max_out_of_orderness"):
            value = getattr(self, name)
            if value < timedelta(0):
                raise ConfigError(f"{name} must be >= 0, got {value!r}")
        for name in ("max_events", "max_session_bytes"):
            if not 1 <= getattr(self, name) <= JAVA_LONG_MAX:  # the engine holds them as longs
                raise ConfigError(
                    f"{name} must be from 1 to 2**63 - 1, got {getattr(self, name)!r}"
                )
        if self.history_lateness is not None and self.history_lateness <= self.allowed_lateness:
            raise ConfigError(
                f"history_lateness ({format_duration(self.history_lateness)}) must be longer "
                f"than allowed_lateness ({format_duration(self.allowed_lateness)}): the history "
                "store takes the late "
                "events the state no longer can; raise it, or turn it off"
            )

    @property
    def drain_horizon(self) -> timedelta:
        """How far past the latest event time every session has closed and expired."""
        return self.gap + self.allowed_lateness + self.max_out_of_orderness

    def _check_types(self) -> None:
        check_duration(ConfigError, "gap", self.gap, example="timedelta(minutes=30)")
        check_duration(
            ConfigError, "allowed_lateness", self.allowed_lateness, example="timedelta(minutes=10)"
        )
        check_duration(
            ConfigError,
            "max_out_of_orderness",
            self.max_out_of_orderness,
            example="timedelta(minutes=1)",
        )
        check_int(ConfigError, "max_events", self.max_events, example="300")
        check_int(ConfigError, "max_session_bytes", self.max_session_bytes, example="4_000_000")
        if not isinstance(self.aggregates, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.aggregates.items()
        ):
            raise ConfigError(
                "aggregates must be a dict of output column -> 'function(field)' such as "
                f"{{'total': 'sum(amount)'}}, got {shown(self.aggregates)}"
            )
        check_duration(
            ConfigError,
            "slow_key_threshold",
            self.slow_key_threshold,
            example="timedelta(seconds=1)",
            none_allowed=True,
        )
        check_duration(
            ConfigError,
            "history_lateness",
            self.history_lateness,
            example="timedelta(days=3)",
            none_allowed=True,
        )

    @classmethod
    def from_config(cls, sessions: SessionsConfig) -> SessionParams:
        """The parameters a pipeline config's ``[sessions]`` describes."""
        return cls(
            gap=sessions.gap,
            allowed_lateness=sessions.allowed_lateness,
            max_out_of_orderness=sessions.max_out_of_orderness,
            max_events=sessions.max_events,
            max_session_bytes=sessions.max_session_bytes,
            aggregates=dict(sessions.aggregates),
            slow_key_threshold=sessions.slow_key_threshold,
            history_lateness=sessions.history_lateness,
        )

    def bind(
        self, fields: T.StructType, *, key_name: str, where: str = "sessions."
    ) -> list[Aggregate]:
        """The aggregates over ``fields`` (whose key's output column is ``key_name``); raises
        :class:`ConfigError` naming an aggregate that cannot be computed (after ``where``, the
        setting's place: ``sessions.`` in a config)."""
        try:
            return parse_aggregates(self.aggregates, fields, taken=(key_name,))
        except AggregateError as exc:
            raise ConfigError(f"{where}{exc}") from None

    def to_plan_json(self, aggregates: list[Aggregate] = (), *, keep_state: bool = False) -> str:  # type: ignore[assignment]
        """The plan the Java ``SessionPlan.fromJson`` reads; ``keep_state``: session rows carry
        their aggregates' state (a history store keeps it to merge late events later)."""
        plan = engine_plan(list(aggregates))
        return json.dumps(
            {
                "gap_ms": _ms(self.gap),
                "allowed_lateness_ms": _ms(self.allowed_lateness),
                "max_events": self.max_events,
                "max_session_bytes": self.max_session_bytes,
                "history_lateness_ms": 0
                if self.history_lateness is None
                else _ms(self.history_lateness),
                "inputs": plan["inputs"],
                "aggregates": plan["aggregates"],
                "keep_state": keep_state,
            }
        )

    @property
    def slow_key_threshold_ms(self) -> int:
        return 0 if self.slow_key_threshold is None else _ms(self.slow_key_threshold)
