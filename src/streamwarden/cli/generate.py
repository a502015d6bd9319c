"""``streamwarden generate LANDING``: generated pageview traffic for trying a pipeline.

The demo generates its own traffic; this command writes the same kind into any landing folder,
so that ``streamwarden run`` on a config of your own (or ``examples/sessions.toml``) has
something to read. Spark's file source reads a file name once, and skips files older than the
ones it has seen; a pipeline drops events behind its watermark. So each call continues where
the last one stopped, as recorded in ``.streamwarden-generate.json`` in the folder (a
dot-file, which Spark does not read): a new run number in the file names, later modification
times, and event times starting a day after the last call's latest event. The record survives
emptying the folder; ``--start`` sets the first event time instead.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from streamwarden.atomic import write_atomically
from streamwarden.cli.arguments import Subcommands, at_least, fraction_below
from streamwarden.errors import UsageError

__all__ = ["register"]

#: Where a landing folder keeps what the calls before wrote.
STATE_FILE = ".streamwarden-generate.json"


@dataclass(frozen=True)
class Written:
    """What the calls so far have written into a folder."""

    run: int = 0
    latest_event: datetime | None = None
    latest_mtime: float = 0.0


def register(commands: Subcommands) -> None:
    parser = commands.add_parser(
        "generate",
        help="write generated pageviews (with late and malformed records) into a landing folder",
    )
    parser.add_argument("landing", type=_folder, help="folder to write JSON-lines files into")
    parser.add_argument("--events", type=at_least(1), default=20_000, help="records (%(default)s)")
    parser.add_argument("--users", type=at_least(1), default=1_000, help="users (%(default)s)")
    parser.add_argument("--files", type=at_least(1), default=10, help="files (%(default)s)")
    parser.add_argument("--seed", type=int, default=7, help="random seed (%(default)s)")
    parser.add_argument(
        "--start",
        type=_moment,
        help="first event time, ISO-8601 (default: a day after the last call's latest event, "
        "or 2026-01-01T00:00Z)",
    )
    below_half = fraction_below(0.5)
    parser.add_argument(
        "--late", type=below_half, default=0.02, help="fraction of late records (%(default)s)"
    )
    parser.add_argument(
        "--too-late",
        type=below_half,
        default=0.005,
        help="fraction of records an hour late, past gap + lateness of the examples "
        "(%(default)s; only events early enough in the run can be)",
    )
    parser.add_argument(
        "--malformed", type=below_half, default=0.01, help="fraction of bad records (%(default)s)"
    )
    parser.set_defaults(
        handler=generate_command, interrupted="Interrupted; files already written stay, whole."
    )


def generate_command(args: argparse.Namespace) -> int:
    from streamwarden.local.generator import TrafficSpec, generate_traffic

    landing: Path = args.landing
    if landing.exists() and not landing.is_dir():
        raise UsageError(f"{str(landing)!r} is a file; give a folder to write into")
    before = read_written(landing)
    spec = TrafficSpec(
        start=args.start or _next_start(before),
        users=args.users,
        events=args.events,
        rate_per_second=args.users / 600,
        seed=args.seed,
        late_fraction=args.late,
        too_late_fraction=args.too_late,
        too_late_delay=timedelta(hours=1),
        malformed_fraction=args.malformed,
        files=args.files,
    )
    run = before.run + 1
    try:
        summary = generate_traffic(
            spec, landing, file_prefix=f"gen-{run:03d}", mtime_after=before.latest_mtime
        )
        latest_mtime = max(os.stat(p).st_mtime for p in summary.files)
        _write_state(landing, Written(run, summary.last_event, latest_mtime))
    except OSError as exc:
        raise UsageError(f"cannot write into {str(landing)!r}: {exc.strerror or exc}") from None
    print(
        f"wrote {summary.records:,} records ({summary.events:,} events of "
        f"{summary.distinct_users:,} users, {summary.late:,} late, {summary.too_late:,} too late, "
        f"{sum(summary.malformed.values()):,} malformed) in {len(summary.files)} files to "
        f"{landing}; event time {summary.first_event:%Y-%m-%d %H:%M} to "
        f"{summary.last_event:%Y-%m-%d %H:%M} UTC"
    )
    return 0


def read_written(landing: Path) -> Written:
    """What earlier calls recorded in ``landing``; nothing if no call wrote there."""
    path = landing / STATE_FILE
    if not path.is_file():
        return Written()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        latest = data.get("latest_event")
        return Written(
            run=int(data["run"]),
            latest_event=datetime.fromisoformat(latest) if latest else None,
            latest_mtime=float(data.get("latest_mtime", 0.0)),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        raise UsageError(
            f"{str(path)!r} is damaged; delete it and pass --start later than the events "
            "already in the folder"
        ) from None


def _write_state(landing: Path, written: Written) -> None:
    data = {
        "run": written.run,
        "latest_event": written.latest_event.isoformat() if written.latest_event else None,
        "latest_mtime": written.latest_mtime,
    }
    write_atomically(landing / STATE_FILE, json.dumps(data))


def _next_start(before: Written) -> datetime:
    from streamwarden.local.generator import TrafficSpec

    if before.latest_event is None:
        return TrafficSpec.start
    day = before.latest_event.replace(hour=0, minute=0, second=0, microsecond=0)
    return day + timedelta(days=1)


def _moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an ISO-8601 time such as 2026-03-01T00:00Z, got {text!r}"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _folder(text: str) -> Path:
    if not text.strip():  # Path("") is the current folder: never what was meant
        raise argparse.ArgumentTypeError("give the folder to write into, e.g. examples/landing")
    return Path(text)
