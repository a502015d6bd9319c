"""``streamwarden demo [sessions|patterns]``: generated traffic through a pipeline on local Spark.

The two variants live in :mod:`streamwarden.cli.demo_sessions` and
:mod:`streamwarden.cli.demo_patterns`, loaded (with Spark) only when the demo runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from streamwarden.cli.arguments import at_least

if TYPE_CHECKING:
    from streamwarden.cli.arguments import Subcommands

__all__ = ["register"]


def register(commands: Subcommands) -> None:
    parser = commands.add_parser(
        "demo", help="generate traffic and sessionize it (or find patterns in it) on local Spark"
    )
    parser.add_argument(
        "variant",
        nargs="?",
        choices=("sessions", "patterns"),
        default="sessions",
        help="sessions (default), or patterns: actors scanning hosts, matched live",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("demo-output"),
        help="working folder, emptied first if an earlier demo made it (default: demo-output)",
    )
    parser.add_argument(
        "--events",
        type=at_least(1),
        default=60_000,
        help="pageview records to generate, a few of them late, too late or malformed (default: "
        "%(default)s); patterns adds the actors' scans",
    )
    parser.add_argument(
        "--users",
        type=at_least(1),
        default=1_000,
        help="users the pageviews come from (default: %(default)s)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=7,
        help="random seed; the same seed and options generate the same files (default: "
        "%(default)s)",
    )
    parser.add_argument(
        "--actors",
        type=at_least(0),
        default=40,
        help="scanning actors (patterns; default: %(default)s)",
    )
    parser.add_argument(
        "--batches",
        type=at_least(1),
        default=30,
        help="input files to split the records into, each read as one micro-batch (default: "
        "%(default)s); the run adds a few batches with no input, in which the watermark moves "
        "and the final drain tick closes every state",
    )
    parser.set_defaults(handler=demo_command)


def demo_command(args: argparse.Namespace) -> int:
    """Runs the chosen variant; exit 1 if its accounting does not balance."""
    if args.variant == "patterns":
        from streamwarden.cli.demo_patterns import patterns_demo_command

        return patterns_demo_command(
            args.out,
            events=args.events,
            users=args.users,
            actors=args.actors,
            seed=args.seed,
            batches=args.batches,
        )
    from streamwarden.cli.demo_sessions import sessions_demo_command

    return sessions_demo_command(
        args.out, events=args.events, users=args.users, seed=args.seed, batches=args.batches
    )
