"""Loads a pipeline config from TOML or YAML and turns every problem into one clear ConfigError."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from streamwarden.config.kafka import looks_secret
from streamwarden.config.model import PipelineConfig
from streamwarden.config.secrets import MASK
from streamwarden.errors import ConfigError

__all__ = ["invalid_config", "load_config", "parse_config"]


def load_config(path: str | Path) -> PipelineConfig:
    """Reads ``path`` (``.toml``, ``.yaml`` or ``.yml``); relative paths inside it are resolved
    against the file's folder, so a config works from any working directory."""
    path = Path(path)
    if not path.is_file():
        state = "is a folder, not a file" if path.is_dir() else "does not exist"
        raise ConfigError(
            f"config file {str(path)!r} {state}; pass the path to a .toml or .yaml pipeline config"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"config file {str(path)!r} is not UTF-8 text (byte {exc.start} cannot be read); "
            "save it as UTF-8"
        ) from None
    try:
        if path.suffix == ".toml":
            data: Any = tomllib.loads(text)
        elif path.suffix in (".yaml", ".yml"):
            data = yaml.safe_load(text)
        else:
            raise ConfigError(f"config file {str(path)!r} must end in .toml, .yaml or .yml")
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(
            f"config file {str(path)!r} is not valid {path.suffix[1:]}: {exc}"
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"config file {str(path)!r} must hold a table of settings at top level")
    return parse_config(_resolve_paths(data, path.parent.resolve()), origin=str(path))


def parse_config(data: dict[str, Any], *, origin: str = "<config>") -> PipelineConfig:
    """Validates a config given as a dict (as from TOML). What only an operator can check (a
    declared pattern's structure) is checked by :mod:`streamwarden.pipeline.loading`."""
    try:
        return PipelineConfig.model_validate(data)
    except ValidationError as exc:
        raise invalid_config(origin, [_describe(err, data) for err in exc.errors()]) from None


def invalid_config(origin: str, problems: list[str]) -> ConfigError:
    """The error for a config with ``problems``, one line each under the config's name."""
    return ConfigError(f"config {origin!r} is invalid:\n" + "\n".join(f"  - {p}" for p in problems))


def _describe(err: Any, data: dict[str, Any]) -> str:
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


_PATH_KEYS = {
    ("source", "path"),
    ("checkpoint", "path"),
    ("sinks", "sessions", "path"),
    ("sinks", "matches", "path"),
    ("sinks", "timeouts", "path"),
    ("sinks", "dead_letters", "path"),
}


def _resolve_paths(data: dict[str, Any], base: Path) -> dict[str, Any]:
    def walk(node: Any, prefix: tuple[str, ...]) -> Any:
        if isinstance(node, dict):
            return {k: walk(v, (*prefix, k)) for k, v in node.items()}
        if prefix in _PATH_KEYS and isinstance(node, str) and not Path(node).is_absolute():
            return str(base / node)
        return node

    resolved: dict[str, Any] = walk(data, ())
    return resolved
