"""What ``doctor`` reports: one finding per problem, with a severity and a plain fix."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Finding", "Severity", "render_findings"]


class Severity(StrEnum):
    """``error`` blocks ``run`` (exit 2); ``warning`` is printed and the run goes on."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Finding:
    """One problem: a stable ``code`` for tests and tools, what is wrong, and what to do."""

    code: str
    severity: Severity
    message: str
    fix: str
    lesson: str = ""

    def render(self) -> str:
        lesson = f" [{self.lesson}]" if self.lesson else ""
        return f"{self.severity.value}: {self.code}{lesson}: {self.message}\n  fix: {self.fix}"


def render_findings(findings: Sequence[Finding]) -> str:
    """Errors first, then warnings; a last line with the counts."""
    ordered = sorted(findings, key=lambda f: f.severity != Severity.ERROR)
    errors = sum(f.severity == Severity.ERROR for f in findings)
    lines = [f.render() for f in ordered]
    lines.append(f"{errors} error(s), {len(findings) - errors} warning(s)")
    return "\n".join(lines)
