"""``streamwarden generate LANDING``: generated pageview traffic for trying a pipeline.

The demo generates its own traffic; this command writes the same kind into any landing folder,
so that ``streamwarden run`` on a config of your own (or ``examples/sessions.toml``) has
something to read. Each call writes files of a new run number, so nothing already there is
overwritten and Spark's file source, which reads a file name once, takes every record; and its
event time starts a day after the last event of the call before, so a pipeline that has read
those does not find the new ones too late.
"""

from __future__ import annotations

import argparse
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from streamwarden.cli.arguments import at_least, fraction

__all__ = ["register"]

_RUN = re.compile(r"^gen-(\d+)-\d+\.jsonl$")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "generate",
        help="write generated pageviews (with late and malformed records) into a landing folder",
    )
    parser.add_argument("landing", type=Path, help="folder to write JSON-lines files into")
    parser.add_argument("--events", type=at_least(1), default=20_000, help="records (%(default)s)")
    parser.add_argument("--users", type=at_least(1), default=1_000, help="users (%(default)s)")
    parser.add_argument("--files", type=at_least(1), default=10, help="files (%(default)s)")
    parser.add_argument("--seed", type=int, default=7, help="random seed (%(default)s)")
    parser.add_argument(
        "--late", type=fraction, default=0.02, help="fraction of late records (%(default)s)"
    )
    parser.add_argument(
        "--too-late",
        type=fraction,
        default=0.005,
        help="fraction of records later than any lateness allows (%(default)s)",
    )
    parser.add_argument(
        "--malformed", type=fraction, default=0.01, help="fraction of bad records (%(default)s)"
    )
    parser.set_defaults(handler=generate_command)


def generate_command(args: argparse.Namespace) -> int:
    from streamwarden.sources.generator import TrafficSpec, generate_traffic

    run = next_run_number(args.landing)
    spec = TrafficSpec(
        start=start_after_earlier_runs(args.landing),
        users=args.users,
        events=args.events,
        rate_per_second=args.users / 600,
        seed=args.seed,
        late_fraction=args.late,
        too_late_fraction=args.too_late,
        too_late_delay=timedelta(hours=1),  # past gap + allowed lateness of the examples
        malformed_fraction=args.malformed,
        files=args.files,
    )
    if args.landing.exists() and not args.landing.is_dir():
        from streamwarden.errors import UsageError

        raise UsageError(f"{str(args.landing)!r} is a file; give a folder to write into")
    summary = generate_traffic(spec, args.landing, file_prefix=f"gen-{run:03d}")
    print(
        f"wrote {summary.records:,} records ({summary.events:,} events of "
        f"{summary.distinct_users:,} users, {summary.late:,} late, {summary.too_late:,} too late, "
        f"{sum(summary.malformed.values()):,} malformed) in {len(summary.files)} files to "
        f"{args.landing}; event time {summary.first_event:%Y-%m-%d %H:%M} to "
        f"{summary.last_event:%Y-%m-%d %H:%M} UTC"
    )
    return 0


def next_run_number(landing: Path) -> int:
    """One more than the highest run number of the files an earlier call wrote, else 1."""
    if not landing.is_dir():
        return 1
    runs = [int(m.group(1)) for p in landing.iterdir() if (m := _RUN.match(p.name))]
    return max(runs, default=0) + 1


def start_after_earlier_runs(landing: Path) -> datetime:
    """The event time to start from: a day after the latest event of the files an earlier call
    wrote, or the generator's usual start."""
    from streamwarden.sources.generator import TrafficSpec

    latest: datetime | None = None
    files = [p for p in landing.iterdir() if _RUN.match(p.name)] if landing.is_dir() else []
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            moment = _event_time(line)
            if moment is not None and (latest is None or moment > latest):
                latest = moment
    if latest is None:
        return TrafficSpec.start
    day = latest.replace(hour=0, minute=0, second=0, microsecond=0)
    return day + timedelta(days=1)


def _event_time(line: str) -> datetime | None:
    """The ``ts`` of a generated record, or None for a malformed one."""
    try:
        ts = json.loads(line).get("ts")
    except (ValueError, AttributeError):
        return None
    if isinstance(ts, int) and not isinstance(ts, bool):
        return datetime.fromtimestamp(ts / 1000, tz=UTC)
    if isinstance(ts, str):
        try:
            return datetime.fromisoformat(ts)
        except ValueError:
            return None
    return None
