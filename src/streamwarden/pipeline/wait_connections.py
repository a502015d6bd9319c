"""A continuous run that finds its cluster down waits for it, instead of needing a person.

Before Spark starts, ``run`` checks every connection of the plan (the source's brokers, each
sink's, the history store's). When one does not answer (:class:`UnreachableError`), a
continuous run asks again after a back-off, doubled after each attempt up to the supervisor's
``max_backoff``, one log line per attempt, until ``[supervisor] wait_for_connections`` has
passed; then the last error ends the run as before. ``--once`` does not wait. Any other error (a
missing topic, a bad config) ends the run at once: no wait fixes it.

Example::

    wait_for_connections(plan.check_connections, limit=timedelta(minutes=10),
                         first_backoff=timedelta(seconds=2), max_backoff=timedelta(minutes=2),
                         stop=stop, say=print)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from typing import Protocol

from streamwarden.errors import UnreachableError

__all__ = ["wait_for_connections"]


class _Stop(Protocol):
    def wait(self, timeout: float | None = None) -> bool: ...


def wait_for_connections(
    check: Callable[[], None],
    *,
    limit: timedelta | None,
    first_backoff: timedelta,
    max_backoff: timedelta,
    stop: _Stop,
    say: Callable[[str], None],
    clock: Callable[[], float] = time.monotonic,
) -> bool:
    """Runs ``check`` until it passes (True) or ``stop`` is set while waiting (False). An
    :class:`UnreachableError` is retried after a back-off (``first_backoff`` doubled up to
    ``max_backoff``) while the next attempt starts within ``limit`` of the first; then, or
    with ``limit`` None, it is raised. ``say`` gets one line per failed attempt."""
    started = clock()
    backoff = first_backoff.total_seconds()
    attempt = 1
    while True:
        try:
            check()
            return True
        except UnreachableError as exc:
            waited = clock() - started
            if limit is None or waited + backoff > limit.total_seconds():
                raise
            say(
                f"connection check {attempt} failed after {waited:.0f} s of "
                f"{limit.total_seconds():.0f} s ([supervisor] wait_for_connections): {exc}; "
                f"next attempt in {backoff:.1f} s"
            )
        if stop.wait(backoff):
            return False
        backoff = min(backoff * 2, max_backoff.total_seconds())
        attempt += 1
