"""Argument types shared by the commands, so that a bad number is a usage error at once, before
Spark starts, rather than an error from deep inside it."""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["at_least", "fraction_below"]


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
