"""``PatternOptions``: how the pattern operator runs, with its defaults from
:mod:`streamwarden.settings.defaults`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from streamwarden.errors import PatternError
from streamwarden.operators.arguments import check_bool, check_duration, check_int
from streamwarden.settings import defaults

__all__ = ["PatternOptions"]


@dataclass(frozen=True)
class PatternOptions:
    """How the pattern operator runs.

    ``max_out_of_orderness``: how long events wait for earlier ones before the NFA consumes
    them in event-time order (the watermark delay); an event behind the watermark when it
    arrives is dead-lettered ``too_late``. ``max_buffered_per_key`` caps one key's events
    waiting for the watermark; events past it are dead-lettered ``key_buffer_full``
    (docs/failure-modes.md#bad-input).
    ``max_partials_per_key`` caps the partial matches of one key; the excess is dropped and
    reported as ``overflow`` rows (``DetectResult.overflows``). ``emit_timeouts`` reports
    partial matches whose window closed. ``slow_key_threshold``: the engine logs a key whose
    work in a batch took longer. ``prefilter``: when every contiguity is relaxed (and no loop
    ends at an ``until_aggregate``), drop events that meet no stage condition before the
    engine (they cannot change a match); off, every event reaches the NFA.

    Durations are :class:`datetime.timedelta` values (``slow_key_threshold`` may be None: no
    slow-key log), the caps ints, the switches bools; any other type raises
    :class:`PatternError` naming the option. Convert a config string such as ``"1m"`` first
    with :func:`streamwarden.settings.units.parse_duration`.
    """

    max_out_of_orderness: timedelta = defaults.MAX_OUT_OF_ORDERNESS
    max_partials_per_key: int = defaults.MAX_PARTIALS_PER_KEY
    max_buffered_per_key: int = defaults.MAX_BUFFERED_PER_KEY
    emit_timeouts: bool = False
    slow_key_threshold: timedelta | None = defaults.SLOW_KEY_THRESHOLD
    prefilter: bool = True

    def __post_init__(self) -> None:
        self._check_types()
        if self.max_out_of_orderness < timedelta(0):
            raise PatternError(
                f"max_out_of_orderness must be >= 0, got {self.max_out_of_orderness!r}"
            )
        for name in ("max_partials_per_key", "max_buffered_per_key"):
            if getattr(self, name) < 1:
                raise PatternError(f"{name} must be >= 1, got {getattr(self, name)!r}")

    def _check_types(self) -> None:
        check_duration(
            PatternError,
            "max_out_of_orderness",
            self.max_out_of_orderness,
            example="timedelta(minutes=1)",
        )
        check_int(PatternError, "max_partials_per_key", self.max_partials_per_key, example="1000")
        check_int(PatternError, "max_buffered_per_key", self.max_buffered_per_key, example="10_000")
        for name in ("emit_timeouts", "prefilter"):
            check_bool(PatternError, name, getattr(self, name))
        check_duration(
            PatternError,
            "slow_key_threshold",
            self.slow_key_threshold,
            example="timedelta(seconds=1)",
            none_allowed=True,
        )
