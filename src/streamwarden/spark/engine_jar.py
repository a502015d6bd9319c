"""Locates the Java engine jar that ships inside the Python package."""

from __future__ import annotations

from pathlib import Path

from streamwarden.errors import EngineError

__all__ = ["engine_jar_path"]

_JAR = Path(__file__).resolve().parent.parent / "_engine" / "streamwarden-engine.jar"


def engine_jar_path() -> Path:
    """The engine jar; raises :class:`EngineError` with the fix if it was never built."""
    if not _JAR.is_file():
        raise EngineError(
            f"the Java engine jar is missing at {str(_JAR)!r}; build it with "
            "'scripts/build_engine.sh' (or run 'make test' / 'make demo', which build it)"
        )
    return _JAR
