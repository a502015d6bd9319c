"""A config's problems as a person reads them: one line each, naming the setting by its place
in the file (``sinks.sessions.path``), with the value as written (never a secret)."""

from __future__ import annotations

from typing import Any

from streamwarden.errors import ConfigError
from streamwarden.settings.kafka import looks_secret
from streamwarden.settings.secrets import MASK

__all__ = ["describe", "invalid_config"]


def invalid_config(origin: str, problems: list[str]) -> ConfigError:
    """The error for a config with ``problems``, one line each under the config's name."""
    return ConfigError(f"config {origin!r} is invalid:\n" + "\n".join(f"  - {p}" for p in problems))


def describe(err: Any, data: dict[str, Any], prefix: tuple[str, ...] = ()) -> str:
    """The line for one of pydantic's errors of the section at ``prefix`` of ``data``."""
    err = {**err, "loc": (*prefix, *err["loc"])}
    where = ".".join(str(part) for part in err["loc"]) or "(top level)"
    kind = err["type"]
    if kind == "extra_forbidden":
        return f"{where}: unknown setting; remove it or check its spelling"
    if kind == "missing":
        return f"{where}: required setting is missing"
    message = str(err["msg"]).removeprefix("Value error, ")
    if any(looks_secret(str(part)) for part in err["loc"]):
        return f"{where}: {message} (got {MASK})"  # never a secret, even a misplaced one
    shown = f"got {err.get('input')!r}"
    if isinstance(err.get("input"), dict) or shown in message:  # the message says it all
        return f"{where}: {message}"
    written = _written_value(data, err["loc"])
    if isinstance(written, str) and written.strip() != str(err.get("input")):  # "1k" -> 1024
        shown = f"got {written!r}, read as {err.get('input')!r}"
    return f"{where}: {message} ({shown})"


def _written_value(data: dict[str, Any], loc: tuple[Any, ...]) -> Any:
    """The value as the user wrote it at ``loc``, before any parsing; None if not found."""
    node: Any = data
    for part in loc:
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node
