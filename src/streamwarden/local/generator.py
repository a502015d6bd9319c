"""A deterministic pageview traffic generator for the demo, the tests and the benchmarks.

Users alternate sessions (a geometric number of pages, ``think_time`` apart on average) with
idle periods longer than the session gap, so the true sessions are known by construction. Some
records arrive out of order, late, too late, or malformed, in chosen fractions. With
``bridge_fraction``, some idle periods shorter than two gaps get one pageview in their middle
that arrives ``bridge_delay`` late: when it comes, the sessions on both sides have been written,
and it bridges them into one (a merge, as fault injection and the operators' tests need); with a
``late_delay`` of session size (tens of minutes) late events revise sessions already written.
Optionally, ``scanners`` actors (ids ``actor-NNN``) probe hosts (url ``/scan/host-NN``) at
random times alongside the users, for the pattern demo. The same spec and seed always give
byte-identical files.

The records fit ``examples/pageviews.toml``'s schema: ``user_id`` the key, ``ts`` epoch
milliseconds (a BIGINT; ``ts_format = "iso"`` writes RFC 3339 text instead, for a TIMESTAMP
field), ``page_number`` from 1 to 250 (the example allows 1 to 300), ``url``. Each hostile record
(``malformed_fraction``) has exactly one fault, whose reason the summary records.
"""

from __future__ import annotations

import heapq
import json
import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from streamwarden.errors import UsageError
from streamwarden.local.examples.landing import (
    EPOCH,
    Hostile,
    Line,
    iso_ms,
    split_evenly,
    write_landing,
)
from streamwarden.validation.reasons import Reason

__all__ = ["TrafficSpec", "TrafficSummary", "generate_traffic"]

#: Hostile record shapes, each with the one reason validation must give it under
#: ``examples/pageviews.toml`` ({s} is the event time in seconds: read as milliseconds, it is in
#: January 1970, before ``validation.earliest_event_time``).
_HOSTILE: tuple[tuple[str, Reason], ...] = (
    ('{"user_id": "{u}", "ts": {ts}, "page_number": 1, "url": "/p/1"', Reason.MALFORMED_JSON),
    ('{"ts": {ts}, "page_number": 1, "url": "/p/1"}', Reason.MISSING_FIELD),
    ('{"user_id": "{u}", "ts": {ts}, "page_number": "first", "url": "/p/1"}', Reason.WRONG_TYPE),
    ('{"user_id": "{u}", "ts": {s}, "page_number": 1, "url": "/p/1"}', Reason.INVALID_TIMESTAMP),
    ('{"user_id": "{u}", "ts": {ts}, "page_number": 999, "url": "/p/999"}', Reason.OUT_OF_RANGE),
    ('{"user_id": "", "ts": {ts}, "page_number": 1, "url": "/p/1"}', Reason.INVALID_KEY),
)

#: One generated event: (ts_ms, user_id, page_number, url).
Event = tuple[int, str, int, str]


@dataclass(frozen=True)
class TrafficSpec:
    """What traffic to generate. Times are simulated event time, not wall-clock time."""

    users: int = 1000
    events: int = 20_000
    rate_per_second: float = 5.0
    pages_per_session: float = 8.0
    think_time: timedelta = timedelta(minutes=1)
    gap: timedelta = timedelta(minutes=30)
    start: datetime = datetime(2026, 1, 1, tzinfo=UTC)
    disorder: timedelta = timedelta(seconds=20)
    late_fraction: float = 0.0
    late_delay: tuple[timedelta, timedelta] = (timedelta(minutes=2), timedelta(minutes=8))
    too_late_fraction: float = 0.0
    too_late_delay: timedelta = timedelta(hours=6)
    bridge_fraction: float = 0.0
    bridge_delay: tuple[timedelta, timedelta] = (timedelta(minutes=40), timedelta(minutes=60))
    malformed_fraction: float = 0.0
    sessions_per_user: int | None = None
    #: "millis" (epoch milliseconds, a BIGINT field) or "iso" (RFC 3339 text, a TIMESTAMP field).
    ts_format: str = "millis"
    events_per_file: int = 5000
    #: Split the records into this many files, as evenly as possible (one per record if there
    #: are fewer records), instead of ``events_per_file`` a file. The demos use it: a size per
    #: file computed from ``events`` gives an extra file for the remainder, and more when the
    #: actors' scans add records.
    files: int | None = None
    seed: int = 7
    scanners: int = 0
    scan_hosts: int = 12
    scan_every: timedelta = timedelta(minutes=20)

    def __post_init__(self) -> None:
        if self.users < 1 or self.events < 1 or self.events_per_file < 1:
            raise UsageError("users, events and events_per_file must be >= 1")
        if self.files is not None and self.files < 1:
            raise UsageError(f"files must be >= 1, got {self.files}")
        if self.scanners < 0 or self.scan_hosts < 1 or self.scan_every <= timedelta(0):
            raise UsageError("scanners must be >= 0, scan_hosts >= 1 and scan_every > 0")
        if self.think_time * 3 >= self.gap:
            raise UsageError(
                f"think_time {self.think_time} must be well under gap {self.gap} (a third at "
                "most), or generated sessions would split at random"
            )
        if self.ts_format not in ("iso", "millis"):
            raise UsageError(f"ts_format must be 'millis' or 'iso', got {self.ts_format!r}")
        if not timedelta(0) <= self.bridge_delay[0] <= self.bridge_delay[1]:
            raise UsageError(f"bridge_delay must be a range (low, high), got {self.bridge_delay}")
        for name in ("late_fraction", "too_late_fraction", "malformed_fraction", "bridge_fraction"):
            if not 0.0 <= getattr(self, name) < 0.5:
                raise UsageError(f"{name} must be in [0, 0.5), got {getattr(self, name)!r}")

    @property
    def mean_idle(self) -> timedelta:
        """Idle time between one user's sessions that yields ``rate_per_second`` overall."""
        per_user_cycle = self.users * self.pages_per_session / self.rate_per_second
        idle = timedelta(seconds=per_user_cycle) - self.think_time * self.pages_per_session
        if idle <= self.gap:
            raise UsageError(
                f"rate_per_second {self.rate_per_second} is too high for {self.users} users: "
                f"each would have to start a session within the gap; lower the rate or add users"
            )
        return idle


@dataclass
class TrafficSummary:
    """What was generated: the numbers the accounting checks compare against."""

    records: int = 0
    events: int = 0
    scans: int = 0
    #: Hostile records by the reason each must get.
    malformed: Counter[str] = field(default_factory=Counter)
    #: Each hostile record, where it was written and its reason.
    hostile: list[Hostile] = field(default_factory=list)
    late: int = 0
    too_late: int = 0
    bridges: int = 0
    distinct_users: int = 0
    files: list[Path] = field(default_factory=list)
    first_event: datetime | None = None
    last_event: datetime | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "records": self.records,
            "events": self.events,
            "scans": self.scans,
            "malformed": dict(self.malformed),
            "late": self.late,
            "too_late": self.too_late,
            "bridges": self.bridges,
            "distinct_users": self.distinct_users,
            "files": len(self.files),
            "first_event": self.first_event.isoformat() if self.first_event else None,
            "last_event": self.last_event.isoformat() if self.last_event else None,
        }


def generate_traffic(
    spec: TrafficSpec, landing: Path, *, file_prefix: str = "events", mtime_after: float = 0.0
) -> TrafficSummary:
    """Writes ``spec.events`` records into ``landing`` as JSON-lines files.

    Files appear atomically (written under a dot-name, then renamed) with strictly increasing
    modification times, later than any file in ``landing`` and than ``mtime_after``, so Spark's
    file source takes them in order.
    """
    rng = random.Random(spec.seed)
    events = _simulate(spec, rng)
    if spec.scanners:
        events = sorted(events + _scans(spec, events[0][0], events[-1][0]))
    arrivals = _arrivals(spec, rng, events)
    if spec.bridge_fraction:
        arrivals = sorted(arrivals + _bridges(spec, events), key=lambda a: a[0])
    summary = TrafficSummary(distinct_users=len({e[1] for e in events}))
    summary.first_event = EPOCH + timedelta(milliseconds=min(e[0] for e in events))
    summary.last_event = EPOCH + timedelta(milliseconds=max(e[0] for e in events))
    lines: list[Line] = []
    for _, kind, (ts, user, page, url) in arrivals:
        if rng.random() < spec.malformed_fraction:
            template, reason = _HOSTILE[rng.randrange(len(_HOSTILE))]
            text = template.replace("{u}", user).replace("{ts}", str(ts))
            lines.append(Line(text.replace("{s}", str(ts // 1000)).encode(), reason))
            summary.malformed[reason.value] += 1
            continue
        lines.append(Line(_event_line(spec, ts, user, page, url).encode()))
        summary.events += 1
        summary.scans += url.startswith("/scan/")
        summary.late += kind in ("late", "bridge")
        summary.bridges += kind == "bridge"
        summary.too_late += kind == "too_late"
    summary.records = len(lines)
    files = [lines[start:end] for start, end in _file_bounds(len(lines), spec)]
    summary.files, summary.hostile = write_landing(
        landing, files, prefix=file_prefix, mtime_after=mtime_after
    )
    return summary


def _file_bounds(records: int, spec: TrafficSpec) -> list[tuple[int, int]]:
    """(first, end) line of each file: ``spec.files`` files as even as can be, or else
    ``spec.events_per_file`` lines a file (the last one holds the rest)."""
    if spec.files is None:
        size = spec.events_per_file
        return [(i, min(i + size, records)) for i in range(0, records, size)]
    return split_evenly(records, spec.files)


def _simulate(spec: TrafficSpec, rng: random.Random) -> list[Event]:
    """(ts_ms, user_id, page_number, url) for every pageview, in event-time order."""
    start_ms = int((spec.start - EPOCH).total_seconds() * 1000)
    gap_ms = int(spec.gap.total_seconds() * 1000)
    think_ms = spec.think_time.total_seconds() * 1000
    extra_idle_ms = (spec.mean_idle - spec.gap).total_seconds() * 1000
    p_end = 1.0 / spec.pages_per_session
    # heap of (next_ts, slot, user_id, page, sessions_done)
    heap = [
        (start_ms + int(rng.random() * extra_idle_ms), slot, f"u{slot:07d}", 1, 0)
        for slot in range(spec.users)
    ]
    heapq.heapify(heap)
    next_user = spec.users
    out: list[Event] = []
    while len(out) < spec.events:
        ts, slot, user, page, done = heapq.heappop(heap)
        out.append((ts, user, page, f"/p/{page}"))
        if page < 250 and rng.random() >= p_end:
            step = min(int(rng.expovariate(1.0 / think_ms)) + 1, gap_ms // 3)
            heapq.heappush(heap, (ts + step, slot, user, page + 1, done))
            continue
        done += 1
        if spec.sessions_per_user is not None and done >= spec.sessions_per_user:
            user, done = f"u{next_user:07d}", 0
            next_user += 1
        idle = gap_ms + 1000 + int(rng.expovariate(1.0 / extra_idle_ms))
        heapq.heappush(heap, (ts + idle, slot, user, 1, done))
    return out


def _bridges(spec: TrafficSpec, events: list[Event]) -> list[tuple[float, str, Event]]:
    """A late pageview in the middle of some idle periods under two gaps: each user's event
    times are split into sessions by the gap, and a ``bridge_fraction`` of the idle periods
    that one event can span get one, arriving ``bridge_delay`` after its event time. A
    separate random stream, so that the other records are the same with or without bridges."""
    rng = random.Random(spec.seed * 7_919 + 3)
    gap_ms = spec.gap.total_seconds() * 1000
    lo, hi = (d.total_seconds() * 1000 for d in spec.bridge_delay)
    last: dict[str, int] = {}
    out: list[tuple[float, str, Event]] = []
    for ts, user, _, url in events:
        before = last.get(user)
        last[user] = ts
        if url.startswith("/scan/") or before is None or not gap_ms < ts - before < 2 * gap_ms:
            continue
        if rng.random() < spec.bridge_fraction:
            middle = before + (ts - before) // 2
            out.append((middle + rng.uniform(lo, hi), "bridge", (middle, user, 1, "/p/bridge")))
    return out


def _scans(spec: TrafficSpec, first_ms: int, last_ms: int) -> list[Event]:
    """Each actor scans a random host every ``scan_every`` on average (exponential gaps),
    from the first pageview to the last. A separate random stream, so that the pageviews are
    the same with or without scanners."""
    rng = random.Random(spec.seed * 1_000_003 + 17)
    mean_ms = spec.scan_every.total_seconds() * 1000
    out: list[Event] = []
    for actor in range(spec.scanners):
        ts = first_ms + int(rng.random() * mean_ms)
        while ts <= last_ms:
            host = rng.randrange(spec.scan_hosts)
            out.append((ts, f"actor-{actor:03d}", 1, f"/scan/host-{host:02d}"))
            ts += int(rng.expovariate(1.0 / mean_ms)) + 1000
    return out


def _arrivals(
    spec: TrafficSpec, rng: random.Random, events: list[Event]
) -> list[tuple[float, str, Event]]:
    """Events in arrival order: mostly by time with some disorder, a few late or too late."""
    disorder_ms = spec.disorder.total_seconds() * 1000
    late_lo, late_hi = (d.total_seconds() * 1000 for d in spec.late_delay)
    too_late_ms = spec.too_late_delay.total_seconds() * 1000
    horizon = events[-1][0] - 2 * too_late_ms  # a too-late event must arrive before the end
    arrivals = []
    for event in events:
        roll = rng.random()
        if roll < spec.too_late_fraction:
            if event[0] < horizon:
                arrivals.append((event[0] + too_late_ms, "too_late", event))
            else:
                arrivals.append((float(event[0]), "on_time", event))
        elif roll < spec.too_late_fraction + spec.late_fraction:
            arrivals.append((event[0] + rng.uniform(late_lo, late_hi), "late", event))
        else:
            arrivals.append((event[0] + rng.random() * disorder_ms, "on_time", event))
    arrivals.sort(key=lambda a: a[0])
    return arrivals


def _event_line(spec: TrafficSpec, ts: int, user: str, page: int, url: str) -> str:
    ts_text = json.dumps(iso_ms(ts)) if spec.ts_format == "iso" else str(ts)
    return f'{{"user_id": "{user}", "ts": {ts_text}, "page_number": {page}, "url": "{url}"}}'
