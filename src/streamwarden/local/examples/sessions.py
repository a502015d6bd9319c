"""The true sessions of generated events: what a sessions pipeline's final sessions must be."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from itertools import groupby

__all__ = ["TrueSession", "gap_sessions"]


@dataclass(frozen=True)
class TrueSession:
    """One key's session: its events' times in epoch milliseconds."""

    key: str
    start_ms: int
    end_ms: int
    events: int


def gap_sessions(events: Iterable[tuple[str, int]], gap: timedelta) -> list[TrueSession]:
    """Sessions of ``(key, event time ms)`` pairs: per key, a maximal run of events whose
    consecutive times are less than ``gap`` apart (a gap of exactly ``gap`` starts a new
    session), ordered by key and start.

    >>> gap_sessions([("a", 0), ("a", 60_000), ("a", 3_600_000)], timedelta(minutes=30))[0]
    TrueSession(key='a', start_ms=0, end_ms=60000, events=2)
    """
    gap_ms = gap // timedelta(milliseconds=1)
    out: list[TrueSession] = []
    for key, group in groupby(sorted(events), key=lambda e: e[0]):
        times = [t for _, t in group]
        first = 0
        for i in range(1, len(times) + 1):
            if i == len(times) or times[i] - times[i - 1] >= gap_ms:
                out.append(TrueSession(key, times[first], times[i - 1], i - first))
                first = i
    return out
