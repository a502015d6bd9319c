"""``streamwarden inspect CHECKPOINT``: what a checkpoint's state holds, read-only."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from streamwarden.cli.arguments import Subcommands, at_least

__all__ = ["register"]


def register(commands: Subcommands) -> None:
    parser = commands.add_parser(
        "inspect",
        help="show a checkpoint's operators, state rows and bytes, key ages and leak suspects",
    )
    parser.add_argument("checkpoint", type=Path, help="the query's checkpoint folder")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument(
        "--top", type=at_least(0), default=5, help="heaviest keys to list (default 5)"
    )
    parser.set_defaults(handler=inspect_command)


def inspect_command(args: argparse.Namespace) -> int:
    from streamwarden.checkpoints.files import CheckpointFiles
    from streamwarden.checkpoints.inspect import inspect_checkpoint
    from streamwarden.checkpoints.render import report_json, report_text
    from streamwarden.cli.offline import offline_spark

    CheckpointFiles(args.checkpoint)  # a wrong path fails here, before Spark starts
    report = inspect_checkpoint(offline_spark("inspect"), args.checkpoint, top=args.top)
    if args.json:
        print(json.dumps(report_json(report), indent=2))
    else:
        print(report_text(report), end="")
    return 0
