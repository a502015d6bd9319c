"""The reject-share guard: a run whose records mostly end as dead letters stops, loudly.

A field-name typo in ``[schema]`` (or time in seconds read as milliseconds) sends every record
to the dead letters; without this guard such a run exits 0 having written nothing useful. Once
a run has seen at least ``validation.dead_letter_share_min_records`` records, it stops with
exit code 1 when more than ``validation.max_dead_letter_share`` of them were dead letters, the
message naming the top reasons and the detail of a sample record of the top one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping

from streamwarden.errors import PipelineError
from streamwarden.validation.settings import ValidationConfig

__all__ = ["DeadLetterShareError", "RejectShareGuard"]


class DeadLetterShareError(PipelineError):
    """More of a run's records were dead letters than ``validation.max_dead_letter_share``
    allows. Not restarted: the same records and config give the same rejects."""

    restartable = False


class RejectShareGuard:
    """Counts a run's input records and dead letters, batch by batch, and raises
    :class:`DeadLetterShareError` once the share is over the limit; ``sample`` gives the detail
    of one dead letter of a reason (read back from the sink), for the message."""

    def __init__(
        self,
        name: str,
        validation: ValidationConfig,
        sample: Callable[[str], str | None] | None = None,
    ) -> None:
        self._name = name
        self._limit = validation.max_dead_letter_share
        self._minimum = validation.dead_letter_share_min_records
        self._sample = sample
        self.records = 0
        self.rejected: Counter[str] = Counter()

    def observe(self, records: int, dead_letters: Mapping[str, int]) -> None:
        """Adds one batch's input records and dead letters by reason; raises when over."""
        self.records += records
        self.rejected.update(dead_letters)
        if self._limit >= 1 or self.records < self._minimum:
            return
        rejected = sum(self.rejected.values())
        if rejected <= self._limit * self.records:
            return
        raise DeadLetterShareError(self.message(rejected))

    def message(self, rejected: int) -> str:
        top = self.rejected.most_common(3)
        reasons = ", ".join(f"{reason} {count}" for reason, count in top)
        sample = self._sample(top[0][0]) if self._sample is not None and top else None
        shown = f"; a {top[0][0]} record: {sample}" if sample else ""
        return (
            f"pipeline {self._name!r} stopped: {rejected} of its {self.records} records "
            f"({rejected / self.records:.0%}) were dead letters, over "
            f"validation.max_dead_letter_share {self._limit} (top reasons: {reasons}){shown}. "
            "Check [schema] against the records (`streamwarden doctor CONFIG` reads a sample of "
            "the input against it), or raise max_dead_letter_share if so many rejects are "
            "expected"
        )
