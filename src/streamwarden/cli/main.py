"""``streamwarden``: run a pipeline or the demo, and the offline tools on checkpoints.

Errors print one line (``Error: ...``) and exit 2 for config or usage problems, 1 for runtime
failures; Spark's own log, with any Java trace, goes to a log file named in the message.
"""

from __future__ import annotations

import argparse
import logging
import sys
import warnings

from streamwarden import __version__
from streamwarden.cli import (
    demo,
    doctor,
    generate,
    inspect,
    jars,
    maintain,
    report,
    rescale,
    run,
    status,
    submit,
)
from streamwarden.cli.arguments import Command
from streamwarden.errors import StreamwardenError
from streamwarden.spark.jvm import java_message
from streamwarden.spark.log_file import keep_pyspark_traces_off_the_terminal, log_to_file
from streamwarden.spark.permissions import PRIVATE_UMASK, parse_umask, process_umask

__all__ = ["COMMANDS", "build_parser", "main"]

#: Every command, in the order ``--help`` lists them. Each registers its own parser and handler
#: (see :class:`~streamwarden.cli.arguments.Command`); a new command is one module added here.
COMMANDS: tuple[Command, ...] = (
    run,
    submit,
    demo,
    status,
    report,
    inspect,
    rescale,
    maintain,
    doctor,
    generate,
    jars,
)

#: What Ctrl-C prints unless the command set its own ``interrupted`` line.
INTERRUPTED = "Interrupted; the checkpoint is intact and the next run resumes from it."


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="streamwarden", description=plain(__doc__.splitlines()[0])
    )
    parser.add_argument("--version", action="version", version=f"streamwarden {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.register(commands)
    parser.set_defaults(command_parsers=commands.choices, interrupted=INTERRUPTED)
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


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    warnings.filterwarnings("ignore")  # pyspark's pandas-version notices are not for users
    keep_pyspark_traces_off_the_terminal()
    # what a command writes (outputs, logs, reports) is its owner's until the config says
    # otherwise (file_umask; docs/failure-modes.md#readable-outputs)
    with process_umask(parse_umask(PRIVATE_UMASK)):
        try:
            return int(args.handler(args))
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
            print(args.interrupted, file=sys.stderr)
            return 130


if __name__ == "__main__":
    sys.exit(main())
