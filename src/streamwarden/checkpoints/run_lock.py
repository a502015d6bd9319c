"""Marks a checkpoint as in use by a running pipeline, so that offline tools can refuse it.

A running pipeline holds an exclusive ``flock`` on ``<checkpoint>/streamwarden/run.lock`` and
writes who it is into the file. The kernel drops the lock when the process ends, however it
ends (even ``SIGKILL``), so a stale file never blocks anyone; a leftover file is only a note.
Offline tools (``rescale``) try to take the same lock: if they cannot, a query is running.

Queries not started by streamwarden hold no such lock; for them the tools rely on Spark's own
check that the last planned batch was committed (a query stopped mid-batch fails it).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from streamwarden.errors import CheckpointInUseError, StateError, UsageError

__all__ = ["checkpoint_holder", "hold_checkpoint", "lock_path", "refuse_if_held"]


def lock_path(checkpoint: Path) -> Path:
    return Path(checkpoint) / "streamwarden" / "run.lock"


@contextmanager
def hold_checkpoint(checkpoint: Path, what: str) -> Iterator[None]:
    """Holds the checkpoint's run lock for the duration; raises if someone else holds it."""
    blocker = next((p for p in (Path(checkpoint), *Path(checkpoint).parents) if p.exists()), None)
    if blocker is not None and not blocker.is_dir():
        raise UsageError(
            f"checkpoint path {str(checkpoint)!r} cannot be a folder: {str(blocker)!r} is a "
            "file; point checkpoint.path at a folder (Spark creates it if missing)"
        )
    path = lock_path(checkpoint)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("a+", encoding="utf-8")
    except OSError as exc:
        raise StateError(
            f"checkpoint path {str(checkpoint)!r} cannot be written ({exc.strerror or exc}: "
            f"{exc.filename or path}); give the user running the pipeline write access to it, "
            "or point checkpoint.path at a folder it may write"
        ) from None
    with handle:
        if not _try_lock(handle):
            raise _in_use(checkpoint, _read(handle), what)
        try:
            handle.seek(0)
            handle.truncate()
            info = {
                "pid": os.getpid(),
                "host": socket.gethostname(),
                "what": what,
                "since": datetime.now(UTC).isoformat(timespec="seconds"),
            }
            handle.write(json.dumps(info))
            handle.flush()
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def refuse_if_held(checkpoint: Path, what: str) -> None:
    """Raises as :func:`hold_checkpoint` would, without taking the lock: lets a command fail at
    once, before it starts a JVM, when a pipeline already runs on the checkpoint."""
    holder = checkpoint_holder(checkpoint)
    if holder is not None:
        raise _in_use(checkpoint, holder, what)


def _in_use(checkpoint: Path, holder: dict[str, Any] | None, what: str) -> CheckpointInUseError:
    return CheckpointInUseError(
        f"checkpoint {str(checkpoint)!r} is in use by {_describe(holder or {})}; stop that "
        f"run first (Ctrl-C, or let a --once run finish), then retry {what}"
    )


def checkpoint_holder(checkpoint: Path) -> dict[str, Any] | None:
    """Who holds the checkpoint's run lock right now (pid, host, what, since), or None."""
    path = lock_path(checkpoint)
    if not path.is_file():
        return None
    with path.open("r", encoding="utf-8") as handle:
        if _try_lock(handle):
            fcntl.flock(handle, fcntl.LOCK_UN)
            return None
        return _read(handle) or {"what": "an unknown process"}


def _try_lock(handle: IO[str]) -> bool:
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _read(handle: IO[str]) -> dict[str, Any]:
    handle.seek(0)
    try:
        return dict(json.loads(handle.read() or "{}"))
    except json.JSONDecodeError:
        return {}


def _describe(holder: dict[str, Any]) -> str:
    what = holder.get("what", "a process")
    return f"{what} (pid {holder.get('pid', '?')} on {holder.get('host', '?')}, since " + (
        f"{holder.get('since', '?')})"
    )
