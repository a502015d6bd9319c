"""``streamwarden demo [sessions|patterns|kafka]``: generated traffic through a pipeline on local
Spark.

The variants live in :mod:`streamwarden.local.demo_sessions`,
:mod:`streamwarden.local.demo_patterns` and :mod:`streamwarden.local.demo_kafka`, loaded (with
Spark) only when the demo runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from streamwarden.cli.arguments import at_least

if TYPE_CHECKING:
    from streamwarden.cli.arguments import Subcommands

__all__ = ["register"]

#: Default ``--events``: the Kafka variant's is smaller, to finish in a minute or two on 2 cores.
EVENTS, KAFKA_EVENTS = 60_000, 30_000


def register(commands: Subcommands) -> None:
    parser = commands.add_parser(
        "demo", help="generate traffic and sessionize it (or find patterns in it) on local Spark"
    )
    parser.add_argument(
        "variant",
        nargs="?",
        choices=("sessions", "patterns", "kafka"),
        default="sessions",
        help="sessions (default); patterns: actors scanning hosts, matched live; or kafka: "
        "pageviews produced to a local Kafka broker, sessionized live into Kafka topics",
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
        default=None,
        help=f"pageview records to generate, a few of them late, too late or malformed (default: "
        f"{EVENTS}; kafka: {KAFKA_EVENTS}); patterns adds the actors' scans",
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
    parser.add_argument(
        "--rate",
        type=at_least(1),
        default=3_000,
        help="records produced to the topic per second (kafka; default: %(default)s)",
    )
    parser.set_defaults(
        handler=demo_command,
        interrupted="Interrupted; the demo stopped (a Kafka broker it started, too); the next "
        "demo starts afresh.",
    )


def demo_command(args: argparse.Namespace) -> int:
    """Runs the chosen variant; exit 1 if its accounting does not balance."""
    if args.variant == "kafka":
        from streamwarden.local.demo_kafka import kafka_demo_command

        return kafka_demo_command(
            args.out,
            events=args.events or KAFKA_EVENTS,
            users=args.users,
            seed=args.seed,
            rate=args.rate,
        )
    events = args.events or EVENTS
    if args.variant == "patterns":
        from streamwarden.local.demo_patterns import patterns_demo_command

        return patterns_demo_command(
            args.out,
            events=events,
            users=args.users,
            actors=args.actors,
            seed=args.seed,
            batches=args.batches,
        )
    from streamwarden.local.demo_sessions import sessions_demo_command

    return sessions_demo_command(
        args.out, events=events, users=args.users, seed=args.seed, batches=args.batches
    )
