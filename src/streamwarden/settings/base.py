"""What every part's own settings are built on: a part (an operator, a source kind, a sink
kind, a history store kind) declares one frozen, typed model of the settings it reads, in its
own module; the config assembles the sections from the registries of parts and gives each part
only its own section, with a :class:`~streamwarden.settings.context.RunContext`."""

from __future__ import annotations

from typing import ClassVar

from streamwarden.settings.types import Strict

__all__ = ["KindSettings", "Settings"]


class Settings(Strict):
    """One part's section of a config: frozen, unknown keys are errors."""


class KindSettings(Settings):
    """The section of a kind selected by its ``kind`` setting (``[source]``, ``[sinks.<name>]``,
    ``[history]``): each kind narrows ``kind`` to its own name.

    ``connections`` are the shared top-level sections the kind needs (``"kafka"``: the
    cluster's connection, which the run context carries); ``extra`` is the optional install
    (``pip install 'streamwarden[<extra>]'``) whose libraries the kind imports, checked when a
    config naming the kind is loaded."""

    kind: str
    connections: ClassVar[frozenset[str]] = frozenset()
    extra: ClassVar[str | None] = None
