"""What ``doctor`` reports: one finding per problem, with a severity and a plain fix."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["FAILURE_MODES", "Finding", "Severity", "failure_mode_link", "render_findings"]

#: The page that explains each failure mode streamwarden prevents or detects, one anchor each.
FAILURE_MODES = "docs/failure-modes.md"


def failure_mode_link(anchor: str) -> str:
    """Where a failure mode is explained: ``docs/failure-modes.md#<anchor>``."""
    return f"{FAILURE_MODES}#{anchor}"


class Severity(StrEnum):
    """``error`` blocks ``run`` (exit 2); ``warning`` is printed and the run goes on."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Finding:
    """One problem: a stable ``code`` for tests and tools, what is wrong, what to do, and the
    anchor of the failure mode it guards against in docs/failure-modes.md (``see``)."""

    code: str
    severity: Severity
    message: str
    fix: str
    see: str = ""

    def render(self) -> str:
        text = f"{self.severity.value}: {self.code}: {self.message}\n  fix: {self.fix}"
        return f"{text}\n  see: {failure_mode_link(self.see)}" if self.see else text


def render_findings(findings: Sequence[Finding]) -> str:
    """Errors first, then warnings; a last line with the counts."""
    ordered = sorted(findings, key=lambda f: f.severity != Severity.ERROR)
    errors = sum(f.severity == Severity.ERROR for f in findings)
    lines = [f.render() for f in ordered]
    lines.append(f"{errors} error(s), {len(findings) - errors} warning(s)")
    return "\n".join(lines)
