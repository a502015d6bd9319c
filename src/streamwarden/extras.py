"""The package's optional parts: each extra of ``pip install 'streamwarden[...]'`` and the
Python modules it brings.

The core install (pyspark and the engine jar) runs files -> Parquet pipelines; a kind that
needs more names its extra here, and its check at config load calls :func:`require_extra`, so a
missing extra is one line naming the ``pip install`` to run, never an ``ImportError`` mid-run.
Only presence is checked (:func:`importlib.util.find_spec`): nothing is imported.

>>> missing_extra("kafka") in (None, "pip install 'streamwarden[kafka]'")
True
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from types import MappingProxyType

from streamwarden.errors import ConfigError

__all__ = ["EXTRAS", "install_command", "missing_extra", "require_extra"]

#: Each extra (``[project.optional-dependencies]`` of pyproject.toml, but ``all`` and ``dev``)
#: and the top-level modules it brings; a test checks the two agree.
EXTRAS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        # the Kafka sink's transactional producer and the admin client of the Kafka kinds' checks
        "kafka": ("confluent_kafka",),
        # Delta Lake sinks and the Delta history store (delta-spark's Python API)
        "delta": ("delta",),
        # the PostgreSQL history store
        "postgres": ("psycopg",),
        # `streamwarden report`'s charts
        "report": ("matplotlib",),
    }
)


def install_command(extra: str) -> str:
    """The command that installs ``extra``: ``pip install 'streamwarden[<extra>]'``."""
    return f"pip install 'streamwarden[{extra}]'"


def missing_extra(extra: str) -> str | None:
    """``None`` when every module of ``extra`` is installed, else the command that installs
    it. Raises :class:`KeyError` for a name that is no extra (a bug of the caller)."""
    modules = EXTRAS[extra]
    if all(importlib.util.find_spec(module) is not None for module in modules):
        return None
    return install_command(extra)


def require_extra(extra: str, who: str) -> None:
    """Raises :class:`ConfigError` when ``extra`` is not installed, in one line: ``<who> needs
    the <extra> extra: pip install 'streamwarden[<extra>]'``. ``who`` names what asked, as the
    config says it (``[source] kind = 'kafka'``)."""
    command = missing_extra(extra)
    if command is not None:
        raise ConfigError(f"{who} needs the {extra} extra: {command}")
