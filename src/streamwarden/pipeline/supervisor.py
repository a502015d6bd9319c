"""The supervisor's rules: which failures are restarted, how long to wait, when to give up.

Pure and clock-free (times are passed in, randomness comes from a given ``random.Random``), so
that the rules are tested without Spark; :class:`~streamwarden.pipeline.runner.Pipeline` applies
them around its query (lesson L16: restarts that run out leave the job down, so the budget is
per time window and a give-up says why).

- **Restarted**: a failure a later attempt can get past: a batch that failed (a sink or a
  broker down, a full disk, an executor lost, a file that could not be read this time).
  Spark restarts from the checkpoint: the failed batch is replayed exactly, its sinks skip
  what they already wrote, so nothing is lost or doubled.
- **Not restarted** (``StreamwardenError.restartable`` is false): config and usage errors,
  a checkpoint of another pipeline or in use by another run, a missing engine, a query Spark
  refuses to start, records gone from the source for good (Kafka retention, a deleted
  landing file, a deleted source topic), a sink's topic deleted. The same config, checkpoint
  and code fail the same way again, so the error is reported at once, with what to do. So is
  anything that is not a streamwarden error (a bug).
- **Backoff**: ``initial_backoff * 2**(n-1)`` for the n-th consecutive failure, capped at
  ``max_backoff``, less a random part of up to ``jitter`` of it; a completed batch resets n.
- **Budget**: at most ``max_restarts`` restarts within any ``window``; the failure that would
  exceed it ends the run (exit 1) with a report of every failure in the window.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass

from streamwarden.config.model import SupervisorConfig
from streamwarden.errors import StreamwardenError
from streamwarden.monitoring.failures import QueryFailure

__all__ = ["RestartDecision", "RestartPolicy", "is_restartable", "why_not_restarted"]


def is_restartable(exc: BaseException) -> bool:
    """Whether a restart from the checkpoint can get past ``exc`` (see the module's rules)."""
    return isinstance(exc, StreamwardenError) and exc.restartable


def why_not_restarted(exc: BaseException) -> str:
    """The reason, for the user, that ``exc`` ends the run without a restart."""
    if not isinstance(exc, StreamwardenError):
        return "an unexpected error (a bug) is not restarted"
    return (
        f"a {type(exc).__name__} is not restarted: the same config and checkpoint would fail "
        "the same way"
    )


@dataclass(frozen=True)
class RestartDecision:
    """Restart after ``wait_s`` seconds (the ``restart``-th in the window), or give up."""

    restart: int | None
    wait_s: float

    @property
    def give_up(self) -> bool:
        return self.restart is None


class RestartPolicy:
    """Decides, failure by failure, whether and when to restart (see the module's rules)."""

    def __init__(self, config: SupervisorConfig, rng: random.Random | None = None) -> None:
        self.config = config
        self._rng = rng or random.Random()
        self._restarts_ms: deque[int] = deque()
        self._consecutive = 0

    def decide(self, now_ms: int) -> RestartDecision:
        """Called once per restartable failure, at wall-clock ``now_ms``."""
        if not self.config.enabled:
            return RestartDecision(None, 0.0)
        window_ms = self.config.window.total_seconds() * 1000
        while self._restarts_ms and self._restarts_ms[0] <= now_ms - window_ms:
            self._restarts_ms.popleft()
        if len(self._restarts_ms) >= self.config.max_restarts:
            return RestartDecision(None, 0.0)
        self._restarts_ms.append(now_ms)
        self._consecutive += 1
        return RestartDecision(len(self._restarts_ms), self.backoff_s(self._consecutive))

    def backoff_s(self, failures: int) -> float:
        """The wait before the restart after ``failures`` consecutive failures."""
        initial = self.config.initial_backoff.total_seconds()
        ceiling = self.config.max_backoff.total_seconds()
        full = min(ceiling, initial * float(2 ** min(failures - 1, 62)))
        return full * (1 - self.config.jitter * self._rng.random())

    def progressed(self) -> None:
        """A batch completed: the next failure waits the initial backoff again (the budget
        window still counts the restarts it holds)."""
        self._consecutive = 0

    def report(self, failures: list[QueryFailure], now_ms: int) -> str:
        """The final report: the budget that ran out and each failure within the window."""
        window_ms = self.config.window.total_seconds() * 1000
        recent = [f for f in failures if f.at_ms > now_ms - window_ms] or failures[-1:]
        lines = [
            f"gave up after {self.config.max_restarts} restart(s) within "
            f"{self.config.window} ([supervisor] max_restarts, window); the failures:"
        ]
        lines += [f"  {n}. {f.describe()}" for n, f in enumerate(recent, start=1)]
        return "\n".join(lines)
