"""A pipeline's config, loaded and then checked by its operator, before Spark starts.

:mod:`streamwarden.config` checks what a config can check alone (types, units, which sections go
together); it does not import the operators, which sit above it. The configured operator then
checks the rest (``Operator.check``): a declared pattern is built with stand-in conditions, so a
pattern that cannot be built (a quantifier where none fits, an unknown stage in ``previous``...)
fails at load, with the config named, and not when the query starts. The ``where`` expressions
are compiled when the pipeline starts, where Spark is available.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from streamwarden.config import PipelineConfig, load_config, parse_config
from streamwarden.config.loader import invalid_config
from streamwarden.errors import ConfigError, UsageError
from streamwarden.settings.spark_settings import check_master

__all__ = [
    "check_with_operator",
    "load_pipeline_config",
    "on_master",
    "parse_pipeline_config",
]


def load_pipeline_config(path: str | Path) -> PipelineConfig:
    """:func:`~streamwarden.config.load_config`, then :func:`check_with_operator`."""
    config = load_config(path)
    check_with_operator(config, origin=str(path))
    return config


def parse_pipeline_config(data: dict[str, Any], *, origin: str = "<config>") -> PipelineConfig:
    """:func:`~streamwarden.config.parse_config`, then :func:`check_with_operator`."""
    config = parse_config(data, origin=origin)
    check_with_operator(config, origin=origin)
    return config


def check_with_operator(config: PipelineConfig, *, origin: str) -> None:
    """Raises :class:`ConfigError` (naming ``origin`` and what is wrong, e.g. a pattern's
    stage) if the configured operator cannot be built from ``config``
    (:meth:`~streamwarden.operators.base.Operator.check`)."""
    from streamwarden.operators import operator_of

    try:
        operator_of(config).check(config)
    except ConfigError as exc:
        raise invalid_config(origin, [str(exc)]) from None


def on_master(config: PipelineConfig, master: str) -> PipelineConfig:
    """``config`` run on ``master`` instead of its ``[spark] master`` (``streamwarden submit
    --master``); a :class:`UsageError` if Spark cannot start with ``master``."""
    try:
        check_master(master)
    except ValueError as exc:
        raise UsageError(f"--master: {exc}") from None
    spark = config.spark.model_copy(update={"master": master})
    return config.model_copy(update={"spark": spark})
