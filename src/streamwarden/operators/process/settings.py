"""``[process]``: which keyed processor a pipeline runs (``operator = "process"``)."""

from __future__ import annotations

import re
from datetime import timedelta

from pydantic import Field, field_validator, model_validator

from streamwarden.operators.settings import OperatorSettings
from streamwarden.settings import defaults
from streamwarden.settings.types import ConfigPath, Duration, OptionalDuration

__all__ = ["ProcessConfig"]

_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


class ProcessConfig(OperatorSettings):
    """A keyed processor of your own over the validated events: ``processor`` names its class
    as ``"module:Class"`` (instantiated without arguments), importable from ``python_path``
    (folders relative to the config file) or the installed packages. Its rows go to
    ``[sinks.output]``; the events it cannot take to the dead letters."""

    outputs = ("output",)
    needs = 'processor = "module:Class"'

    processor: str
    python_path: list[ConfigPath] = Field(default_factory=list)
    max_out_of_orderness: Duration = defaults.MAX_OUT_OF_ORDERNESS
    idle_timeout: OptionalDuration = defaults.IDLE_TIMEOUT

    @field_validator("processor")
    @classmethod
    def _spec(cls, value: str) -> str:
        if not _SPEC.match(value):
            raise ValueError(
                f"give the processor as 'module:Class' (e.g. 'alerts:BigPaymentAlert'), got "
                f"{value!r}"
            )
        return value

    @model_validator(mode="after")
    def _positive(self) -> ProcessConfig:
        if self.idle_timeout is not None and self.idle_timeout <= timedelta(0):
            raise ValueError("process.idle_timeout must be > 0, or 'off' to turn it off")
        return self
