"""What the throwaway servers streamwarden starts on 127.0.0.1 for tests, demos and benchmarks
share: free ports, and the ``with`` statement over ``start``/``stop``.

The servers themselves (:class:`~streamwarden.local.broker.LocalBroker`,
:class:`~streamwarden.local.postgres.LocalPostgres`,
:class:`~streamwarden.local.cluster.LocalStandaloneCluster`) are real programs users run,
started from their own distributions; each knows how its program starts, answers and stops.
"""

from __future__ import annotations

import socket
from abc import ABC, abstractmethod
from types import TracebackType
from typing import Self

from streamwarden.spark.network import LOOPBACK

__all__ = ["LocalServer", "free_ports"]


class LocalServer(ABC):
    """A server started by :meth:`start` (or ``with``), stopped by :meth:`stop` (or the end of
    the ``with`` block), whatever happened inside it."""

    @abstractmethod
    def start(self) -> Self:
        """Starts the server; returns once it answers its clients."""

    @abstractmethod
    def stop(self) -> None:
        """Stops the server by its process and removes its files. Does nothing if it is not
        running."""

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


def free_ports(count: int) -> tuple[int, ...]:
    """``count`` distinct TCP ports free on 127.0.0.1 now (held open together while chosen, so
    they differ; another process may still take one before the server binds it)."""
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind((LOOPBACK, 0))
        return tuple(sock.getsockname()[1] for sock in sockets)
    finally:
        for sock in sockets:
            sock.close()
