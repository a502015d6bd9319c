"""``doctor``: finds contradictions and missing deadlines in a pipeline's settings before it runs.

``findings`` is the vocabulary (a finding has a severity, what is wrong, and a plain fix);
``memory`` derives what the task process will ask for; ``checks`` runs every config check;
``checkpoint`` holds the checks of an existing checkpoint (pinned partitions, log files
Spark would trip over at restart);
``plan`` checks a streaming query's plan for stateful steps without a watermark.
``installation`` checks what a pipeline starts on (the class archive of Spark's JVM).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from streamwarden.doctor.findings import Finding, Severity, render_findings

if TYPE_CHECKING:
    from streamwarden.doctor.checks import diagnose

__all__ = ["Finding", "Severity", "diagnose", "render_findings"]


def __getattr__(name: str) -> Any:
    """``diagnose`` on first use: the checks read the config, which imports the operators and
    so Spark, which the command line must not load before a command runs."""
    if name != "diagnose":
        raise AttributeError(f"module 'streamwarden.doctor' has no attribute {name!r}")
    from streamwarden.doctor.checks import diagnose

    return diagnose
