"""What a run did: the batches it ran (the newest, in memory), the failures it restarted after
and the signal that stopped it.

A continuous run lasts months: a result that kept every batch's progress (about 14 KB of Python
objects each) would hold gigabytes after a few weeks of one-second triggers. So it keeps the
newest :data:`~streamwarden.monitoring.monitor.RECENT_BATCHES` batches, like the monitor, and
counts the rest; the progress log on disk keeps far more (rotated at
``progress_log_max_size``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from streamwarden.monitoring.monitor import keep_newest
from streamwarden.monitoring.summary import epoch_ms

if TYPE_CHECKING:
    from streamwarden.monitoring.failures import QueryFailure
    from streamwarden.operators.base import BatchStats

__all__ = ["RunResult", "max_event_ms"]


@dataclass
class RunResult:
    """What a run did, batch by batch (the newest :data:`RECENT_BATCHES`); the failures the
    supervisor restarted after, and the signal that stopped the run (``"SIGTERM"``), if one
    did."""

    #: The progress of the newest batches that ran, oldest first.
    progress: list[dict[str, Any]] = field(default_factory=list)
    #: The operator's figures of the same batches.
    batches: list[BatchStats] = field(default_factory=list)
    failures: list[QueryFailure] = field(default_factory=list)
    stopped: str | None = None
    #: Input the source moved aside instead of reading (bad landing files), one line each.
    set_aside: list[str] = field(default_factory=list)
    #: How many batches ran, all of them (``progress`` holds the newest).
    batch_count: int = 0
    #: The largest event time any batch of the run saw, in epoch milliseconds.
    max_event_ms: int | None = None

    def add(self, progress: dict[str, Any], stats: BatchStats | None) -> None:
        """Records a batch that ran."""
        keep_newest(self.progress, progress)
        if stats is not None:
            keep_newest(self.batches, stats)
        self.batch_count += 1
        seen = max_event_ms(progress)
        if seen is not None and (self.max_event_ms is None or seen > self.max_event_ms):
            self.max_event_ms = seen

    def then(self, later: RunResult) -> None:
        """Appends a later run of the same attempt (the drain after a run)."""
        for progress in later.progress:
            keep_newest(self.progress, progress)
        for stats in later.batches:
            keep_newest(self.batches, stats)
        self.set_aside += later.set_aside
        self.stopped = later.stopped
        self.batch_count += later.batch_count
        if later.max_event_ms is not None:
            self.max_event_ms = max(later.max_event_ms, self.max_event_ms or later.max_event_ms)


def max_event_ms(progress: dict[str, Any]) -> int | None:
    """The largest event time a batch saw, in epoch milliseconds."""
    return epoch_ms(progress.get("eventTime", {}).get("max"))
