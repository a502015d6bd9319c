"""``streamwarden jars [CONFIG]``: the JVM jars a pipeline runs with, for shipping to a cluster;
``streamwarden jars --fetch [SET ...]``: fetch connector jar sets ahead of a run.

The engine jar ships inside the Python package (``streamwarden/_engine/``); the connector jars
a config needs (Kafka's, Delta Lake's, PostgreSQL's driver) are the jar sets of
:mod:`streamwarden.spark.jar_sets`, fetched from Maven Central into the user's cache on first
need. ``run`` and ``submit`` put all of them on ``spark.jars`` themselves; this command prints
them for a ``spark-submit`` line or an image of your own (``--comma``: one line, as ``--jars``
takes). ``--fetch`` fetches sets now (every set without names) into the folder in effect (with
``STREAMWARDEN_JARS_DIR`` set: that folder, e.g. for hosts without network) and prints each
set's folder.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from streamwarden.cli.arguments import Subcommands

__all__ = ["register"]


def register(commands: Subcommands) -> None:
    parser = commands.add_parser(
        "jars",
        help="print the engine jar and the connector jars a config needs, or fetch jar sets",
    )
    parser.add_argument(
        "config", type=Path, nargs="?", help="pipeline config (without it: the engine jar only)"
    )
    parser.add_argument(
        "--comma", action="store_true", help="one line, comma-separated (for --jars)"
    )
    parser.add_argument(
        "--fetch",
        nargs="*",
        metavar="SET",
        default=None,
        help="fetch these jar sets (kafka, kafka-broker, delta, postgres; default: all) "
        "from Maven Central now and print their folders",
    )
    parser.set_defaults(handler=jars_command)


def jars_command(args: argparse.Namespace) -> int:
    if args.fetch is not None:
        if args.config is not None:
            from streamwarden.errors import UsageError

            raise UsageError("give a CONFIG or --fetch, not both ('run' fetches what it needs)")
        return fetch_command(tuple(args.fetch))
    from streamwarden.spark.engine_jar import engine_jar_path

    jars = [str(engine_jar_path())]
    if args.config is not None:
        from streamwarden.config import load_config
        from streamwarden.plan import PipelinePlan

        jars += PipelinePlan.of(load_config(args.config)).jars
    print(",".join(jars) if args.comma else "\n".join(jars))
    return 0


def fetch_command(names: tuple[str, ...]) -> int:
    """Fetches the sets ``names`` (every shipped set when empty): a line per set on stdout,
    the artifacts being fetched on stderr."""
    from streamwarden.spark.jar_sets import fetch_jar_set, maven_repository, shipped_sets
    from streamwarden.spark.maven import MavenJar

    def progress(jar: MavenJar) -> None:
        print(f"fetching {jar.coordinate}", file=sys.stderr, flush=True)

    for name in names or shipped_sets():
        folder, fetched = fetch_jar_set(name, progress=progress)
        how = f"fetched from {maven_repository()}" if fetched else "already there"
        print(f"{name}: {folder} ({how})", flush=True)
    return 0
