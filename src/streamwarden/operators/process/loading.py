"""Finds a config's processor class (``[process] processor = "module:Class"``) and makes the
instance a pipeline runs."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

from streamwarden.errors import ConfigError
from streamwarden.operators.process.processor import KeyedProcessor, check_processor

__all__ = ["load_processor"]


def load_processor(spec: str, python_path: Sequence[Path]) -> KeyedProcessor:
    """An instance of the class ``spec`` names, imported with ``python_path`` first on the
    module path; a :class:`ConfigError` says what is wrong (no module, no class, not a
    ``KeyedProcessor``, a state without a deadline, its constructor failing)."""
    module_name, _, class_name = spec.partition(":")
    for folder in reversed(python_path):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    where = f"process.processor {spec!r}"
    try:
        module = importlib.import_module(module_name)
    except ConfigError as exc:  # a state declared without a deadline, say
        raise ConfigError(f"{where}: {exc}") from None
    except ImportError as exc:
        searched = ", ".join(map(str, python_path)) or "(no process.python_path)"
        raise ConfigError(
            f"{where}: module {module_name!r} cannot be imported ({exc}); add its folder to "
            f"process.python_path (searched first: {searched})"
        ) from None
    except Exception as exc:  # the module's own code failed
        raise ConfigError(
            f"{where}: importing {module_name!r} raised {type(exc).__name__}: {exc}"
        ) from None
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, KeyedProcessor)):
        raise ConfigError(
            f"{where}: {module_name} has no KeyedProcessor subclass named {class_name!r}"
        )
    check_processor(cls)
    try:
        return cls()
    except Exception as exc:
        raise ConfigError(
            f"{where}: {class_name}() raised {type(exc).__name__}: {exc}; a pipeline's "
            "processor is made without arguments"
        ) from None
