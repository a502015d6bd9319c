"""Can the pipeline reach what it reads and writes? Each source, sink and history store kind
checks itself (the plan's :meth:`~streamwarden.plan.PipelinePlan.checks`): a landing folder
exists, a broker answers, its topics exist, the connector jars are there. ``run`` raises the
first problem before Spark starts (:meth:`~streamwarden.plan.PipelinePlan.check_connections`: an
unreachable broker exits 1, a missing topic 2); ``doctor`` reports every problem as a finding."""

from __future__ import annotations

from streamwarden.config.model import PipelineConfig
from streamwarden.doctor.findings import Finding, Severity
from streamwarden.errors import (
    LandingMissingError,
    SourceError,
    StreamwardenError,
    UnreachableError,
)
from streamwarden.plan import PipelinePlan

__all__ = ["connection_findings"]


def connection_findings(config: PipelineConfig) -> list[Finding]:
    """Every problem of the source and the sinks with their servers and jars, one finding
    each. A landing folder that does not exist yet is not one: producers may make it before the
    run, which refuses it if they did not (``run`` checks it, exit 2)."""
    findings = []
    for what, check in PipelinePlan.of(config).checks():
        try:
            check()
        except (SourceError, LandingMissingError):
            continue
        except StreamwardenError as exc:
            code = "unreachable" if isinstance(exc, UnreachableError) else "io-setup"
            findings.append(
                Finding(
                    f"{what.replace(' ', '-')}-{code}",
                    Severity.ERROR,
                    str(exc),
                    "fix what the message names, then run again",
                )
            )
    return findings
