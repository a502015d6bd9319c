"""``streamwarden demo [sessions|patterns|kafka] [--example NAME]``: generated data through a
pipeline on local Spark.

The pageview variants live in :mod:`streamwarden.local.demo_sessions`,
:mod:`streamwarden.local.demo_patterns` and :mod:`streamwarden.local.demo_kafka`; the other
examples' demo (``--example payments``, ``logins``, ``alerts``, ``windows``, ``refunds``: the
example's own config over its generated data, two landing folders for ``refunds``) in
:mod:`streamwarden.local.examples.demo`. They are loaded (with Spark) only when the demo runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from streamwarden.cli.arguments import at_least
from streamwarden.errors import UsageError
from streamwarden.local.examples.catalog import EXAMPLES

if TYPE_CHECKING:
    from streamwarden.cli.arguments import Subcommands

__all__ = ["register"]

#: Default ``--events``: the Kafka variant's is smaller, to finish in a minute or two on 2 cores.
EVENTS, KAFKA_EVENTS = 60_000, 30_000
#: Default ``--users`` of the pageviews.
USERS = 1_000


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
        "--example",
        choices=tuple(EXAMPLES),
        default="pageviews",
        help="whose data: "
        + "; ".join(f"{e.name}: {e.about}" for e in EXAMPLES.values())
        + " (default pageviews, in the variant chosen; the others run their example's config "
        "in examples/)",
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
        default=None,
        help=f"users the pageviews come from (default: {USERS}); the accounts of payments, "
        "the users of logins (default: 300)",
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
    if args.example != "pageviews":
        return _example_demo(args)
    users = args.users or USERS
    if args.variant == "kafka":
        from streamwarden.local.demo_kafka import kafka_demo_command

        return kafka_demo_command(
            args.out,
            events=args.events or KAFKA_EVENTS,
            users=users,
            seed=args.seed,
            rate=args.rate,
        )
    events = args.events or EVENTS
    if args.variant == "patterns":
        from streamwarden.local.demo_patterns import patterns_demo_command

        return patterns_demo_command(
            args.out,
            events=events,
            users=users,
            actors=args.actors,
            seed=args.seed,
            batches=args.batches,
        )
    from streamwarden.local.demo_sessions import sessions_demo_command

    return sessions_demo_command(
        args.out, events=events, users=users, seed=args.seed, batches=args.batches
    )


def _example_demo(args: argparse.Namespace) -> int:
    if args.variant != "sessions":
        raise UsageError(
            f"--example {args.example} runs examples/{EXAMPLES[args.example].config} as it is; "
            f"leave out {args.variant!r} (the variants are the pageviews')"
        )
    if args.events is not None:
        raise UsageError(
            f"--events is for the pageviews; --users sizes the {args.example} example's data"
        )
    from streamwarden.local.examples.demo import example_demo_command

    return example_demo_command(
        args.example, args.out, size=args.users, seed=args.seed, batches=args.batches
    )
