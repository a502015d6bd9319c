"""Pageviews over days with some events held back and delivered hours to days late: the input
of the history store's soak test and benchmark (lesson L8).

Event time moves in steps (``step``, 2 hours by default); each step is one landing file, so a
pipeline taking one file per micro-batch sees one step per batch. In each step every user has a
session with probability ``session_rate``: ``pages`` events a few minutes apart. Each event is
held back with probability ``late_rate`` and lands in a later step's file, between one step and
``max_delay`` later (events held past the last step land in the last file). Every event thus
arrives at least one step late or on time: a late one is always beyond an ``allowed_lateness``
shorter than a step.

Seeded, so a run is repeatable; :attr:`LateTraffic.events` is every event (user, ts_ms) for an
offline check of the sessions.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

__all__ = ["LateTraffic", "write_late_traffic"]

T0_MS = 1767225600000  # 2026-01-01T00:00:00Z


@dataclass
class LateTraffic:
    """What :func:`write_late_traffic` wrote: the files, the events, and how many were late."""

    files: int = 0
    records: int = 0
    late: int = 0
    max_delay_ms: int = 0
    events: list[tuple[str, int]] = field(default_factory=list)


def write_late_traffic(
    landing: Path,
    *,
    users: int,
    days: int,
    step: timedelta = timedelta(hours=2),
    session_rate: float = 0.3,
    pages: int = 4,
    late_rate: float = 0.05,
    max_delay: timedelta = timedelta(days=2),
    seed: int = 18,
) -> LateTraffic:
    """Writes one JSON-lines file per step into ``landing``, in name and modification-time
    order, and returns what it wrote."""
    rng = random.Random(seed)
    step_ms = int(step.total_seconds() * 1000)
    steps = int(timedelta(days=days) / step)
    max_delay_steps = max(1, int(max_delay / step))
    out: list[list[str]] = [[] for _ in range(steps)]
    traffic = LateTraffic(files=steps)
    for s in range(steps):
        for u in range(users):
            if rng.random() >= session_rate:
                continue
            ts = T0_MS + s * step_ms + rng.randrange(0, step_ms // 2)
            for page in range(1, pages + 1):
                record = json.dumps(
                    {"user_id": f"u{u:05d}", "ts": ts, "page_number": page, "url": f"/p/{page}"}
                )
                traffic.events.append((f"u{u:05d}", ts))
                delay = rng.randint(1, max_delay_steps) if rng.random() < late_rate else 0
                arrives = min(steps - 1, s + delay)
                traffic.late += arrives > s
                traffic.max_delay_ms = max(traffic.max_delay_ms, (arrives - s) * step_ms)
                out[arrives].append(record)
                ts += rng.randrange(60_000, 5 * 60_000)
    landing.mkdir(parents=True, exist_ok=True)
    for s, lines in enumerate(out):
        path = landing / f"step-{s:05d}.jsonl"
        tmp = landing / f".{path.name}.tmp"
        tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        os.utime(tmp, (1_700_000_000 + s, 1_700_000_000 + s))
        tmp.rename(path)
        traffic.records += len(lines)
    return traffic
