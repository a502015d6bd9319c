"""Deterministic sample pageview generator and brute-force reference counts.

Used to test the Flink benchmark scripts (``flink_sessions.py`` and
``flink_patterns.py``); it is not the project's data generator.

Generate a sample (``N`` events for ``U`` users, several ``.jsonl`` files)::

    python bench/make_sample_events.py generate --out DIR --events 20000 \
        --users 1000 --files 4 --seed 42

Compute the reference counts of a directory of ``.jsonl`` files::

    python bench/make_sample_events.py reference --input DIR --gap-minutes 30

Event schema (one JSON object per line)::

    {"user_id": "u000123", "ts": 1767225600000, "page_number": 1, "url": "/page/1"}

Shape of the generated data:

* every user has sessions of a few pages; gaps inside a session are mostly
  seconds to minutes, with a few gaps of exactly ``gap - 1 ms`` and exactly
  ``gap`` (30 min) to exercise the session boundary; gaps between sessions are
  30 min to several hours;
* a session usually starts at page 1 and mostly walks forward (1, 2, 3, ...)
  with random jumps, so the pattern queries find matches, including pairs
  exactly at and just inside the 30 minute ``WITHIN`` bound;
* timestamps of one user are strictly increasing (no ties), so that the order
  of a user's events, and thus pattern matching, is unambiguous;
* lines are written in *arrival* order, ``ts`` plus a random delay of up to
  ``--max-delay-seconds`` (default 180 s), so events are out of order by up to
  that much; files are consecutive chunks of the arrival order (like rotated
  logs), named ``events-00000.jsonl`` and so on.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
MINUTE_MS = 60_000
DEFAULT_GAP_MS = 30 * MINUTE_MS


class Event(NamedTuple):
    """One pageview."""

    user_id: str
    ts: int
    page_number: int
    url: str


# --------------------------------------------------------------------------
# generation
# --------------------------------------------------------------------------


def _next_page(rng: random.Random, page: int) -> int:
    """Page visited after ``page``: mostly the next one, sometimes a jump."""
    r = rng.random()
    if r < 0.6:
        return page + 1 if page < 10 else 1
    if r < 0.7:
        return 1
    return rng.randint(1, 10)


def _intra_session_gap(rng: random.Random, gap_ms: int) -> int:
    """Gap between two consecutive events of one session (< ``gap_ms``),
    occasionally exactly ``gap_ms`` (which, by definition, starts a new
    session)."""
    r = rng.random()
    if r < 0.01:
        return gap_ms  # boundary: starts a new session
    if r < 0.02:
        return gap_ms - 1  # boundary: still the same session
    if r < 0.10:
        return rng.randint(10 * MINUTE_MS, gap_ms - 1)
    return rng.randint(1_000, 5 * MINUTE_MS)


def generate_events(
    n_events: int,
    n_users: int,
    seed: int = 42,
    span_ms: int = 24 * 60 * MINUTE_MS,
    gap_ms: int = DEFAULT_GAP_MS,
) -> list[Event]:
    """Generate ``n_events`` pageviews spread over ``n_users`` users.

    Events are returned sorted by ``(ts, user_id)``. The result depends only on
    the arguments.
    """
    rng = random.Random(seed)
    # Distribute the events over the users (every user gets at least one).
    counts = [1] * n_users
    for _ in range(n_events - n_users):
        counts[rng.randrange(n_users)] += 1
    events: list[Event] = []
    width = max(6, len(str(n_users - 1)))
    for u, count in enumerate(counts):
        user_id = f"u{u:0{width}d}"
        ts = START_MS + rng.randrange(span_ms // 2)
        page = 1
        remaining_in_session = 0
        for _ in range(count):
            if remaining_in_session == 0:
                if events and events[-1].user_id == user_id:
                    ts += rng.randint(gap_ms, 6 * 60 * MINUTE_MS)
                remaining_in_session = rng.randint(1, 12)
                page = 1 if rng.random() < 0.8 else rng.randint(1, 10)
            else:
                ts += _intra_session_gap(rng, gap_ms)
                page = _next_page(rng, page)
            remaining_in_session -= 1
            events.append(Event(user_id, ts, page, f"/page/{page}"))
    events.sort(key=lambda e: (e.ts, e.user_id))
    return events


def write_events(
    events: Sequence[Event],
    out_dir: Path,
    n_files: int,
    max_delay_ms: int,
    seed: int = 42,
) -> list[Path]:
    """Write ``events`` as JSON lines in arrival order (``ts`` plus a random
    delay in ``[0, max_delay_ms]``), split into ``n_files`` consecutive chunks.
    """
    rng = random.Random(seed + 1)
    arrival = sorted(
        range(len(events)), key=lambda i: (events[i].ts + rng.randint(0, max_delay_ms), i)
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("events-*.jsonl"):
        old.unlink()
    per_file = -(-len(arrival) // n_files)
    paths: list[Path] = []
    for f in range(n_files):
        chunk = arrival[f * per_file : (f + 1) * per_file]
        if not chunk:
            break
        path = out_dir / f"events-{f:05d}.jsonl"
        with path.open("w", encoding="utf-8") as fh:
            for i in chunk:
                e = events[i]
                fh.write(
                    f'{{"user_id": "{e.user_id}", "ts": {e.ts}, '
                    f'"page_number": {e.page_number}, "url": "{e.url}"}}\n'
                )
        paths.append(path)
    return paths


def read_events(input_dir: Path) -> list[Event]:
    """Read every ``*.jsonl`` file of ``input_dir``."""
    events: list[Event] = []
    for path in sorted(input_dir.glob("*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    d = json.loads(line)
                    events.append(
                        Event(d["user_id"], int(d["ts"]), int(d["page_number"]), d["url"])
                    )
    return events


# --------------------------------------------------------------------------
# brute-force references
# --------------------------------------------------------------------------


def _by_user(events: Iterable[Event]) -> Iterator[list[Event]]:
    """Each user's events, sorted by timestamp (stable for equal ``ts``)."""
    groups: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        groups[e.user_id].append(e)
    for user_events in groups.values():
        user_events.sort(key=lambda e: e.ts)
        yield user_events


def reference_sessions(events: Iterable[Event], gap_ms: int) -> tuple[int, int]:
    """Return ``(sessions, events_in_sessions)``.

    A session is a maximal run of one user's events (sorted by ``ts``) in
    which every gap between consecutive events is strictly smaller than
    ``gap_ms``; a gap of exactly ``gap_ms`` starts a new session (Flink's
    session window ``[first ts, last ts + gap)`` is end-exclusive).
    """
    sessions = 0
    n_events = 0
    for user_events in _by_user(events):
        prev: int | None = None
        for e in user_events:
            if prev is None or e.ts - prev >= gap_ms:
                sessions += 1
            prev = e.ts
            n_events += 1
    return sessions, n_events


def reference_p1_then_p2(events: Iterable[Event], within_ms: int) -> int:
    """Number of ``p1_then_p2`` matches.

    Per user, in ``ts`` order: a match is a page-1 event followed (not
    necessarily directly) by a page-2 event less than ``within_ms`` later;
    after a match, the search restarts after its page-2 event (``AFTER MATCH
    SKIP PAST LAST ROW``). Greedily, it is enough to remember the latest
    page-1 event since the last match.
    """
    return count_p1_then_p2_in_time_order(sorted(events, key=lambda e: e.ts), within_ms)


def count_p1_then_p2_in_time_order(
    events: Iterable[tuple[str, int, int]] | Iterable[Event], within_ms: int
) -> int:
    """``reference_p1_then_p2`` over events already in ``ts`` order (``(user_id, ts,
    page_number, ...)``), streaming: it keeps one timestamp per user, so it counts the
    scale benchmarks' tens of millions of events (their files are in time order)."""
    matches = 0
    last_p1: dict[str, int | None] = {}
    for user_id, ts, page_number, *_ in events:
        if page_number == 1:
            last_p1[user_id] = ts
        elif page_number == 2:
            start = last_p1.get(user_id)
            if start is not None and ts - start < within_ms:
                matches += 1
                last_p1[user_id] = None
    return matches


def reference_three_stage(events: Iterable[Event], within_ms: int) -> int:
    """Number of ``three_stage`` matches.

    Per user, in ``ts`` order: a page-1 event A, then (later) at least one
    event B with page 2..5, then (later) a page-6 event C, with
    ``C.ts - A.ts < within_ms``; other events may lie in between; after a match
    the search restarts after C (``AFTER MATCH SKIP PAST LAST ROW``).
    Greedily, at each page-6 event it is enough to know the latest page-1
    event (since the last match) that is already followed by a page 2..5 event.
    """
    matches = 0
    for user_events in _by_user(events):
        last_a: int | None = None  # latest page-1 ts since the last match
        last_ab: int | None = None  # latest page-1 ts already followed by a B
        for e in user_events:
            p = e.page_number
            if p == 1:
                last_a = e.ts
            elif 2 <= p <= 5:
                if last_a is not None:
                    last_ab = last_a
            elif p == 6 and last_ab is not None and e.ts - last_ab < within_ms:
                matches += 1
                last_a = last_ab = None
    return matches


# --------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate", help="write a sample to a directory")
    gen.add_argument("--out", type=Path, required=True, help="output directory")
    gen.add_argument("--events", type=int, default=20_000)
    gen.add_argument("--users", type=int, default=1_000)
    gen.add_argument("--files", type=int, default=4)
    gen.add_argument("--seed", type=int, default=42)
    gen.add_argument("--max-delay-seconds", type=int, default=180)
    gen.add_argument(
        "--reference", action="store_true", help="also print the reference counts (30 min)"
    )
    ref = sub.add_parser("reference", help="print the reference counts of a directory")
    ref.add_argument("--input", type=Path, required=True)
    ref.add_argument("--gap-minutes", type=float, default=30.0)
    args = parser.parse_args(argv)
    if args.command == "generate" and not 0 < args.users <= args.events:
        parser.error("need 0 < --users <= --events")
    return args


def _references(events: Sequence[Event], gap_ms: int) -> dict[str, int]:
    sessions, in_sessions = reference_sessions(events, gap_ms)
    return {
        "input_events": len(events),
        "events": in_sessions,
        "sessions": sessions,
        "p1_then_p2": reference_p1_then_p2(events, gap_ms),
        "three_stage": reference_three_stage(events, gap_ms),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    args = _parse_args(argv)
    if args.command == "generate":
        events = generate_events(args.events, args.users, seed=args.seed)
        paths = write_events(
            events, args.out, args.files, args.max_delay_seconds * 1000, seed=args.seed
        )
        print(f"wrote {len(events)} events to {len(paths)} files in {args.out}", file=sys.stderr)
        if args.reference:
            print(json.dumps(_references(events, DEFAULT_GAP_MS)))
    else:
        gap_ms = round(args.gap_minutes * MINUTE_MS)
        print(json.dumps(_references(read_events(args.input), gap_ms)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
