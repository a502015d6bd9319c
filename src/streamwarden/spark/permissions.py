"""Files a pipeline writes are readable by their owner only, unless configured otherwise.

Dead letters and sessions hold record contents; the checkpoint holds them too (state, source
logs); the progress log, status file, logs and reports hold settings and messages. Two switches
cover them all: the process's umask for what Python and the JVM create directly (the command
line sets it, :func:`process_umask`), and Hadoop's ``fs.permissions.umask-mode`` for what Spark
writes through Hadoop's file systems, which set each file's mode explicitly and so ignore the
process's umask (:data:`UMASK_SETTING`, set by ``build_spark_session``).
See docs/failure-modes.md#readable-outputs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

__all__ = ["PRIVATE_UMASK", "UMASK_SETTING", "parse_umask", "process_umask", "with_umask"]

#: Owner read and write (and list, for folders); nothing for group and others.
PRIVATE_UMASK = "077"
#: Hadoop's umask for files Spark creates, as a Spark setting.
UMASK_SETTING = "spark.hadoop.fs.permissions.umask-mode"


def parse_umask(text: str) -> int:
    """The umask written as three octal digits (``"077"``, ``"027"``); ValueError if it is not
    one, or if it would take reading or writing from the owner, which the pipeline needs."""
    if len(text) != 3 or any(c not in "01234567" for c in text):
        raise ValueError(
            f"file_umask {text!r} is not a umask: write three octal digits, e.g. '077'"
        )
    mask = int(text, 8)
    if mask & 0o600:
        raise ValueError(
            f"file_umask {text!r} takes reading or writing from the owner; its first digit must "
            "be 0 or 1 (e.g. '077' for the owner only, '027' for the owner and group reading)"
        )
    return mask


@contextmanager
def process_umask(mask: int) -> Iterator[None]:
    """Within this block, files and folders this process (and a JVM it starts) creates get
    ``mask``; the previous umask is restored afterwards."""
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


def with_umask(conf: Mapping[str, str], umask: str) -> dict[str, str]:
    """``conf`` with Hadoop's umask set to ``umask``, unless ``conf`` sets it itself."""
    return {UMASK_SETTING: umask, **conf}
