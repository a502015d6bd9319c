"""``streamwarden submit CONFIG --master URL``: a pipeline on a Spark cluster.

The driver runs in this process (Spark's client deploy mode, as ``spark-submit --deploy-mode
client``), the tasks in the cluster's executors. Everything else is ``run``: ``doctor`` first
(judging the config against this master: a cluster needs ``[spark] shared_storage = true``),
then the engine jar and the connector jars the config needs on ``spark.jars``, from where Spark
ships them to every executor. Executors need no Python package of streamwarden's: the per-key
work is the Java engine, and the batch writer runs here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from streamwarden.cli.run import add_run_options, run_command

if TYPE_CHECKING:
    from streamwarden.cli.arguments import Subcommands

__all__ = ["register"]


def register(commands: Subcommands) -> None:
    parser = commands.add_parser(
        "submit",
        help="run a pipeline on a Spark cluster: the driver here, the tasks on its executors",
    )
    add_run_options(parser)
    parser.add_argument(
        "--master",
        required=True,
        help="the cluster's master: spark://HOST:PORT, k8s://URL or yarn (replaces [spark] master)",
    )
    parser.set_defaults(
        handler=lambda args: run_command(
            args.config,
            once=args.once,
            drain=args.drain,
            doctor=not args.skip_doctor,
            master=args.master,
        )
    )
