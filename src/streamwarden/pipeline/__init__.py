"""The pipeline runner: source -> validation -> operator -> sinks, with one checkpoint.

``Pipeline`` and ``RunResult`` load on first use (they bring the runner's Spark plumbing), so
that importing the package for its lighter modules (ownership, supervisor rules) stays fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from streamwarden.pipeline.runner import Pipeline, RunResult

__all__ = ["Pipeline", "RunResult"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module("streamwarden.pipeline.runner"), name)
    globals()[name] = value  # once loaded, a plain attribute
    return value
