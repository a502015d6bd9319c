"""A failed query, as the supervisor records it: in the progress log, in the metrics, and in
its final report when it gives up.

A failure line in the progress log is ``{"failure": {...}}``, one JSON object per failure,
between the batch lines; :func:`~streamwarden.monitoring.progress_log.read_progress_log`
returns only the batches, :func:`~streamwarden.monitoring.progress_log.read_failures` only
these.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["QueryFailure", "error_class_of", "file_named_in", "key_named_in"]

#: ``SomeException: message`` at the start of a cause (Java or Python).
_CLASS = re.compile(r"\b([A-Z][A-Za-z0-9_]*(?:Exception|Error))\b")
#: A file a Spark message names: a ``file:`` URI, or an absolute path with an extension.
#: (Not a URL's path: ``https://docs.delta.io/...`` names no file.)
_FILE = re.compile(r"(?:file:|(?<![\w:/]))(/[^\s'\",;:]+\.[A-Za-z0-9]+)")
#: A key the engine or a message names: ``key 'u1'`` or ``key=u1``.
_KEY = re.compile(r"\bkey[= ]'?([^\s',;]+)'?")


@dataclass(frozen=True)
class QueryFailure:
    """One failure of the query: when (wall clock, epoch ms), its error class and one-line
    message, the batch that failed (planned but not committed, if any), a key or file the
    message names, whether the supervisor restarts after it, and the wait before it does."""

    at_ms: int
    error_class: str
    message: str
    batch: int | None
    key: str | None = None
    file: str | None = None
    restartable: bool = True
    restart: int | None = None
    backoff_s: float | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> QueryFailure:
        return cls(**data)

    def same_as(self, other: QueryFailure) -> bool:
        """The same batch failing the same way (class and message), as a poison record
        makes it."""
        return (self.batch, self.error_class, self.message) == (
            other.batch,
            other.error_class,
            other.message,
        )

    def describe(self) -> str:
        where = "" if self.batch is None else f"batch {self.batch} "
        pairs = (("key", self.key), ("file", self.file))
        named = "".join(f", {what} {value!r}" for what, value in pairs if value)
        return f"{where}failed with {self.error_class}{named}: {self.message}"


def error_class_of(message: str, fallback: str) -> str:
    """The innermost exception class a message names (Spark's cause first), else
    ``fallback`` (our own error's class)."""
    found = _CLASS.findall(message)
    return found[0] if found else fallback


def file_named_in(message: str) -> str | None:
    found = _FILE.search(message)
    return None if found is None else found.group(1)


def key_named_in(message: str) -> str | None:
    found = _KEY.search(message)
    return None if found is None else found.group(1)
