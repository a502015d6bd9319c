"""Operator defaults, defined once: the config model, the operators' options
(:class:`~streamwarden.operators.sessions.SessionParams`,
:class:`~streamwarden.operators.patterns.PatternOptions`) and the testers take them from here,
and the plans sent to the Java engine always carry the values (the engine has no defaults).
"""

from __future__ import annotations

from datetime import timedelta

__all__ = [
    "ALLOWED_LATENESS",
    "GAP",
    "IDLE_TIMEOUT",
    "MAX_BUFFERED_PER_KEY",
    "MAX_EVENTS",
    "MAX_OUT_OF_ORDERNESS",
    "MAX_PARTIALS_PER_KEY",
    "MAX_SESSION_BYTES",
    "SLOW_KEY_THRESHOLD",
]

#: Both operators: the watermark delay (max event time minus this).
MAX_OUT_OF_ORDERNESS = timedelta(minutes=1)
#: Both operators: the engine logs a key whose work in one batch took longer.
SLOW_KEY_THRESHOLD = timedelta(seconds=1)
#: Both operators in a pipeline: after this long without input, ticks move event time.
IDLE_TIMEOUT = timedelta(minutes=5)

#: Sessions: a session ends after this long without an event of its user.
GAP = timedelta(minutes=30)
#: Sessions: how long after its close a session still takes late events.
ALLOWED_LATENESS = timedelta(0)
#: Sessions: the per-session cap on events.
MAX_EVENTS = 10_000
#: Sessions: the per-session cap on raw-record bytes.
MAX_SESSION_BYTES = 4_000_000

#: Patterns: the cap on one key's partial matches (lesson L4).
MAX_PARTIALS_PER_KEY = 1000
#: Patterns: the cap on one key's events waiting for the watermark (lesson L4).
MAX_BUFFERED_PER_KEY = 10_000
