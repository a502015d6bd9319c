"""A loaded config put on another Spark master (``streamwarden submit --master``). Loading
itself, the operator's check included, is :func:`streamwarden.config.load_config`."""

from __future__ import annotations

from streamwarden.config import PipelineConfig
from streamwarden.errors import UsageError
from streamwarden.settings.spark_settings import check_master

__all__ = ["on_master"]


def on_master(config: PipelineConfig, master: str) -> PipelineConfig:
    """``config`` run on ``master`` instead of its ``[spark] master`` (``streamwarden submit
    --master``); a :class:`UsageError` if Spark cannot start with ``master``."""
    try:
        check_master(master)
    except ValueError as exc:
        raise UsageError(f"--master: {exc}") from None
    spark = config.spark.model_copy(update={"master": master})
    return config.model_copy(update={"spark": spark})
