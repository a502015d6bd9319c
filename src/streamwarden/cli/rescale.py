"""``streamwarden rescale CHECKPOINT --partitions N``: change a stopped query's state partitions."""

from __future__ import annotations

import argparse
from pathlib import Path

from streamwarden.cli.arguments import Subcommands, at_least

__all__ = ["register"]


def register(commands: Subcommands) -> None:
    parser = commands.add_parser(
        "rescale", help="repartition a stopped query's state into N partitions (offline)"
    )
    parser.add_argument("checkpoint", type=Path, help="the query's checkpoint folder")
    parser.add_argument("--partitions", type=at_least(1), required=True, help="new partition count")
    parser.set_defaults(handler=rescale_command)


def rescale_command(args: argparse.Namespace) -> int:
    from streamwarden.checkpoints.files import CheckpointFiles
    from streamwarden.checkpoints.rescale import rescale_checkpoint
    from streamwarden.cli.offline import offline_spark

    CheckpointFiles(args.checkpoint)
    report = rescale_checkpoint(offline_spark("rescale"), args.checkpoint, args.partitions)
    print(
        f"rescaled {report.checkpoint}: {report.partitions_before} -> "
        f"{report.partitions_after} state partitions in {report.repartition_seconds:.1f}s "
        f"(verification {report.verify_seconds:.1f}s), as batch {report.batch_id}"
    )
    for name, rows in sorted(report.rows_after.items()):
        print(f"  {name}: {report.rows_before[name]} rows before, {rows} after")
    print(
        "the next run of the query uses the new count, whatever spark.shuffle_partitions says; "
        "update the config to match"
    )
    return 0
