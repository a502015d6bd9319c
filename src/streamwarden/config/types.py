"""The value types every config section shares: strict models, durations, sizes, paths."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer

from streamwarden.config.units import (
    OFF,
    format_duration,
    off_or,
    parse_duration,
    parse_memory,
    parse_size,
)

__all__ = ["ConfigPath", "Duration", "Memory", "OptionalDuration", "Size", "Strict"]

Duration = Annotated[
    timedelta, BeforeValidator(parse_duration), PlainSerializer(format_duration, return_type=str)
]
Size = Annotated[int, BeforeValidator(parse_size)]
Memory = Annotated[int, BeforeValidator(parse_memory)]
#: A duration that ``"off"`` (or YAML's null) turns off.
OptionalDuration = Annotated[
    timedelta | None,
    BeforeValidator(off_or(parse_duration)),
    PlainSerializer(lambda v: OFF if v is None else format_duration(v), return_type=str),
]
#: A file system path; given as text in a config file.
ConfigPath = Annotated[Path, Field(strict=False)]


class Strict(BaseModel):
    """A config section: frozen, and unknown keys are errors."""

    # strict: "yes" is not a boolean, nor "4" a number; paths, durations and sizes are parsed.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
