"""Steady traffic that keeps a chosen number of sessions open, for the scale benchmarks (issue 21).

A live stream that runs for months holds a roughly constant number of open sessions and feeds
each micro-batch a roughly constant number of events. This generator produces exactly that, in
landing files whose name order is their time order (one file per micro-batch):

* ``slots`` (N) key slots. Event ``i`` of the stream goes to slot ``i mod N`` at event time
  ``start + i * revisit / N``: every slot is touched exactly once per ``revisit`` of event time,
  in round robin, so with ``revisit`` shorter than the session gap no active key's session ever
  closes, and the stream's event time advances by ``revisit * B / N`` per batch of B events.
* **Churn.** A slot's key changes every ``lifetime`` touches (``u<slot>-<generation>``), the
  slots staggered so that ``1 / lifetime`` of them change in each revisit period: the old key
  falls silent and its session closes by timer once the watermark passes its last event + gap,
  the new key opens a session. So timers fire and state rows are removed in the steady phase,
  at a stated rate, as in a real stream. Exactly N keys are active in any revisit period; the
  state also holds the retired keys whose session has not closed yet (about
  ``N / lifetime * (gap + delay) / revisit`` of them).
* **Warm-up.** The first ``warmup_revisits * N`` events (every key touched) come in large files;
  the steady phase follows in files of ``batch_events`` (B) events each.
* ``page_number`` alternates 1, 2 per touch of a key (a pattern "page 1 then page 2 within the
  revisit" then always has a partial match open for about half the keys).

Pure Python, no Spark: ``tests/bench/test_scale_traffic.py`` checks these invariants.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

__all__ = ["Event", "SteadyTraffic", "cycle_batches", "settling_warmup", "write_files"]

START = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Event:
    user_id: str
    ts_ms: int
    page_number: int

    def line(self) -> str:
        return (
            f'{{"user_id":"{self.user_id}","ts":{self.ts_ms},'
            f'"page_number":{self.page_number},"url":"/page/{self.page_number}"}}'
        )


@dataclass(frozen=True)
class SteadyTraffic:
    """What to generate; see the module docstring."""

    slots: int
    batch_events: int
    steady_batches: int
    revisit: timedelta = timedelta(minutes=15)
    lifetime: int = 50
    warmup_revisits: int = 1
    warmup_file_events: int = 200_000
    start_ms: int = int(START.timestamp() * 1000)

    def __post_init__(self) -> None:
        if min(self.slots, self.batch_events, self.lifetime, self.warmup_file_events) < 1:
            raise ValueError("slots, batch_events, lifetime and warmup_file_events must be >= 1")
        if self.steady_batches < 0 or self.warmup_revisits < 1:
            raise ValueError("steady_batches must be >= 0 and warmup_revisits >= 1")

    @property
    def revisit_ms(self) -> int:
        return int(self.revisit.total_seconds() * 1000)

    @property
    def warmup_events(self) -> int:
        return self.warmup_revisits * self.slots

    @property
    def total_events(self) -> int:
        return self.warmup_events + self.steady_batches * self.batch_events

    @property
    def churn_per_revisit(self) -> float:
        """Fraction of the N keys replaced by new keys in each revisit period."""
        return 1 / self.lifetime

    def event(self, i: int) -> Event:
        """Event ``i`` of the stream (0-based)."""
        slot, touch = i % self.slots, i // self.slots
        generation = (touch + slot % self.lifetime) // self.lifetime
        ts = self.start_ms + i * self.revisit_ms // self.slots
        return Event(f"u{slot:07d}-{generation}", ts, 1 + touch % 2)

    def events(self, first: int, count: int) -> Iterator[Event]:
        return (self.event(i) for i in range(first, first + count))

    def files(self) -> Iterator[tuple[str, int, int]]:
        """(file name, first event, event count) of every file, in time order."""
        n = 0
        for first in range(0, self.warmup_events, self.warmup_file_events):
            count = min(self.warmup_file_events, self.warmup_events - first)
            yield f"events-{n:06d}-warmup.jsonl", first, count
            n += 1
        for b in range(self.steady_batches):
            yield (
                f"events-{n:06d}-steady.jsonl",
                self.warmup_events + b * self.batch_events,
                (self.batch_events),
            )
            n += 1

    @property
    def warmup_files(self) -> int:
        return -(-self.warmup_events // self.warmup_file_events)


def cycle_batches(
    slots: int, batch_events: int, cycle: timedelta, revisit: timedelta = timedelta(minutes=15)
) -> int:
    """How many batches of ``batch_events`` span ``cycle`` of event time (at least one)."""
    return max(1, math.ceil(cycle / (revisit * batch_events / slots)))


def settling_warmup(
    slots: int,
    batch_events: int,
    steady_batches: int,
    deadline: timedelta,
    revisit: timedelta = timedelta(minutes=15),
    measured: int | None = None,
) -> int:
    """The fewest warm-up revisits after which the measured last batches are settled: the last
    ``measured`` of the steady batches (default: the last quarter).

    Settled: every key's first deadline (its first touch + ``deadline``, the session gap plus
    the allowed lateness) has passed, so deadline timers fire and retired keys' sessions close
    at their steady rates. Before that a run measures a stream that has never closed a session,
    which is cheaper than the months that follow: at 1M keys and 5k events per batch, 40 steady
    batches cover only 3 minutes of event time.
    """
    settled = revisit + deadline  # the last first touch, then its deadline
    measured = measured or max(1, steady_batches // 4)
    tail_starts = (steady_batches - measured) * batch_events / slots * revisit
    return max(1, -(-(settled - tail_starts) // revisit))


def write_files(traffic: SteadyTraffic, folder: Path) -> Path:
    """Writes the traffic's files into ``folder`` once (a ``_COMPLETE`` marker holds the spec);
    returns the folder. A folder already complete for the same spec is reused."""
    marker = folder / "_COMPLETE"
    spec = json.dumps({k: str(v) for k, v in asdict(traffic).items()}, sort_keys=True)
    if marker.exists() and marker.read_text() == spec:
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("events-*.jsonl"):
        stale.unlink()
    marker.unlink(missing_ok=True)
    # Spark's file source takes files in modification-time order: one second apart, in name order.
    base = time.time() - 10 * (traffic.warmup_files + traffic.steady_batches)
    for n, (name, first, count) in enumerate(traffic.files()):
        path = folder / name
        with path.open("w") as out:
            out.writelines(e.line() + "\n" for e in traffic.events(first, count))
        os.utime(path, (base + n, base + n))
    marker.write_text(spec)
    return folder
