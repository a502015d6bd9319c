"""SIGINT (Ctrl-C) and SIGTERM as a request to stop between two polls of the query, not an
exception inside one.

PySpark turns SIGINT into a ``KeyboardInterrupt`` wherever the main thread is, and SIGTERM
ends the process at once. Raised in the middle of a py4j call (the runner spends nearly all
its time in ``awaitTermination``), the interrupt breaks the gateway connection, py4j logs its
tracebacks to the terminal, and stopping the query then fails. While
:func:`stop_requested_on_signals` is active, the first SIGINT or SIGTERM only sets a flag: the
runner sees it after the current poll (at most ``poll_seconds`` later), stops the query (a batch
in flight is abandoned: its offsets are logged but not committed, so the next run replays it
exactly) and returns. A second signal raises ``KeyboardInterrupt`` at once, for a runner that
does not react. The JVM PySpark starts ignores SIGINT, so Ctrl-C to the terminal's process group
reaches only Python.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["StopRequest", "stop_requested_on_signals"]

#: The signals that ask a run to stop: Ctrl-C, and what ``kill``, systemd and Docker send.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequest(threading.Event):
    """Set by the first stop signal; :attr:`signal_name` says which (``"SIGTERM"``)."""

    signal_name: str | None = None
    _handler: Callable[[int, FrameType | None], None] | None = None

    def reclaim(self) -> None:
        """Puts this request's handler back on SIGINT and SIGTERM. Starting a SparkContext
        installs PySpark's own SIGINT handler, which cancels jobs through py4j from inside the
        signal handler: if the main thread is in a py4j call at that moment, the call is
        broken ("reentrant call") and its traceback reaches the terminal. So whoever starts
        Spark while a request is active reclaims the signals afterwards."""
        if self._handler is not None and threading.current_thread() is threading.main_thread():
            for s in STOP_SIGNALS:
                signal.signal(s, self._handler)


@contextmanager
def stop_requested_on_signals() -> Iterator[StopRequest]:
    """Yields a :class:`StopRequest` that SIGINT or SIGTERM sets. Outside the main thread
    (where Python delivers no signals) it yields one that stays unset and changes nothing."""
    requested = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield requested
        return

    def request_stop(signum: int, frame: FrameType | None) -> None:
        if requested.is_set():
            raise KeyboardInterrupt
        requested.signal_name = signal.Signals(signum).name
        requested.set()

    requested._handler = request_stop
    previous = {s: signal.signal(s, request_stop) for s in STOP_SIGNALS}
    try:
        yield requested
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
