"""The value types every config section shares: strict models, durations, sizes, paths.

A path in a config file is relative to the file's folder: the loader passes that folder as the
validation context (``{"base": folder}``) and :data:`ConfigPath` resolves against it, whatever
section the path is in. :data:`ConfigFolder` marks a folder the pipeline reads or writes
(landing, checkpoint, outputs), which the config checks are apart from one another."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationInfo,
)

from streamwarden.settings.units import (
    OFF,
    format_duration,
    off_or,
    parse_duration,
    parse_memory,
    parse_size,
)

__all__ = [
    "FOLDER",
    "ConfigFolder",
    "ConfigPath",
    "Duration",
    "Memory",
    "OptionalDuration",
    "Size",
    "Strict",
    "folders_of",
]

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


def _against_the_config(path: Path, info: ValidationInfo) -> Path:
    """``path`` resolved against the config file's folder (the ``base`` of the validation
    context) when relative; as written when the config has no file."""
    base = info.context.get("base") if isinstance(info.context, dict) else None
    if base is None or path.is_absolute():
        return path
    return Path(base) / path


class _Folder:
    """Marks a setting as a folder the pipeline reads or writes (see :func:`folders_of`)."""

    def __repr__(self) -> str:
        return "FOLDER"


#: The mark of a :data:`ConfigFolder` setting.
FOLDER = _Folder()

#: A file system path; given as text in a config file, relative to the file's folder.
ConfigPath = Annotated[Path, Field(strict=False), AfterValidator(_against_the_config)]
#: A folder the pipeline reads or writes (a landing folder, the checkpoint, an output): every
#: such folder of a config must be apart from the others (``settings.paths``).
ConfigFolder = Annotated[ConfigPath, FOLDER]


class Strict(BaseModel):
    """A config section: frozen, and unknown keys are errors."""

    # strict: "yes" is not a boolean, nor "4" a number; paths, durations and sizes are parsed.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def folders_of(section: BaseModel, where: str) -> dict[str, Path]:
    """The :data:`ConfigFolder` settings given in ``section`` (at config path ``where``), by
    their config path (``sinks.sessions.path``)."""
    found: dict[str, Path] = {}
    for name, field in type(section).model_fields.items():
        value = getattr(section, name)
        if isinstance(value, Path) and (FOLDER in field.metadata or _marked(field.annotation)):
            found[f"{where}.{name}"] = value
    return found


def _marked(annotation: Any) -> bool:
    """Whether ``annotation`` (``ConfigFolder | None``, say) holds the folder mark."""
    if get_origin(annotation) is Annotated:
        return any(m is FOLDER for m in annotation.__metadata__)
    return any(_marked(arg) for arg in get_args(annotation))
