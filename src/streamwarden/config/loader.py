"""Loads a pipeline config from TOML or YAML and turns every problem into one clear ConfigError."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import yaml

from streamwarden.config.assembly import assemble
from streamwarden.config.model import PipelineConfig
from streamwarden.config.problems import invalid_config
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
    return parse_config(data, origin=str(path), base=path.parent.resolve())


def parse_config(
    data: dict[str, Any], *, origin: str = "<config>", base: Path | None = None
) -> PipelineConfig:
    """Validates a config given as a dict (as from TOML), its relative paths taken against
    ``base`` (as written when None). Each part's section is validated by its own model
    (:mod:`streamwarden.config.assembly`); every problem is one line of the ConfigError."""
    config, problems = assemble(data, base)
    if config is None:
        raise invalid_config(origin, problems)
    return config
