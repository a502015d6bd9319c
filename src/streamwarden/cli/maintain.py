"""``streamwarden maintain CONFIG``: OPTIMIZE and VACUUM a stopped pipeline's Delta tables."""

from __future__ import annotations

import argparse
from pathlib import Path

from streamwarden.cli.arguments import Subcommands

__all__ = ["register"]


def register(commands: Subcommands) -> None:
    parser = commands.add_parser(
        "maintain",
        help="compact (OPTIMIZE) and clean (VACUUM) a stopped pipeline's Delta tables",
    )
    parser.add_argument("config", type=Path, help="pipeline config (.toml or .yaml)")
    parser.add_argument(
        "--retain",
        help="VACUUM keeps files removed less than this long ago (default and minimum: each "
        "table's delta.deletedFileRetentionDuration, 7 days unless set), e.g. '10d'",
    )
    parser.add_argument("--no-optimize", action="store_true", help="skip OPTIMIZE")
    parser.add_argument("--no-vacuum", action="store_true", help="skip VACUUM")
    parser.set_defaults(handler=maintain_command)


def maintain_command(args: argparse.Namespace) -> int:
    from streamwarden.checkpoints.run_lock import refuse_if_held
    from streamwarden.cli.offline import offline_spark
    from streamwarden.config import load_config
    from streamwarden.errors import UsageError
    from streamwarden.pipeline.maintain import delta_targets, maintain
    from streamwarden.plan import PipelinePlan
    from streamwarden.settings.units import parse_duration

    config = load_config(args.config)
    try:
        retain = None if args.retain is None else parse_duration(args.retain)
    except ValueError as exc:
        raise UsageError(f"--retain {args.retain!r}: {exc}") from None
    if not delta_targets(config):
        raise UsageError(f"pipeline {config.name!r} writes no Delta table: nothing to maintain")
    refuse_if_held(config.checkpoint.path, "streamwarden maintain")  # before the JVM starts
    plan = PipelinePlan.of(config)
    spark = offline_spark("maintain", conf=plan.spark_conf(), jars=plan.jars)
    for done in maintain(
        spark, config, retain=retain, optimize=not args.no_optimize, vacuum=not args.no_vacuum
    ):
        print(done.describe())
    return 0
