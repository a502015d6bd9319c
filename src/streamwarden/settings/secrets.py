"""Secrets: read at run time from an environment variable or a file, never from a config file,
and never shown. This is the one place that reads the environment for a setting.

A :class:`Secret` prints as ``***`` (``str``, ``repr``, f-strings), so that a secret passed
around by mistake into a message, a log line or the progress log shows nothing; only
:meth:`Secret.reveal` gives the value, at the one place a client needs it.
"""

from __future__ import annotations

import os
from pathlib import Path

from streamwarden.errors import ConfigError

__all__ = ["MASK", "Secret", "read_secret"]

MASK = "***"


class Secret:
    """A secret value that never prints itself."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The value, for the client that needs it; never for a message."""
        return self._value

    def __str__(self) -> str:
        return MASK

    def __repr__(self) -> str:
        return f"Secret({MASK})"


def read_secret(*, env: str | None, file: Path | None, setting: str) -> Secret:
    """The secret from the environment variable ``env`` or the file ``file`` (one is given);
    a :class:`ConfigError` naming where it was looked for (never a value) if it is not there."""
    if env is not None:
        value = os.environ.get(env)
        if not value:
            raise ConfigError(
                f"{setting}: the environment variable {env!r} (named by {setting}_env) is not "
                "set or empty; export it before running"
            )
        return Secret(value)
    assert file is not None
    try:
        value = file.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(
            f"{setting}: cannot read the file {str(file)!r} (named by {setting}_file): "
            f"{exc.strerror}; create it, readable by this user"
        ) from None
    if not value:
        raise ConfigError(f"{setting}: the file {str(file)!r} is empty; write the secret in it")
    return Secret(value)
