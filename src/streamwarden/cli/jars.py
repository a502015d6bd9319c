"""``streamwarden jars [CONFIG]``: the JVM jars a pipeline runs with, for shipping to a cluster.

The engine jar ships inside the Python package (``streamwarden/_engine/``); the connector jars
a config needs (Kafka's, Delta Lake's, PostgreSQL's driver) come from the jar sets that
``make setup`` fetches (``$STREAMWARDEN_JARS_DIR`` for an installed package). ``run`` and
``submit`` put all of them on ``spark.jars`` themselves; this command prints them for a
``spark-submit`` line or an image of your own (``--comma``: one line, as ``--jars`` takes).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from streamwarden.cli.arguments import Subcommands

__all__ = ["register"]


def register(commands: Subcommands) -> None:
    parser = commands.add_parser(
        "jars", help="print the engine jar and the connector jars a config needs"
    )
    parser.add_argument(
        "config", type=Path, nargs="?", help="pipeline config (without it: the engine jar only)"
    )
    parser.add_argument(
        "--comma", action="store_true", help="one line, comma-separated (for --jars)"
    )
    parser.set_defaults(handler=jars_command)


def jars_command(args: argparse.Namespace) -> int:
    from streamwarden.spark.engine_jar import engine_jar_path

    jars = [str(engine_jar_path())]
    if args.config is not None:
        from streamwarden.doctor.connections import required_jars
        from streamwarden.pipeline.loading import load_pipeline_config

        jars += required_jars(load_pipeline_config(args.config))
    print(",".join(jars) if args.comma else "\n".join(jars))
    return 0
