"""What the commands share on the command line: the ``register`` contract every command module
follows, and argument types, so that a bad number is a usage error at once, before Spark starts,
rather than an error from deep inside it."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Protocol, TypeAlias

__all__ = ["Command", "Subcommands", "at_least", "fraction_below"]

#: What ``register`` adds a command's parser to: ``streamwarden``'s sub-commands.
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


class Command(Protocol):
    """A command module (``streamwarden.cli.<command>``), as :mod:`streamwarden.cli.main` sees it.

    ``register`` adds the command's parser and sets its ``handler``, a function from the parsed
    arguments to the exit code; an interrupted command may also set ``interrupted``, the line
    printed on Ctrl-C. A module stays cheap to import: whatever loads Spark is imported inside
    its handler, so that ``--help``, ``--version`` and ``doctor`` stay fast.
    """

    def register(self, commands: Subcommands) -> None: ...


def at_least(minimum: int) -> Callable[[str], int]:
    """An argparse ``type``: a whole number no smaller than ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    parse.__name__ = f"whole number >= {minimum}"
    return parse


def fraction_below(maximum: float) -> Callable[[str], float]:
    """An argparse ``type``: a number from 0 up to, not including, ``maximum``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not 0.0 <= value < maximum:
            raise argparse.ArgumentTypeError(f"must be at least 0 and below {maximum}, got {text}")
        return value

    parse.__name__ = f"number in [0, {maximum})"
    return parse
