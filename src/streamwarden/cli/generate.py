"""``streamwarden generate [LANDING]``: generated records for trying a pipeline.

The demo generates its own data; this command writes the same kind into any landing folder, so
that ``streamwarden run`` on a config of your own or an example has something to read:
pageviews (the default; ``examples/pageviews.toml``), or with ``--example`` the data of another
example (``payments``, ``logins``, ``alerts``, ``windows``, ``refunds``), by default into that
example's own landing folder (its config's ``[source] path``; for ``refunds``, which reads two
sources, the folder holding both). Spark's file source reads a file name once, and skips files older
than the ones it has seen; a pipeline drops events behind its watermark. So each call continues
where the last one stopped, as recorded in ``.streamwarden-generate.json`` in the folder (a
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
from typing import TYPE_CHECKING

from streamwarden.atomic import write_atomically
from streamwarden.cli.arguments import Subcommands, at_least, fraction_below
from streamwarden.errors import UsageError
from streamwarden.local.examples.catalog import EXAMPLES, example_landing, generate_example

if TYPE_CHECKING:
    from streamwarden.local.examples.catalog import GeneratedExample

__all__ = ["register"]

#: Where a landing folder keeps what the calls before wrote.
STATE_FILE = ".streamwarden-generate.json"
#: The pageviews' defaults.
PAGEVIEW_EVENTS, PAGEVIEW_USERS, PAGEVIEW_FILES = 20_000, 1_000, 10
LATE, TOO_LATE, MALFORMED = 0.02, 0.005, 0.01


@dataclass(frozen=True)
class Written:
    """What the calls so far have written into a folder."""

    run: int = 0
    latest_event: datetime | None = None
    latest_mtime: float = 0.0


def register(commands: Subcommands) -> None:
    parser = commands.add_parser(
        "generate",
        help="write generated records (pageviews, or an example's) with late and malformed ones "
        "into a landing folder",
    )
    parser.add_argument(
        "landing",
        nargs="?",
        type=_folder,
        help="folder to write JSON-lines files into (with --example, by default the example's "
        "own landing folder, as its config in examples/ says)",
    )
    parser.add_argument(
        "--example",
        choices=tuple(EXAMPLES),
        help="whose data: "
        + "; ".join(f"{e.name}: {e.about}" for e in EXAMPLES.values())
        + " (default pageviews)",
    )
    parser.add_argument(
        "--events", type=at_least(1), help=f"records (pageviews only; default {PAGEVIEW_EVENTS})"
    )
    parser.add_argument(
        "--users",
        type=at_least(1),
        help=f"users (default: {PAGEVIEW_USERS}); the accounts of payments, the users of logins "
        "(default: 300)",
    )
    parser.add_argument(
        "--files",
        type=at_least(1),
        help=f"files (default: {PAGEVIEW_FILES}; payments and logins: 30)",
    )
    parser.add_argument("--seed", type=int, default=7, help="random seed (%(default)s)")
    parser.add_argument(
        "--start",
        type=_moment,
        help="first event time, ISO-8601 (default: a day after the last call's latest event, "
        "or 2026-01-01T00:00Z)",
    )
    below_half = fraction_below(0.5)
    parser.add_argument(
        "--late", type=below_half, help=f"fraction of late records (pageviews only; default {LATE})"
    )
    parser.add_argument(
        "--too-late",
        type=below_half,
        help=f"fraction of records an hour late, past gap + lateness of the examples "
        f"(pageviews only; default {TOO_LATE}; only events early enough in the run can be)",
    )
    parser.add_argument(
        "--malformed",
        type=below_half,
        help=f"fraction of bad records (pageviews only; default {MALFORMED})",
    )
    parser.set_defaults(
        handler=generate_command, interrupted="Interrupted; files already written stay, whole."
    )


def generate_command(args: argparse.Namespace) -> int:
    example = args.example or "pageviews"
    landing = _landing(args.landing, args.example)
    if landing.exists() and not landing.is_dir():
        raise UsageError(f"{str(landing)!r} is a file; give a folder to write into")
    before = read_written(landing)
    run = before.run + 1
    start = args.start or _next_start(before)
    try:
        if example == "pageviews":
            summary: GeneratedExample = _pageviews(args, landing, start, before, run)
        else:
            summary = _example(args, example, landing, start, before, run)
        latest_mtime = max(os.stat(p).st_mtime for p in summary.files)
        _write_state(landing, Written(run, summary.last_event, latest_mtime))
    except OSError as exc:
        raise UsageError(f"cannot write into {str(landing)!r}: {exc.strerror or exc}") from None
    print(
        f"wrote {summary.describe()} in {len(summary.files)} files to {landing}; event time "
        f"{summary.first_event:%Y-%m-%d %H:%M} to {summary.last_event:%Y-%m-%d %H:%M} UTC"
    )
    return 0


@dataclass
class _Pageviews:
    """The pageview generator's summary, described for the command line."""

    text: str
    records: int
    files: list[Path]
    first_event: datetime
    last_event: datetime

    def describe(self) -> str:
        return self.text


def _pageviews(
    args: argparse.Namespace, landing: Path, start: datetime, before: Written, run: int
) -> _Pageviews:
    from streamwarden.local import generator

    users = args.users or PAGEVIEW_USERS
    spec = generator.TrafficSpec(
        start=start,
        users=users,
        events=args.events or PAGEVIEW_EVENTS,
        rate_per_second=users / 600,
        seed=args.seed,
        late_fraction=LATE if args.late is None else args.late,
        too_late_fraction=TOO_LATE if args.too_late is None else args.too_late,
        too_late_delay=timedelta(hours=1),
        malformed_fraction=MALFORMED if args.malformed is None else args.malformed,
        files=args.files or PAGEVIEW_FILES,
    )
    summary = generator.generate_traffic(
        spec, landing, file_prefix=f"gen-{run:03d}", mtime_after=before.latest_mtime
    )
    assert summary.first_event is not None and summary.last_event is not None
    text = (
        f"{summary.records:,} records ({summary.events:,} events of "
        f"{summary.distinct_users:,} users, {summary.late:,} late, {summary.too_late:,} too late, "
        f"{sum(summary.malformed.values()):,} malformed)"
    )
    return _Pageviews(text, summary.records, summary.files, summary.first_event, summary.last_event)


def _example(
    args: argparse.Namespace,
    example: str,
    landing: Path,
    start: datetime,
    before: Written,
    run: int,
) -> GeneratedExample:
    for option in ("events", "late", "too_late", "malformed"):
        if getattr(args, option) is not None:
            raise UsageError(
                f"--{option.replace('_', '-')} is for the pageviews; the {example} example "
                "writes its own mix of late and malformed records (see examples/"
                f"{example}.toml)"
            )
    return generate_example(
        example,
        landing,
        seed=args.seed,
        start=start,
        size=args.users,
        files=args.files,
        file_prefix=f"gen-{run:03d}",
        mtime_after=before.latest_mtime,
    )


def _landing(given: Path | None, example: str | None) -> Path:
    """The folder to write into: ``given``, or the example's own."""
    if given is not None:
        return given
    if example is None:
        raise UsageError(
            "give the landing folder to write into, or --example NAME to write into that "
            "example's own (e.g. streamwarden generate --example payments)"
        )
    return example_landing(example)


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
