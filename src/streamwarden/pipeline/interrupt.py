"""Ctrl-C as a request to stop between two polls of the query, not an exception inside one.

PySpark turns SIGINT into a ``KeyboardInterrupt`` wherever the main thread is. Raised in the
middle of a py4j call (the runner spends nearly all its time in ``awaitTermination``), it breaks
the gateway connection, py4j logs its tracebacks to the terminal, and stopping the query then
fails. While :func:`stop_requested_on_interrupt` is active, the first Ctrl-C only sets a flag:
the runner sees it after the current poll, stops the query cleanly and raises
``KeyboardInterrupt`` itself. A second Ctrl-C raises at once, for a runner that does not react.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["stop_requested_on_interrupt"]


@contextmanager
def stop_requested_on_interrupt() -> Iterator[threading.Event]:
    """Yields an event that Ctrl-C sets. Outside the main thread (where Python delivers no
    signals) it yields an event that stays unset and changes nothing."""
    requested = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield requested
        return

    def request_stop(signum: int, frame: FrameType | None) -> None:
        if requested.is_set():
            raise KeyboardInterrupt
        requested.set()

    previous = signal.signal(signal.SIGINT, request_stop)
    try:
        yield requested
    finally:
        signal.signal(signal.SIGINT, previous)
