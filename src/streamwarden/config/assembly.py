"""The config assembled from the registries of parts: each part's section is validated by the
model its name selects, and only then the shell that holds them.

- ``[source]`` by the model of the source kind its ``kind`` names (``files`` by default);
- each ``[sinks.<output>]`` by the model of its sink kind (``parquet`` by default);
- ``[history]`` by the model of its store kind (``delta`` by default);
- ``[<operator>]`` by the model of the operator ``operator`` names (``sessions`` by default).

A setting that another kind of the same registry reads is refused naming the kind that was
chosen (it would be silently ignored otherwise), and a kind whose optional install is missing is
refused naming the ``pip install`` to run. Last, the operator checks what only it can
(``Operator.check``: a declared pattern is built with stand-in conditions, so a pattern that
cannot be built fails at load, not when the query starts). Nothing here names a kind or an
operator.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from streamwarden.config.model import PipelineConfig
from streamwarden.config.problems import describe
from streamwarden.errors import ConfigError
from streamwarden.extras import missing_extra
from streamwarden.history.base import HISTORY_KINDS
from streamwarden.operators.base import OPERATORS
from streamwarden.registry import Registry
from streamwarden.settings.base import KindSettings
from streamwarden.sinks.base import SINK_KINDS
from streamwarden.sources.base import SOURCE_KINDS, SeveralSources

__all__ = ["assemble", "sink_settings"]

#: The shell's field that holds the operator's section (written ``[<operator>]`` in a file).
_SECTION = "section"


class _Kind(Protocol):
    settings_model: type[KindSettings]


def assemble(data: dict[str, Any], base: Path | None) -> tuple[PipelineConfig | None, list[str]]:
    """The config ``data`` describes (paths relative to ``base``), or None and its problems."""
    context = {"base": base}
    problems: list[str] = []
    parts: dict[str, Any] = {}
    failed: set[str] = set()

    def part(key: str, value: Any) -> None:
        if value is None:
            failed.add(key)
        else:
            parts[key] = value

    if isinstance(data.get("source"), dict):
        part("source", _kind(data["source"], ("source",), SOURCE_KINDS, data, problems, context))
        if "sources" in data:
            problems.append("give either [source] or [sources.<name>] (several), not both")
    elif isinstance(data.get("sources"), dict):
        part("source", _several(data, problems, context))
    sinks = data.get("sinks")
    if isinstance(sinks, dict) and all(isinstance(s, dict) for s in sinks.values()):
        validated = {
            name: _kind(raw, ("sinks", name), SINK_KINDS, data, problems, context)
            for name, raw in sinks.items()
        }
        part("sinks", None if None in validated.values() else validated)
    if isinstance(data.get("history"), dict):
        part(
            "history", _kind(data["history"], ("history",), HISTORY_KINDS, data, problems, context)
        )
    operator = data.get("operator", "sessions")
    sections = set(OPERATORS.names())
    if isinstance(operator, str) and operator in sections:
        part(_SECTION, _operator_section(operator, data, problems, context))
        for other in sorted(sections - {operator}):
            if other in data:
                problems.append(f"[{other}] needs operator = {other!r} at the top level")
    shell = {
        k: v for k, v in data.items() if k not in sections and k not in failed and k != "sources"
    }
    if _SECTION in data:
        problems.append(f"{_SECTION}: unknown setting; remove it or check its spelling")
    shell |= parts
    try:
        config = PipelineConfig.model_validate(shell, context=context)
    except ValidationError as exc:
        problems += [describe(e, data) for e in exc.errors() if _reported(e, failed, parts)]
        return None, problems
    if problems:
        return None, problems
    try:  # what only the operator can check: a declared pattern's structure, say
        OPERATORS[config.operator].check(config)
    except ConfigError as exc:
        return None, [str(exc)]
    return config, []


def _several(
    data: dict[str, Any], problems: list[str], context: dict[str, Any]
) -> SeveralSources | None:
    """``[sources.<name>]``, each validated by the model of its kind, as one setting."""
    raw = data["sources"]
    if len(raw) < 2 or not all(isinstance(s, dict) for s in raw.values()):
        problems.append(
            "[sources.<name>] names two or more sources, each a section such as "
            '[sources.payments] kind = "kafka"; for one source, write [source]'
        )
        return None
    named = {
        name: _kind(own, ("sources", name), SOURCE_KINDS, data, problems, context)
        for name, own in raw.items()
    }
    if None in named.values():
        return None
    return SeveralSources(named={n: s for n, s in named.items() if s is not None})


def sink_settings(sinks: Mapping[str, Any], base: Path | None = None) -> dict[str, KindSettings]:
    """Each of ``sinks`` (output name -> its settings, as ``[sinks.<output>]`` holds them)
    validated by the model of its kind, as a config's sinks are; a
    :class:`~streamwarden.errors.ConfigError` lists every problem."""
    problems: list[str] = []
    data = {"sinks": dict(sinks)}
    validated: dict[str, KindSettings] = {}
    for name, raw in sinks.items():
        if not isinstance(raw, Mapping):
            problems.append(f"sinks.{name}: give a dict of settings, such as {{'path': ...}}")
            continue
        settings = _kind(dict(raw), ("sinks", name), SINK_KINDS, data, problems, {"base": base})
        if settings is not None:
            validated[name] = settings
    if problems:
        raise ConfigError("; ".join(problems))
    return validated


def _reported(err: Any, failed: set[str], parts: dict[str, Any]) -> bool:
    """Whether the shell's error is news: not a missing part whose own problems are listed."""
    loc = err["loc"]
    if loc and loc[0] in failed:
        return False
    return not (loc and loc[0] == _SECTION and _SECTION not in parts and err["type"] == "missing")


def _kind(
    raw: dict[str, Any],
    where: tuple[str, ...],
    registry: Registry[Any],
    data: dict[str, Any],
    problems: list[str],
    context: dict[str, Any],
) -> KindSettings | None:
    """The section ``raw`` at ``where``, validated by the model of the kind it names."""
    label = ".".join(where)
    kind = raw.get("kind", registry.default)
    if not isinstance(kind, str):
        problems.append(f"{label}.kind: must be a name, such as {registry.default!r}; got {kind!r}")
        return None
    try:
        registry.check(kind)
    except ValueError as exc:
        problems.append(f"{label}.kind: {exc}")
        return None
    model: type[KindSettings] = registry[kind].settings_model
    try:
        settings = model.model_validate(raw, context=context)
    except ValidationError as exc:
        for err in exc.errors():
            problems.append(
                _other_kinds_setting(err, label, kind, "kind" in raw, registry)
                or describe(err, data, where)
            )
        return None
    command = None if model.extra is None else missing_extra(model.extra)
    if command is not None:
        problems.append(f"[{label}] kind = {kind!r} needs the {model.extra} extra: {command}")
        return None
    return settings


def _other_kinds_setting(
    err: Any, label: str, kind: str, given: bool, registry: Registry[Any]
) -> str | None:
    """The line for a setting another kind reads, given to ``kind``; None for any other error."""
    if err["type"] != "extra_forbidden" or len(err["loc"]) != 1:
        return None
    name = err["loc"][0]
    owners = [n for n, k in registry.items() if n != kind and name in _fields(k)]
    if not owners:
        return None
    if given:
        return f"{label}.{name} is not a setting of kind {kind!r}; remove it"
    return (
        f"{label}.{name} is not a setting of kind {kind!r} (the default); remove it, or set "
        f'{label}.kind = "{owners[0]}"'
    )


def _fields(kind: _Kind) -> dict[str, Any]:
    model: type[BaseModel] = kind.settings_model
    return dict(model.model_fields)


def _operator_section(
    operator: str, data: dict[str, Any], problems: list[str], context: dict[str, Any]
) -> Any:
    """The ``[<operator>]`` section, validated by the operator's own model."""
    model = OPERATORS[operator].settings_model
    raw = data.get(operator)
    if raw is None and model.needs is not None:
        problems.append(f"operator {operator!r} needs a [{operator}] section with {model.needs}")
        return None
    try:
        return model.model_validate({} if raw is None else raw, context=context)
    except ValidationError as exc:
        problems += [describe(err, data, (operator,)) for err in exc.errors()]
        return None
