"""Settings that no longer exist, refused by name with what replaces them (0.x keeps no silent
compatibility layer: a config written for an older version fails at load, saying what to
write instead)."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["refuse_removed"]


def refuse_removed(data: object, removed: Mapping[str, str], section: str) -> object:
    """``data`` (a section's raw values) unchanged; raises ValueError naming the first removed
    setting it holds and what replaces it. For a model's ``mode="before"`` validator."""
    if isinstance(data, Mapping):
        for name, instead in removed.items():
            if name in data:
                where = f"{section}.{name}" if section else name
                raise ValueError(f"{where} was removed: {instead}")
    return data
