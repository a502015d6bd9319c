"""``streamwarden``: run a pipeline or the demo, and the offline tools on checkpoints.

Errors print one line (``Error: ...``) and exit 2 for config or usage problems, 1 for runtime
failures; Spark's own log, with any Java trace, goes to a log file named in the message.
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import warnings
from pathlib import Path

from streamwarden import __version__
from streamwarden.cli import doctor, generate, inspect, report, rescale, status
from streamwarden.cli.arguments import at_least
from streamwarden.errors import StreamwardenError
from streamwarden.spark.jvm import PYSPARK_QUERY_LOGGERS, java_message
from streamwarden.spark.logs import unwritable_log

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="streamwarden", description=plain(__doc__.splitlines()[0])
    )
    parser.add_argument("--version", action="version", version=f"streamwarden {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a pipeline from its config file")
    run.add_argument("config", type=Path, help="pipeline config (.toml or .yaml)")
    run.add_argument(
        "--once", action="store_true", help="process what is in the source now, then stop"
    )
    run.add_argument(
        "--drain",
        action="store_true",
        help="with --once: then close every session (end of a finite input)",
    )
    run.add_argument(
        "--skip-doctor", action="store_true", help="start even if streamwarden doctor finds errors"
    )
    demo = commands.add_parser(
        "demo", help="generate traffic and sessionize it (or find patterns in it) on local Spark"
    )
    demo.add_argument(
        "variant",
        nargs="?",
        choices=("sessions", "patterns"),
        default="sessions",
        help="sessions (default), or patterns: actors scanning hosts, matched live",
    )
    demo.add_argument(
        "--out",
        type=Path,
        default=Path("demo-output"),
        help="working folder, emptied first if an earlier demo made it (default: demo-output)",
    )
    demo.add_argument(
        "--events",
        type=at_least(1),
        default=60_000,
        help="pageview records to generate, a few of them late, too late or malformed (default: "
        "%(default)s); patterns adds the actors' scans",
    )
    demo.add_argument(
        "--users",
        type=at_least(1),
        default=1_000,
        help="users the pageviews come from (default: %(default)s)",
    )
    demo.add_argument(
        "--seed",
        type=int,
        default=7,
        help="random seed; the same seed and options generate the same files (default: "
        "%(default)s)",
    )
    for command in (status, report):
        command.add_parser(commands)
    for module in (inspect, rescale, doctor, generate):
        module.register(commands)  # each sets its own handler
    demo.add_argument(
        "--actors",
        type=at_least(0),
        default=40,
        help="scanning actors (patterns; default: %(default)s)",
    )
    demo.add_argument(
        "--batches",
        type=at_least(1),
        default=30,
        help="input files to split the records into, each read as one micro-batch (default: "
        "%(default)s); the run adds a few batches with no input, in which the watermark moves "
        "and the final drain tick closes every state",
    )
    parser.set_defaults(command_parsers=commands.choices)
    return parser


def plain(text: str) -> str:
    """``text`` without the reStructuredText markup of a docstring (````name````), for the
    terminal."""
    return text.replace("``", "")


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    """Parses the command line. An argument the command does not know is reported with that
    command's usage (argparse would show the top-level one, which lists no options)."""
    args, unknown = build_parser().parse_known_args(argv)
    if unknown:
        args.command_parsers[args.command].error(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def log_to_file(path: Path | None = None) -> logging.FileHandler:
    """Sends the ``streamwarden`` Python log to ``path`` (once), never to the terminal."""
    logger = logging.getLogger("streamwarden")
    for handler in logger.handlers:
        if isinstance(handler, logging.FileHandler):
            return handler
    target = path or Path(tempfile.gettempdir()) / "streamwarden.log"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.FileHandler(target)
    except OSError as exc:
        raise unwritable_log(target, exc) from None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger.addHandler(handler)
    logger.propagate = False
    return handler


class _IntoStreamwardenLog(logging.Handler):
    """Hands records to the ``streamwarden`` log file (see :func:`log_to_file`)."""

    def emit(self, record: logging.LogRecord) -> None:
        logger = logging.getLogger("streamwarden")
        if not logger.handlers:
            log_to_file()
        logger.handle(record)


def keep_pyspark_traces_off_the_terminal() -> None:
    """Sends PySpark's query-error loggers to our log file instead of stderr; the error itself
    still reaches the user as one message."""
    from pyspark.logger import PySparkLogger

    for name in PYSPARK_QUERY_LOGGERS:
        logger = PySparkLogger.getLogger(name)
        for handler in list(logger.handlers):
            if not isinstance(handler, _IntoStreamwardenLog):
                logger.removeHandler(handler)
        if not logger.handlers:
            logging.Logger.addHandler(logger, _IntoStreamwardenLog())


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    warnings.filterwarnings("ignore")  # pyspark's pandas-version notices are not for users
    keep_pyspark_traces_off_the_terminal()
    try:
        if hasattr(args, "handler"):
            return int(args.handler(args))
        if args.command == "run":
            from streamwarden.cli.run import run_command

            return run_command(
                args.config, once=args.once, drain=args.drain, doctor=not args.skip_doctor
            )
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
        from streamwarden.cli.demo import demo_command

        return demo_command(
            args.out, events=args.events, users=args.users, seed=args.seed, batches=args.batches
        )
    except StreamwardenError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return exc.exit_code
    except Exception as exc:  # a bug or an unforeseen JVM failure: one line, trace in the log
        log_file = log_to_file().baseFilename
        logging.getLogger("streamwarden").exception("unexpected failure")
        print(
            f"Error: unexpected failure: {java_message(exc)}; the full trace is in "
            f"{log_file}; please report it with that file",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:
        if args.command == "generate":
            print("Interrupted; files already written stay, whole.", file=sys.stderr)
        else:
            print(
                "Interrupted; the checkpoint is intact and the next run resumes from it.",
                file=sys.stderr,
            )
        return 130


if __name__ == "__main__":
    sys.exit(main())
